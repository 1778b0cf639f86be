/*
 * fuzz_cache_row.c - libFuzzer target: corrupted plan-cache rows read back by the dashboard
 * (web_fixture.h). A cache file can be damaged on disk or written by another version; the
 * pages and the JSON API that read its rows must answer with an error, never crash.
 *
 * Input: up to five parts separated by the byte 0x01: the JSON of the "summary" row, of a
 * "value" row, of an "op" row, of a "collective"/"conflict"/"warning" row, and a label. They
 * are stored as plan SP_FUZZ_CORRUPT_KEY (replacing the previous input's), then every page and
 * API route that reads those rows is requested and each response checked
 * (sp_fuzz_web_handle). The fixture's good plan must still read back afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "web_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEY "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const char *const routes[] = {
    "/", "/plans/" KEY, "/plans/" KEY "/conflicts", "/plans/" KEY "/ops/0",
    "/plans/" KEY "/values/0", "/plans/" KEY "/ops/1", "/api/plans", "/api/plans/" KEY,
    "/api/plans/" KEY "/values", "/api/plans/" KEY "/values/0", "/api/plans/" KEY "/ops/0",
    "/api/plans/" KEY "/collectives", "/api/plans/" KEY "/conflicts/0",
    "/api/plans/" KEY "/warnings", "/api/stats", "/metrics"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 65536) return 0;
  sp_fuzz_web *f = sp_fuzz_web_get();
  char *text = malloc(size + 1);
  sp_fuzz_check(text != NULL, "malloc", NULL);
  memcpy(text, data, size);
  text[size] = '\0';
  const char *part[5] = {"", "", "", "", ""};
  char *p = text;
  for (int i = 0; i < 5 && p; i++) {
    part[i] = p;
    p = strchr(p, '\x01');
    if (p) *p++ = '\0';
  }
  sp_store_row rows[6] = {
      {"summary", 0, "", part[0]},      {"value", 0, part[4], part[1]},
      {"op", 0, part[4], part[2]},      {"collective", 0, part[4], part[3]},
      {"conflict", 0, part[4], part[3]}, {"warning", 0, part[4], part[3]}};
  sp_store_plan sp;
  memset(&sp, 0, sizeof sp);
  memcpy(sp.key, KEY, sizeof sp.key);
  sp.planner_version = "fuzz";
  sp.module_name = part[4];
  sp.mesh = part[4];
  sp.status = "optimal";
  sp.total_cost = 1;
  sp.plan = part[0];
  sp.plan_len = strlen(part[0]);
  sp_err err;
  int rc = sp_store_put(f->store, &sp, rows, 6, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "store put failed without an error");
  } else {
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
      sp_web_request req;
      memset(&req, 0, sizeof req);
      req.method = "GET";
      req.path = routes[i];
      sp_fuzz_web_handle(&req);
    }
  }
  /* The good plan is untouched. */
  sp_web_request good;
  memset(&good, 0, sizeof good);
  good.method = "GET";
  good.path = "/api/plans/" SP_FUZZ_WEB_KEY;
  sp_fuzz_check(sp_fuzz_web_handle(&good) == 200, "the fixture's plan no longer reads", NULL);
  free(text);
  return 0;
}
