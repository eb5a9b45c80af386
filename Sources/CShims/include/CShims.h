// Functions for the OpenSSL 3 macros that Swift cannot call directly.
// Each one is a one-line forwarder; the Crypto module is the only caller.
#ifndef ENTITLE_CSHIMS_H
#define ENTITLE_CSHIMS_H

#include <stddef.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/bio.h>

/// A fresh P-256 key pair (`EVP_EC_gen("P-256")`), or NULL.
EVP_PKEY *entitle_generate_p256_key(void);

/// `OPENSSL_free`.
void entitle_openssl_free(void *pointer);

/// `BIO_get_mem_data`: the bytes written to a memory BIO so far.
long entitle_bio_mem_data(BIO *bio, const char **data);

/// `sk_X509_*` for the untrusted-intermediates stack and the built chain.
STACK_OF(X509) *entitle_x509_stack_new(void);
int entitle_x509_stack_push(STACK_OF(X509) *stack, X509 *certificate);
int entitle_x509_stack_count(const STACK_OF(X509) *stack);
X509 *entitle_x509_stack_at(const STACK_OF(X509) *stack, int index);
/// Frees the stack only; the certificates stay owned by their callers.
void entitle_x509_stack_free(STACK_OF(X509) *stack);
/// Frees the stack and releases one reference on each certificate (for `X509_STORE_CTX_get1_chain`).
void entitle_x509_stack_free_all(STACK_OF(X509) *stack);

/// Writes `name` to `bio` in RFC 2253 form (`XN_FLAG_RFC2253` is a macro). Returns the length or -1.
int entitle_x509_name_print_rfc2253(BIO *bio, const X509_NAME *name);

/// The first OCSP responder URL of the certificate's Authority Information Access, or NULL.
/// Free with `entitle_openssl_free`.
char *entitle_ocsp_responder_url(X509 *certificate);

/// An RSA public key from its modulus and public exponent (big-endian bytes, as a JWK's `n` and
/// `e`), through `EVP_PKEY_fromdata`; NULL when OpenSSL refuses them.
EVP_PKEY *entitle_rsa_public_key(const unsigned char *modulus, size_t modulus_length, const unsigned char *exponent,
                                 size_t exponent_length);

/// The RSA key's size in bits, 0 when it is not an RSA key.
int entitle_rsa_bits(const EVP_PKEY *key);

/// A new RSA key of `bits` bits with the public exponent 65537; NULL on failure.
EVP_PKEY *entitle_rsa_generate(unsigned int bits);

/// Writes the RSA key's modulus (`which` 0) or public exponent (1) big-endian into `out`
/// (`capacity` bytes); answers the length, or -1 when the key has no such part or it does not fit.
int entitle_rsa_component(const EVP_PKEY *key, int which, unsigned char *out, size_t capacity);

#endif
