#include "CShims.h"
#include <openssl/ec.h>
#include <openssl/crypto.h>
#include <openssl/x509v3.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

EVP_PKEY *entitle_generate_p256_key(void) { return EVP_EC_gen("P-256"); }

void entitle_openssl_free(void *pointer) { OPENSSL_free(pointer); }

long entitle_bio_mem_data(BIO *bio, const char **data) {
    char *pointer = NULL;
    long length = BIO_get_mem_data(bio, &pointer);
    *data = pointer;
    return length;
}

STACK_OF(X509) *entitle_x509_stack_new(void) { return sk_X509_new_null(); }
int entitle_x509_stack_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }
int entitle_x509_stack_count(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *entitle_x509_stack_at(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void entitle_x509_stack_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
void entitle_x509_stack_free_all(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }

int entitle_x509_name_print_rfc2253(BIO *bio, const X509_NAME *name) {
    return X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
}

char *entitle_ocsp_responder_url(X509 *certificate) {
    STACK_OF(OPENSSL_STRING) *urls = X509_get1_ocsp(certificate);
    char *first = NULL;
    if (urls != NULL && sk_OPENSSL_STRING_num(urls) > 0) first = OPENSSL_strdup(sk_OPENSSL_STRING_value(urls, 0));
    X509_email_free(urls);
    return first;
}

EVP_PKEY *entitle_rsa_public_key(const unsigned char *modulus, size_t modulus_length, const unsigned char *exponent,
                                 size_t exponent_length) {
    EVP_PKEY *key = NULL;
    BIGNUM *n = BN_bin2bn(modulus, (int)modulus_length, NULL);
    BIGNUM *e = BN_bin2bn(exponent, (int)exponent_length, NULL);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (n != NULL && e != NULL && builder != NULL && context != NULL &&
        OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, n) == 1 &&
        OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, e) == 1 &&
        (params = OSSL_PARAM_BLD_to_param(builder)) != NULL && EVP_PKEY_fromdata_init(context) == 1) {
        if (EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(builder);
    EVP_PKEY_CTX_free(context);
    BN_free(n);
    BN_free(e);
    return key;
}

int entitle_rsa_bits(const EVP_PKEY *key) {
    return EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA ? EVP_PKEY_get_bits(key) : 0;
}

EVP_PKEY *entitle_rsa_generate(unsigned int bits) {
    return EVP_RSA_gen(bits);
}

int entitle_rsa_component(const EVP_PKEY *key, int which, unsigned char *out, size_t capacity) {
    BIGNUM *value = NULL;
    const char *name = which == 0 ? OSSL_PKEY_PARAM_RSA_N : OSSL_PKEY_PARAM_RSA_E;
    if (EVP_PKEY_get_bn_param(key, name, &value) != 1 || value == NULL) return -1;
    int length = BN_num_bytes(value);
    int written = (length >= 0 && (size_t)length <= capacity) ? BN_bn2bin(value, out) : -1;
    BN_free(value);
    return written;
}
