/*
 * web_fixture.h - what the dashboard fuzz targets share: a plan cache in a temporary folder
 * holding one real plan (an MLP propagated and searched on the bundled 8-GPU cluster, key
 * SP_FUZZ_WEB_KEY), and the dashboard over it (handled in process, never listening).
 *
 * sp_fuzz_web_handle() runs one request through sp_web_handle and checks the response: a
 * status between 100 and 599, a content type, and in an HTML page never the marker "<x-fuzz"
 * unescaped (input reflected into a page without HTML escaping).
 *
 * Memory: the fixture lives for the process; the folder is removed at exit.
 */
#ifndef SP_FUZZ_WEB_FIXTURE_H
#define SP_FUZZ_WEB_FIXTURE_H

#include "store/store.h"
#include "web/request.h"
#include "web/web.h"

#define SP_FUZZ_WEB_KEY "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

typedef struct sp_fuzz_web {
  sp_store *store;
  sp_metrics *metrics;
  sp_web *web;
} sp_fuzz_web;

/* The fixture, set up on first use (aborts when it cannot be). */
sp_fuzz_web *sp_fuzz_web_get(void);

/* Handles `req` (host set to the loopback when NULL) and checks the response; returns the
 * status. */
int sp_fuzz_web_handle(const sp_web_request *req);

#endif /* SP_FUZZ_WEB_FIXTURE_H */
