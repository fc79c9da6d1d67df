/* http_client: checked libcurl setup shared by the HTTP clients (see http_client.h). */
#include "http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The host part of an http(s) URL, copied into buf; "" when there is none. */
static void url_host(const char *url, char *buf, size_t len)
{
	const char *p = strstr(url, "://"), *end;

	buf[0] = '\0';
	if (!p)
		return;
	p += 3;
	if (*p == '[') { /* [v6 literal] */
		end = strchr(p, ']');
		if (end && (size_t)(end - p - 1) < len)
			snprintf(buf, len, "%.*s", (int)(end - p - 1), p + 1);
		return;
	}
	end = p + strcspn(p, ":/");
	if ((size_t)(end - p) < len)
		snprintf(buf, len, "%.*s", (int)(end - p), p);
}

int http_is_local(const char *url)
{
	char host[256];
	struct in_addr v4;
	struct in6_addr v6;

	if (!strncmp(url, "unix:", 5))
		return 1;
	url_host(url, host, sizeof(host));
	if (!strcasecmp(host, "localhost"))
		return 1;
	/* inet_pton takes exactly four decimal numbers 0-255 (no "127.1", no
	 * octal or hex, nothing after them) */
	if (inet_pton(AF_INET, host, &v4) == 1)
		return (ntohl(v4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

int http_check_url(const char *url, const char *what, unsigned flags, topo_error *err)
{
	int is_unix = !strncmp(url, "unix:", 5), is_http = !strncmp(url, "http://", 7);
	size_t len = strlen(url);
	const char *auth, *slash;

	if (len > HTTP_MAX_URL) {
		topo_error_set(err, "", 0, "%s \"%.40s...\" is %zu characters long; at most %d are accepted",
			       what, url, len, HTTP_MAX_URL);
		return -1;
	}
	if (is_unix && (flags & HTTP_UNIX)) {
		if (url[5] == '/')
			return 0;
		topo_error_set(err, "", 0, "%s \"%s\" must name the socket by an absolute path (unix:/path)",
			       what, url);
		return -1;
	}
	if (!is_http && strncmp(url, "https://", 8) != 0) {
		topo_error_set(err, "", 0, "%s \"%s\" must start with http:// or https://%s", what, url,
			       flags & HTTP_UNIX ? " (or be unix:/path)" : "");
		return -1;
	}
	auth = strstr(url, "//") + 2;
	slash = strchr(auth, '/');
	if (memchr(auth, '@', slash ? (size_t)(slash - auth) : strlen(auth))) {
		topo_error_set(err, "", 0, "%s must not carry credentials in the URL", what);
		return -1;
	}
	if (strpbrk(url, " \t\r\n?#")) {
		topo_error_set(err, "", 0, "%s \"%s\" must be a base URL without blanks, query or fragment",
			       what, url);
		return -1;
	}
	if (is_http && !(flags & HTTP_PLAIN_REMOTE) && !http_is_local(url)) {
		topo_error_set(err, "", 0,
			       "%s \"%s\" is plain http to another host: the token would cross the network "
			       "unencrypted; use https:// (or allow plain http explicitly)", what, url);
		return -1;
	}
	return 0;
}

void http_body_reset(http_body *b)
{
	b->len = 0;
	b->too_big = 0;
	if (b->p)
		b->p[0] = '\0';
}

void http_body_free(http_body *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *user)
{
	http_body *b = user;
	size_t n = size * nmemb;

	if (n > b->max - b->len) {
		b->too_big = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *nb;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(nb = realloc(b->p, cap)))
			return 0;
		b->p = nb;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

int http_setup(CURL *h, const http_get *rq, http_body *body)
{
	int bad = 0;

	curl_easy_reset(h);
	bad |= curl_easy_setopt(h, CURLOPT_URL, rq->url) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, rq->connect_timeout_ms) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, rq->timeout_ms) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "") != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, body) != CURLE_OK;
#if LIBCURL_VERSION_NUM >= 0x075500
	bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
#else
	bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS)) != CURLE_OK;
#endif
	if (rq->unix_socket)
		bad |= curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, rq->unix_socket) != CURLE_OK;
	if (rq->headers)
		bad |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers) != CURLE_OK;
	if (rq->basic_userpwd) {
		bad |= curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) != CURLE_OK;
		bad |= curl_easy_setopt(h, CURLOPT_USERPWD, rq->basic_userpwd) != CURLE_OK;
	}
	if (rq->errbuf) {
		rq->errbuf[0] = '\0';
		bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, rq->errbuf) != CURLE_OK;
	}
	return bad ? -1 : 0;
}
