// http-parser 2.9 (Debian's libhttp-parser-dev): the HTTP/1.1 request parser of hkd's HTTP listener.
#include <http_parser.h>
