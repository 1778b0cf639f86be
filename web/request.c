/*
 * request.c - form and cookie parsing for the dashboard (see request.h).
 */
#include "web/request.h"

#include <stdlib.h>
#include <string.h>

void sp_web_response_init(sp_web_response *r) {
  memset(r, 0, sizeof *r);
  r->status = 200;
  r->content_type = "text/html; charset=utf-8";
  r->body = (sp_strbuf)SP_STRBUF_INIT;
}

void sp_web_response_free(sp_web_response *r) {
  sp_strbuf_free(&r->body);
  free(r->set_cookie);
  free(r->location);
  r->set_cookie = r->location = NULL;
}

static const char *lookup(const sp_web_arg *v, int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (strcmp(v[i].key, key) == 0) return v[i].value;
  return NULL;
}

const char *sp_web_arg_get(const sp_web_request *req, const char *key) {
  return lookup(req->args, req->nargs, key);
}

const char *sp_web_form_get(const sp_web_request *req, const char *key) {
  return lookup(req->form, req->nform, key);
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes '+' and %XX in place; an invalid escape is kept as it is. */
static void url_decode(char *s) {
  char *w = s;
  for (char *r = s; *r; r++) {
    if (*r == '+') {
      *w++ = ' ';
    } else if (*r == '%' && hexval(r[1]) >= 0 && hexval(r[2]) >= 0) {
      *w++ = (char)(hexval(r[1]) * 16 + hexval(r[2]));
      r += 2;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
}

int sp_web_parse_form(char *body, sp_web_arg *out, int max) {
  int n = 0;
  char *p = body;
  while (p && *p && n < max) {
    char *amp = strchr(p, '&');
    if (amp) *amp = '\0';
    char *eq = strchr(p, '=');
    if (eq) *eq = '\0';
    url_decode(p);
    if (eq) url_decode(eq + 1);
    if (*p) {
      out[n].key = p;
      out[n].value = eq ? eq + 1 : "";
      n++;
    }
    p = amp ? amp + 1 : NULL;
  }
  return n;
}

int sp_web_cookie_get(const char *header, const char *name, char *out, size_t cap) {
  if (!header || cap == 0) return -1;
  size_t nl = strlen(name);
  const char *p = header;
  while (*p) {
    while (*p == ' ' || *p == ';') p++;
    const char *end = strchr(p, ';');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
      size_t vl = len - nl - 1;
      if (vl >= cap) vl = cap - 1;
      memcpy(out, p + nl + 1, vl);
      out[vl] = '\0';
      return 0;
    }
    if (!end) break;
    p = end + 1;
  }
  return -1;
}
