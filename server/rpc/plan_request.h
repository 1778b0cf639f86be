/*
 * plan_request.h - a PlanRequest made ready for the engine: decoded, its graph read (MLIR text
 * or structured graph) and verified, its cluster loaded, its options checked and turned into
 * the engine's options, and its cache key computed.
 *
 * The key (hex SHA-256) covers what changes the answer: the module's canonical hash
 * (ir/hash.h: value names, locations and attribute order do not count), and with the search
 * the cluster (every device type, machine, link), the options (mode, propagation strategy,
 * gap, placement and mesh-shape search, mesh, device count, mesh axes, memory limit, layer
 * sharing, work limit, seed), and the planner version (project version + engine source
 * revision). Not the time limit, the detail asked for, or the file name. The raw hash is the
 * SHA-256 of the planner version and the request bytes as received: an exact repeat is found
 * by it without parsing.
 *
 * Errors (SP_EINVAL, message naming the problem and where): "request: not a
 * shardplan.v1.PlanRequest (...)", "model.mlir:3:7: ...", "graph: op 4 (...): ...",
 * "cluster: machines[0].num_devices: ...", "options: gap must be in [0, 1), got 2".
 * SP_ELIMIT for inputs over the engine's limits.
 *
 * Memory: everything hangs off the struct and is released by sp_rpc_request_free (safe on a
 * zeroed or partly filled one). The module is owned until taken (set r->module = NULL).
 */
#ifndef SP_RPC_PLAN_REQUEST_H
#define SP_RPC_PLAN_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "plan/plan.h"
#include "search/cluster.h"
#include "shardplan/v1/planner.pb-c.h"

#define SP_RPC_HEX 65

/* Memory estimate of a request (see sp_rpc_request_prepare): bytes of IR per byte of input,
 * checked before reading; peak bytes per byte of IR (the module arena's chunks) when planning,
 * propagation only and with the search. Calibrated with bench/bench_rpc on GPT training steps
 * of 1 to 48 layers (86 to 4,081 ops), as MLIR text and as structured graphs, whose peak RSS
 * per IR byte was 160-195 with the search and 5-7 with propagation alone, growing with the
 * graph (bench/RESULTS.md, "Request memory"); the factors leave a fifth or more to spare at
 * 48 layers. Reading took 13-14 bytes per input byte in either form. */
#define SP_RPC_READ_BYTES_PER_INPUT_BYTE 16
#define SP_RPC_PROPAGATE_BYTES_PER_IR_BYTE 10
#define SP_RPC_SEARCH_BYTES_PER_IR_BYTE 240

typedef struct sp_rpc_request {
  Shardplan__V1__PlanRequest *msg;  /* unpacked request */
  sp_module *module;                /* the graph, verified */
  sp_cluster *cluster;              /* search only */
  bool search;
  double time_limit;                /* requested seconds, 0: the server's default */
  int detail;                       /* Shardplan__V1__Detail */
  sp_plan_options popts;            /* engine options (time limit and control left unset) */
  char search_options[2048];        /* popts.search_options points here */
  char key[SP_RPC_HEX];
  char raw[SP_RPC_HEX];
  int64_t max_memory_bytes;         /* set after decoding: refuse a request whose estimate is
                                       larger (SP_ELIMIT); 0: no bound */
  int64_t memory_estimate;          /* bytes, filled by prepare */
} sp_rpc_request;

/* The raw hash of request bytes (see above) into out. */
void sp_rpc_request_raw_hash(const uint8_t *buf, size_t len, char out[SP_RPC_HEX]);
/* Unpacks the message only (cheap): SP_EINVAL when the bytes are not a PlanRequest. `raw` is
 * the bytes' raw hash when the caller has it, NULL to compute it. */
int sp_rpc_request_decode(const uint8_t *buf, size_t len, const char *raw, sp_rpc_request *r,
                          sp_err *err);
/* Reads the graph and cluster, checks the options, computes the key. With max_memory_bytes
 * set, a request is refused with SP_ELIMIT (RESOURCE_EXHAUSTED) before planning when its
 * estimate exceeds it: the input's size times SP_RPC_READ_BYTES_PER_INPUT_BYTE before reading
 * it, then the IR's size times the planning factor (memory_estimate). */
int sp_rpc_request_prepare(sp_rpc_request *r, sp_err *err);
void sp_rpc_request_free(sp_rpc_request *r);

/* The planner version string ("0.1.0+1a2b3c4d5e6f"). */
const char *sp_rpc_planner_version(void);
/* The JSON text of a bundled example cluster ("one_machine_8gpu"), or NULL. */
const char *sp_rpc_example_cluster(const char *name);

#endif /* SP_RPC_PLAN_REQUEST_H */
