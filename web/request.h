/*
 * request.h - one dashboard request and its response, independent of the HTTP library.
 *
 * server.c fills an sp_web_request from libmicrohttpd and sends the sp_web_response back;
 * the router (router.h) maps one to the other with no socket involved, so tests and the fuzz
 * target drive the whole dashboard through sp_web_handle. Strings in a request are borrowed
 * from the caller for the duration of the call; a response owns its body and header values
 * (sp_web_response_free).
 */
#ifndef SP_WEB_REQUEST_H
#define SP_WEB_REQUEST_H

#include <stddef.h>

#include "ir/strbuf.h"

#define SP_WEB_MAX_ARGS 32        /* query or form fields kept; later ones are ignored */
#define SP_WEB_MAX_BODY 16384     /* bytes of a POST body accepted */

typedef struct sp_web_arg {
  const char *key, *value;
} sp_web_arg;

typedef struct sp_web_request {
  const char *method;             /* "GET", "HEAD", "POST", ... */
  const char *path;               /* "/plans/abc", no query */
  int nargs;
  sp_web_arg args[SP_WEB_MAX_ARGS];   /* decoded query arguments */
  int nform;
  sp_web_arg form[SP_WEB_MAX_ARGS];   /* decoded application/x-www-form-urlencoded body */
  const char *host, *origin, *referer, *cookie, *authorization;  /* headers, NULL if absent */
} sp_web_request;

typedef struct sp_web_response {
  int status;
  const char *content_type;       /* static string */
  sp_strbuf body;
  char *set_cookie;               /* malloc'd Set-Cookie value, or NULL */
  char *location;                 /* malloc'd Location for redirects, or NULL */
  int retry_after_s;              /* > 0: a Retry-After header (come back in that many s) */
} sp_web_response;

void sp_web_response_init(sp_web_response *r);
void sp_web_response_free(sp_web_response *r);

/* The value of query argument / form field `key`, or NULL. */
const char *sp_web_arg_get(const sp_web_request *req, const char *key);
const char *sp_web_form_get(const sp_web_request *req, const char *key);

/* Splits an x-www-form-urlencoded `body` in place (it is modified: '&' and '=' become NUL,
 * escapes are decoded) into at most SP_WEB_MAX_ARGS fields. Returns the number kept. */
int sp_web_parse_form(char *body, sp_web_arg *out, int max);

/* Copies the value of cookie `name` from a Cookie header into `out` (NUL-terminated, cut to
 * `cap`); 0 when found, -1 otherwise. */
int sp_web_cookie_get(const char *header, const char *name, char *out, size_t cap);

#endif /* SP_WEB_REQUEST_H */
