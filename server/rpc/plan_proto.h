/*
 * plan_proto.h - the engine's plan (plan/plan.h) as shardplan.v1 messages, and the requester's
 * names as labels.
 *
 * A stored answer is a PlanResponse in its summary form (values, collectives, costs, solver,
 * mesh, conflicts, warnings); the parts only DETAIL_FULL asks for (module text, factor tables,
 * the plan's JSON) are built from the plan and appended to the packed summary as a second
 * `plan` field, which protobuf merges into the first: the summary bytes stay the same for
 * every caller, and an exact repeat can be answered by copying them.
 *
 * Labels: the requester's value names by position (plan addresses), read from its module
 * before planning: function arguments ("%weights"), op results by op number ("%sum", "%x#1"),
 * and its function symbols by position (a graph whose functions are renamed has the same key,
 * see ir/hash.h; its answer names them as the requester does).
 *
 * Memory: messages built here live in the arena given; packed bytes are malloc'd.
 */
#ifndef SP_RPC_PLAN_PROTO_H
#define SP_RPC_PLAN_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "plan/plan.h"
#include "shardplan/v1/planner.pb-c.h"

typedef struct sp_rpc_labels {
  sp_arena *arena;
  int nfuncs;
  const char **func_names;      /* [nfuncs] */
  int *nargs;                   /* [nfuncs] */
  const char ***args;           /* [nfuncs][nargs] labels, "" when unnamed */
  int64_t nops;
  const char **op_results;      /* [nops]: label of the op's result 0 ("%x"), NULL if none */
  int *op_nresults;             /* [nops] */
  const char **op_names;        /* [nops] */
} sp_rpc_labels;

/* Reads the labels of `m` (before it is planned). */
int sp_rpc_labels_read(const sp_module *m, sp_rpc_labels *out, sp_err *err);
void sp_rpc_labels_free(sp_rpc_labels *l);
/* The label of a value address into buf ("" when none). */
void sp_rpc_labels_get(const sp_rpc_labels *l, const Shardplan__V1__ValueAddress *a, char *buf,
                       size_t cap);

/* The summary answer for `plan` (labels from `names`), in arena `a`. */
int sp_rpc_plan_summary(const sp_plan *plan, const sp_rpc_labels *names, const char *key,
                        sp_arena *a, Shardplan__V1__PlanResponse **out, sp_err *err);
/* Function symbols renamed by position: from[i] (the names a plan was made with) becomes
 * to[i] (a requester's). */
typedef struct sp_rpc_func_map {
  int n;
  const char *const *from, *const *to;
} sp_rpc_func_map;

/* The map from the functions a stored answer names (resp->plan->functions) to `names`'; false
 * when there is nothing to rename (no names, or the same names). */
bool sp_rpc_func_map_of(const Shardplan__V1__PlanResponse *resp, const sp_rpc_labels *names,
                        sp_rpc_func_map *out);
/* MLIR text with every symbol reference (@name, @"name") to a function of `map` renamed;
 * strings and other symbols are left alone. Malloc'd; NULL when out of memory. */
char *sp_rpc_rename_functions(const char *text, const sp_rpc_func_map *map);

/* The DETAIL_FULL extras of `plan` as bytes to append to a packed summary (malloc'd); with
 * `map` (may be NULL) the module text (also inside the JSON) names functions as map->to. */
int sp_rpc_plan_full_extras(const sp_plan *plan, const sp_rpc_func_map *map, uint8_t **out,
                            size_t *len, sp_err *err);

/* Packs `resp` with every value label replaced by `names`' label for its address and every
 * function named by `names`' function of the same position (NULL: as it is), cache_hit and
 * server_ms set, then appends `extras` (may be NULL); malloc'd bytes. The message is left as
 * it was. */
int sp_rpc_pack_response(Shardplan__V1__PlanResponse *resp, const sp_rpc_labels *names,
                         bool cache_hit, bool coalesced, double server_ms, const uint8_t *extras,
                         size_t extras_len, uint8_t **out, size_t *len);
/* Appends cache_hit = true and server_ms to already packed response bytes (a repeat answered
 * from the stored bytes), plus extras; malloc'd. */
int sp_rpc_repack_hit(const uint8_t *stored, size_t stored_len, double server_ms,
                      const uint8_t *extras, size_t extras_len, uint8_t **out, size_t *len);

/* The status word stored with a plan: "optimal", "feasible", "provisional", "propagated". */
const char *sp_rpc_status_word(const Shardplan__V1__PlanResponse *r);
Shardplan__V1__PlanStatus sp_rpc_status_from_word(const char *w);

#endif /* SP_RPC_PLAN_PROTO_H */
