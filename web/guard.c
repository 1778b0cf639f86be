/*
 * guard.c - Host, Origin, CSRF and token checks (see guard.h).
 */
#include "web/guard.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

static void to_hex(const unsigned char *b, size_t n, char *out) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = hex[b[i] >> 4];
    out[2 * i + 1] = hex[b[i] & 15];
  }
  out[2 * n] = '\0';
}

static bool equal_secret(const char *a, const char *b) {
  size_t n = strlen(a);
  if (n == 0 || strlen(b) != n) return false;
  return CRYPTO_memcmp(a, b, n) == 0;
}

bool sp_web_host_name(const char *authority, char *out, size_t cap) {
  if (!authority || cap == 0) return false;
  size_t n;
  if (authority[0] == '[') {
    const char *close = strchr(authority, ']');
    if (!close) return false;
    n = (size_t)(close - authority) + 1;
  } else {
    n = strcspn(authority, ":/");
  }
  if (n == 0 || n >= cap) return false;
  for (size_t i = 0; i < n; i++) out[i] = (char)tolower((unsigned char)authority[i]);
  out[n] = '\0';
  return true;
}

static bool is_wildcard(const char *h) {
  return strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 || strcmp(h, "[::]") == 0 ||
         strcmp(h, "*") == 0 || h[0] == '\0';
}

static int add_host(sp_web_guard *g, const char *h, sp_err *err) {
  char name[256];
  if (!sp_web_host_name(h, name, sizeof name))
    return sp_err_set(err, SP_EINVAL, "dashboard: bad host name '%s'", h);
  if (is_wildcard(name)) return SP_OK;
  if (g->nhosts == SP_WEB_GUARD_MAX_HOSTS)
    return sp_err_set(err, SP_ELIMIT, "dashboard: more than %d allowed hosts",
                      SP_WEB_GUARD_MAX_HOSTS);
  snprintf(g->hosts[g->nhosts++], sizeof g->hosts[0], "%s", name);
  return SP_OK;
}

int sp_web_guard_init(sp_web_guard *g, const char *listen_host, const char *token,
                      const char *const *extra_hosts, int nextra, sp_err *err) {
  memset(g, 0, sizeof *g);
  unsigned char rnd[32];
  if (RAND_bytes(rnd, sizeof rnd) != 1)
    return sp_err_set(err, SP_EINTERNAL, "dashboard: no random bytes for the CSRF token");
  to_hex(rnd, sizeof rnd, g->csrf);
  if (listen_host && *listen_host) {
    /* "::1" as bound is "[::1]" in a Host header */
    char bracketed[300];
    bool v6 = strchr(listen_host, ':') && listen_host[0] != '[';
    snprintf(bracketed, sizeof bracketed, v6 ? "[%s]" : "%s", listen_host);
    int rc = add_host(g, bracketed, err);
    if (rc) return rc;
  }
  for (int i = 0; i < nextra; i++) {
    int rc = add_host(g, extra_hosts[i], err);
    if (rc) return rc;
  }
  if (token && *token) {
    if (strlen(token) >= sizeof g->token)
      return sp_err_set(err, SP_EINVAL, "dashboard: the token is longer than %zu bytes",
                        sizeof g->token - 1);
    snprintf(g->token, sizeof g->token, "%s", token);
    static const char label[] = "shardplan dashboard session";
    unsigned char mac[32];
    size_t maclen = 0;
    if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, token, strlen(token),
                   (const unsigned char *)label, sizeof label - 1, mac, sizeof mac, &maclen) ||
        maclen != sizeof mac)
      return sp_err_set(err, SP_EINTERNAL, "dashboard: HMAC-SHA256 failed");
    to_hex(mac, sizeof mac, g->session);
  }
  return SP_OK;
}

bool sp_web_guard_host_ok(const sp_web_guard *g, const char *host_header) {
  char name[256];
  if (!sp_web_host_name(host_header, name, sizeof name)) return false;
  if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0 ||
      strcmp(name, "[::1]") == 0)
    return true;
  for (int i = 0; i < g->nhosts; i++)
    if (strcmp(name, g->hosts[i]) == 0) return true;
  return false;
}

/* The authority of "http://host:port/path" ("host:port"), or NULL. */
static const char *authority_of(const char *url) {
  const char *p = strstr(url, "://");
  return p ? p + 3 : NULL;
}

bool sp_web_guard_origin_ok(const sp_web_guard *g, const sp_web_request *req) {
  const char *src = req->origin && strcmp(req->origin, "null") != 0 ? req->origin : req->referer;
  if (!src || !req->host) return false;
  const char *auth = authority_of(src);
  if (!auth) return false;
  /* Compare host AND port with the Host header: the same origin, not just the same machine. */
  size_t n = strcspn(auth, "/?#");
  return strlen(req->host) == n && strncasecmp(auth, req->host, n) == 0 &&
         sp_web_guard_host_ok(g, req->host);
}

bool sp_web_guard_csrf_ok(const sp_web_guard *g, const char *value) {
  return value && equal_secret(g->csrf, value);
}

bool sp_web_guard_token_required(const sp_web_guard *g) { return g->token[0] != '\0'; }

bool sp_web_guard_token_ok(const sp_web_guard *g, const char *given) {
  return sp_web_guard_token_required(g) && given && equal_secret(g->token, given);
}

bool sp_web_guard_authenticated(const sp_web_guard *g, const sp_web_request *req) {
  if (!sp_web_guard_token_required(g)) return true;
  if (req->authorization && strncmp(req->authorization, "Bearer ", 7) == 0 &&
      equal_secret(g->token, req->authorization + 7))
    return true;
  char cookie[80];
  return sp_web_cookie_get(req->cookie, SP_WEB_SESSION_COOKIE, cookie, sizeof cookie) == 0 &&
         equal_secret(g->session, cookie);
}
