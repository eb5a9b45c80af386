#include "CShims.h"
#include <openssl/ec.h>
#include <openssl/crypto.h>
#include <openssl/x509v3.h>

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
