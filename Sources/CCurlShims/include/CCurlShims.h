// Typed forwarders for libcurl's variadic curl_easy_setopt / curl_easy_getinfo, which Swift
// cannot call. The HTTPClient module is the only caller.
#ifndef ENTITLE_CCURLSHIMS_H
#define ENTITLE_CCURLSHIMS_H
#include <stddef.h>
#include <curl/curl.h>

CURLcode entitle_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode entitle_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode entitle_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode entitle_curl_set_size(CURL *handle, CURLoption option, curl_off_t value);

/// The body callback: appends to the `entitle_curl_body` passed as write data.
typedef size_t (*entitle_curl_write_callback)(char *data, size_t size, size_t count, void *context);
CURLcode entitle_curl_set_write_callback(CURL *handle, entitle_curl_write_callback callback);

/// The header callback: gets each response header line (`CURLOPT_HEADERFUNCTION`).
CURLcode entitle_curl_set_header_callback(CURL *handle, entitle_curl_write_callback callback);

/// The progress callback (`CURLOPT_XFERINFOFUNCTION`): a non-zero answer aborts the transfer
/// (a caller that gave up).
CURLcode entitle_curl_set_progress_callback(CURL *handle, curl_xferinfo_callback callback);

long entitle_curl_response_code(CURL *handle);
#endif
