/*
 * fuzz_web.c - libFuzzer target: the dashboard's request router (web/web.h sp_web_handle) over
 * a plan cache holding one real plan (web_fixture.h).
 *
 * Input, one field per line: method, path, query string (a=1&b=2, URL-encoded), Host, Origin,
 * Referer, Cookie, Authorization; the rest is a form body. An empty header line means the
 * header is absent (Host then defaults to the loopback, as a local browser sends it). The
 * response is checked by sp_fuzz_web_handle (status, content type, no unescaped reflection).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "web_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536) return 0;
  char *text = malloc(size + 1);
  sp_fuzz_check(text != NULL, "malloc", NULL);
  memcpy(text, data, size);
  text[size] = '\0';
  char *field[9] = {0};
  char *p = text;
  for (int i = 0; i < 8 && p; i++) {
    field[i] = p;
    p = strchr(p, '\n');
    if (p) *p++ = '\0';
  }
  field[8] = p;
  sp_web_request req;
  memset(&req, 0, sizeof req);
  req.method = field[0] && *field[0] ? field[0] : "GET";
  req.path = field[1] && *field[1] ? field[1] : "/";
  if (field[2]) req.nargs = sp_web_parse_form(field[2], req.args, SP_WEB_MAX_ARGS);
  const char **headers[5] = {&req.host, &req.origin, &req.referer, &req.cookie,
                             &req.authorization};
  for (int i = 0; i < 5; i++)
    if (field[3 + i] && *field[3 + i]) *headers[i] = field[3 + i];
  if (field[8] && strlen(field[8]) <= SP_WEB_MAX_BODY)
    req.nform = sp_web_parse_form(field[8], req.form, SP_WEB_MAX_ARGS);
  if (req.nargs < 0) req.nargs = 0;
  if (req.nform < 0) req.nform = 0;
  sp_fuzz_web_handle(&req);
  free(text);
  return 0;
}
