/*
 * guard.h - the dashboard's safety checks.
 *
 *   - Host: the Host header's name must be a loopback name (localhost, 127.0.0.1, [::1]), the
 *     address the dashboard listens on, or a name the operator allowed (--http-allow-host).
 *     This defeats DNS rebinding: a page on another site that resolves its name to 127.0.0.1
 *     still sends its own name as Host. Ports are not compared (a container's port is mapped).
 *   - Origin: a POST must carry Origin (or, failing that, Referer) naming the same host as the
 *     Host header.
 *   - CSRF: a POST must carry the form field `csrf` equal to this daemon's token, a random
 *     value made at start and written into every form.
 *   - Token (--token-file): when set, every page but /healthz and /static/ needs either
 *     `Authorization: Bearer TOKEN` or the session cookie, which POST /login sets once the
 *     token is given (HttpOnly, SameSite=Strict; its value is an HMAC of the token, so the
 *     token itself never sits in the browser).
 * Comparisons of secrets are constant-time. A guard is immutable after sp_web_guard_init and
 * may be read from any thread.
 */
#ifndef SP_WEB_GUARD_H
#define SP_WEB_GUARD_H

#include <stdbool.h>

#include "ir/err.h"
#include "web/request.h"

#define SP_WEB_GUARD_MAX_HOSTS 8
#define SP_WEB_SESSION_COOKIE "shardplan_session"

typedef struct sp_web_guard {
  char csrf[65];                  /* hex */
  char session[65];               /* hex; empty when no token is required */
  char token[256];                /* empty when none */
  int nhosts;
  char hosts[SP_WEB_GUARD_MAX_HOSTS][256];  /* allowed host names besides loopback */
} sp_web_guard;

/* `listen_host` is the address bound ("127.0.0.1", "0.0.0.0", "::"); a wildcard is not an
 * allowed Host name. `token` may be NULL. `extra_hosts` may be NULL. */
int sp_web_guard_init(sp_web_guard *g, const char *listen_host, const char *token,
                      const char *const *extra_hosts, int nextra, sp_err *err);

bool sp_web_guard_host_ok(const sp_web_guard *g, const char *host_header);
bool sp_web_guard_origin_ok(const sp_web_guard *g, const sp_web_request *req);
bool sp_web_guard_csrf_ok(const sp_web_guard *g, const char *value);
bool sp_web_guard_token_required(const sp_web_guard *g);
/* Bearer header or session cookie present and right (always true without a token). */
bool sp_web_guard_authenticated(const sp_web_guard *g, const sp_web_request *req);
/* Whether `given` is the token (for POST /login). */
bool sp_web_guard_token_ok(const sp_web_guard *g, const char *given);

/* The host name part of a Host header or of an origin URL's authority ("[::1]:80" ->
 * "[::1]", "Example.com:8080" -> "example.com"), lower-cased into `out`. false if it does
 * not fit or is empty. */
bool sp_web_host_name(const char *authority, char *out, size_t cap);

#endif /* SP_WEB_GUARD_H */
