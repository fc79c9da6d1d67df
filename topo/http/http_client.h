/*
 * http_client (topo/http/): the one way topognn talks HTTP (libcurl), shared by the
 * Prometheus client (telemetry) and the slurmrestd client (report_rest).
 *
 * Both send a secret (a bearer token or basic credentials to Prometheus, a
 * JWT to slurmrestd), so both get the same guard rails:
 *   - the base URL is checked before use: http://, https:// or (where the
 *     caller allows it) unix:/path; file://, gopher:// and the rest of
 *     libcurl's schemes are refused, as are credentials in the URL and
 *     blanks, queries or fragments;
 *   - plain http:// to a host that is not this machine (localhost, 127/8,
 *     ::1) is refused unless the caller allows it (HTTP_PLAIN_REMOTE):
 *     a token sent that way can be read off the wire;
 *   - libcurl may follow no redirect and speak no protocol but http/https;
 *   - every curl_easy_setopt is checked: a libcurl that refuses one (too old,
 *     built without a feature) fails the request instead of quietly sending
 *     it without its timeout or protocol limit;
 *   - the reply is capped at a size the caller names.
 */
#ifndef HTTP_CLIENT_H
#define HTTP_CLIENT_H

#include <curl/curl.h>
#include <stddef.h>

#include "topo_error.h"

#define HTTP_UNIX 0x1u         /* accept "unix:/path/to/socket" */
#define HTTP_PLAIN_REMOTE 0x2u /* accept http:// to another host */

/* The longest base URL accepted; a client's buffer for base URL + API path
 * holds HTTP_MAX_URL + HTTP_MAX_PATH bytes, so nothing is cut. */
#define HTTP_MAX_URL 2048
#define HTTP_MAX_PATH 256

/* Check base URL `url` for the option named `what` (for the message, e.g.
 * "TelemetryURL"): its length (at most HTTP_MAX_URL), scheme, no
 * credentials, blanks, query or fragment, and plain http only to this
 * machine unless HTTP_PLAIN_REMOTE. Returns 0, or -1 with err saying
 * what is wrong. */
int http_check_url(const char *url, const char *what, unsigned flags, topo_error *err);

/* Is `url` addressed to this machine: unix:/path, or http(s)://HOST[:port]/...
 * whose HOST is literally "localhost" (any case), an IPv4 address in
 * 127.0.0.0/8 written as four decimal numbers, or the IPv6 loopback ([::1]).
 * A name that merely starts like one (127.evil.example, localhost.evil) is
 * not: names are not resolved here. */
int http_is_local(const char *url);

/* A reply body being received: at most `max` bytes, NUL-terminated. */
typedef struct http_body {
	char *p;
	size_t len, cap, max;
	int too_big; /* the reply went over max and was cut */
} http_body;

/* Forget what was received (keeps the buffer). */
void http_body_reset(http_body *b);
void http_body_free(http_body *b);

/* One GET. `url` is the full http(s) URL; unix_socket (or NULL) the socket
 * to send it through; headers (or NULL) extra request headers;
 * basic_userpwd (or NULL) "user:password" for basic authentication. */
typedef struct http_get {
	const char *url;
	const char *unix_socket;
	struct curl_slist *headers;
	const char *basic_userpwd;
	long connect_timeout_ms, timeout_ms;
	char *errbuf; /* CURL_ERROR_SIZE bytes for libcurl's message, or NULL */
} http_get;

/* Reset handle h and set it up for rq, receiving into body. Returns 0, or
 * -1 when libcurl refused an option. */
int http_setup(CURL *h, const http_get *rq, http_body *body);

#endif
