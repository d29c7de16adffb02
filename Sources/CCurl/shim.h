#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

// Swift cannot call C variadic functions, so curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are
// wrapped once per argument type Parley passes. Each wrapper is a plain call; curl's own checks still apply.

static inline CURLcode parley_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_ALL); }

static inline CURLcode parley_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode parley_curl_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// Strings are copied by libcurl (except CURLOPT_POSTFIELDS, which Parley does not use).
static inline CURLcode parley_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// Blob options (CURLOPT_SSLCERT_BLOB, CURLOPT_SSLKEY_BLOB): libcurl copies the bytes (CURL_BLOB_COPY), so they
/// need not outlive the call.
static inline CURLcode parley_curl_easy_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return curl_easy_setopt(handle, option, &blob);
}

static inline CURLcode parley_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode parley_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
static inline CURLcode parley_curl_easy_setopt_write(CURL *handle, CURLoption option, curl_write_callback value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode parley_curl_easy_setopt_read(CURL *handle, curl_read_callback value) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, value);
}

static inline CURLcode parley_curl_easy_setopt_seek(CURL *handle, curl_seek_callback value) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, value);
}

/// CURLOPT_OPENSOCKETFUNCTION: the callback sees each address before curl connects to it (and may refuse it).
static inline CURLcode parley_curl_easy_setopt_opensocket(CURL *handle, curl_opensocket_callback value) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, value);
}

/// The IP address of `address` into `out` (16 bytes of room): returns 4 (IPv4), 16 (IPv6) or 0 (another family).
static inline int parley_curl_sockaddr_ip(const struct curl_sockaddr *address, unsigned char *out) {
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&address->addr;
        __builtin_memcpy(out, &v4->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&address->addr;
        __builtin_memcpy(out, &v6->sin6_addr, 16);
        return 16;
    }
    return 0;
}

static inline CURLcode parley_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode parley_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The libcurl version in use (0xXXYYZZ), which may be newer than the headers.
static inline unsigned int parley_curl_version_num(void) { return curl_version_info(CURLVERSION_NOW)->version_num; }
