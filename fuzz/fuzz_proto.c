/*
 * fuzz_proto.c - libFuzzer target: a PlanRequest as the daemon receives it (bytes of
 * shardplan.v1.PlanRequest): protobuf-c decoding, then the request made ready for the engine
 * (server/rpc/plan_request.h: the MLIR text or structured graph read and verified, the cluster
 * loaded, the options checked, the cache key computed), then the engine on the module.
 *
 * Invariants beyond "no crash": a rejected request has an error message; an accepted one has a
 * verified module and a 64-hex-digit key; its module written as a structured graph
 * (server/graph) reads back to a module with the same canonical hash (the two front-ends
 * agree, so equal requests share a cache entry).
 */
#include <string.h>

#include "fuzz_common.h"
#include "graph/graph.h"
#include "ir/hash.h"
#include "rpc/plan_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_graph_round_trip(sp_module *m) {
  uint8_t h1[SP_HASH_BYTES], h2[SP_HASH_BYTES];
  sp_err err;
  sp_fuzz_check(sp_hash_module(m, h1, &err) == SP_OK, "hashing the module", &err);
  Shardplan__V1__Graph *g = NULL;
  sp_arena *ga = NULL;
  int rc = sp_graph_from_module(m, &g, &ga, &err);
  if (rc != SP_OK) { /* a module the graph writer cannot express must say why */
    sp_fuzz_check_error(rc, &err, "graph writer failed without an error");
    sp_arena_free(ga);
    return;
  }
  sp_module *m2 = NULL;
  rc = sp_graph_to_module(g, "graph", &m2, &err);
  sp_fuzz_check(rc == SP_OK, "a written graph does not read back", &err);
  sp_fuzz_check(sp_hash_module(m2, h2, &err) == SP_OK, "hashing the module", &err);
  sp_fuzz_check(memcmp(h1, h2, sizeof h1) == 0,
                "module -> graph -> module changed the canonical hash", NULL);
  sp_module_free(m2);
  sp_arena_free(ga);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sp_rpc_request r;
  memset(&r, 0, sizeof r);
  sp_err err;
  int rc = sp_rpc_request_decode(data, size, NULL, &r, &err);
  if (rc == SP_OK) rc = sp_rpc_request_prepare(&r, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "request rejected without an error");
    sp_fuzz_count("proto", SP_FUZZ_REJECTED);
    sp_rpc_request_free(&r);
    return 0;
  }
  sp_fuzz_check(r.module != NULL, "prepared request without a module", NULL);
  sp_fuzz_check(strlen(r.key) == 64 && strspn(r.key, "0123456789abcdef") == 64,
                "cache key is not 64 hex digits", NULL);
  check_graph_round_trip(r.module);
  sp_fuzz_count("proto", sp_fuzz_run_engine(r.module));
  sp_rpc_request_free(&r);
  return 0;
}
