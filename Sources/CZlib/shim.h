#ifndef HKD_CZLIB_SHIM_H
#define HKD_CZLIB_SHIM_H
// zlib for Swift. deflateInit2/inflateInit2 are macros, which Swift cannot call: wrap them.
#define ZLIB_CONST
#include <zlib.h>

static inline int hk_deflateInit2(z_streamp strm, int level, int windowBits) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

static inline int hk_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}

#endif
