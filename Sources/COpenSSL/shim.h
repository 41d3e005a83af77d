#ifndef HKD_COPENSSL_SHIM_H
#define HKD_COPENSSL_SHIM_H
// OpenSSL 3 (Debian libssl-dev) for Swift. Many of its calls are macros over SSL_CTX_ctrl, SSL_ctrl or
// BIO_ctrl, or variadic functions, which Swift cannot call: each is wrapped below in a static inline function.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/// SSL_CTX_set_min_proto_version (a macro).
static inline int hk_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

/// SSL_set_tlsext_host_name (a macro): the SNI name a client sends.
static inline int hk_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// SSL_CTX_set_mode (a macro).
static inline long hk_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }

/// SSL_CTX_set_session_cache_mode (a macro).
static inline long hk_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

/// Turns off TLS 1.2 session tickets (SSL_OP_NO_TICKET is a macro over a 64-bit shift Swift does not import).
static inline void hk_SSL_CTX_disable_tickets(SSL_CTX *ctx) { SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET); }

/// A new empty memory BIO (BIO_s_mem), whose reads report "retry" when empty.
static inline BIO *hk_BIO_new_mem(void) { return BIO_new(BIO_s_mem()); }

/// A P-256 key (EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen).
static inline EVP_PKEY *hk_EVP_EC_gen_P256(void) { return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"); }

/// Adds an X509v3 extension given as OpenSSL's configuration text (e.g. "DNS:localhost,IP:127.0.0.1" for
/// NID_subject_alt_name) to a self-signed certificate. Returns 1 on success.
static inline int hk_X509_add_self_extension(X509 *cert, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL) return 0;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

/// ERR_GET_REASON (a macro or inline function depending on the version).
static inline int hk_ERR_GET_REASON(unsigned long error) { return ERR_GET_REASON(error); }

/// OPENSSL_free (a macro).
static inline void hk_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

#endif
