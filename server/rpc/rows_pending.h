/*
 * rows_pending.h - the plans answered before their detail rows were stored, and the DETAIL_FULL
 * answers served from them meanwhile.
 *
 * Why. A plan handed out near its callers' deadlines (a snapshot, or a final plan cut short) is
 * stored in two steps (plan_job.c): its record and answer first, so the callers are answered
 * at once, and the detail rows (the dashboard's rows and the plan's JSON, from which a
 * DETAIL_FULL answer is rebuilt) afterwards, which takes a second or more on a large plan.
 * During that window the plan is acknowledged and its key answers, but its rows are not in the
 * cache yet. This table holds the plan in memory for the window: a DETAIL_FULL request for
 * that key (GetPlan, or a Plan that hits the cache) is answered from it, never with an error
 * and never by a second search; the dashboard asks whether a key's rows are being written and
 * says so on the page.
 *
 * Invariants. An entry is added before the plan's record is committed and removed only after
 * its rows were committed (or writing them ended without them), so a reader that finds a
 * stored record without rows and then no entry here knows the rows are not coming (the daemon
 * stopped between the two steps, or writing them failed). An entry names the exact answer
 * bytes it was stored with: a later plan of the same key that replaced it is not served from
 * it.
 *
 * Threads and memory: any thread. The table borrows the plan and the bytes of each entry from
 * whoever added it (the job's answering thread), which keeps them until sp_rows_pending_end
 * returns; that call waits for readers still building an answer from the entry.
 */
#ifndef SP_RPC_ROWS_PENDING_H
#define SP_RPC_ROWS_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/err.h"
#include "rpc/plan_proto.h"

typedef struct sp_rows_pending sp_rows_pending;
typedef struct sp_rows_pending_entry sp_rows_pending_entry;

/* NULL: out of memory. */
sp_rows_pending *sp_rows_pending_new(void);
/* No entry may be left (every add ended). NULL is a no-op. */
void sp_rows_pending_free(sp_rows_pending *t);

/* Plan `key`, answered as `bytes` (n of them), is about to be stored without its detail rows;
 * `plan` is what they are built from. NULL: out of memory (store the rows before answering). */
sp_rows_pending_entry *sp_rows_pending_add(sp_rows_pending *t, const char *key,
                                           const uint8_t *bytes, size_t n, const sp_plan *plan);
/* The rows are stored (or will not be): the entry goes, once no reader uses it. NULL: no-op. */
void sp_rows_pending_end(sp_rows_pending *t, sp_rows_pending_entry *e);

/* Whether a plan of `key` has its rows being written: the one stored as bytes[0, n), or with
 * `bytes` NULL any. */
bool sp_rows_pending_has(sp_rows_pending *t, const char *key, const uint8_t *bytes, size_t n);

/* The DETAIL_FULL part of the answer (sp_rpc_plan_full_extras, functions renamed by `map`,
 * may be NULL) of plan `key` stored as `bytes`, built from the plan in memory. SP_ENOTFOUND
 * when no such plan is pending (its rows are stored by now, or are not coming); SP_ENOMEM. */
int sp_rows_pending_extras(sp_rows_pending *t, const char *key, const uint8_t *bytes, size_t n,
                           const sp_rpc_func_map *map, uint8_t **out, size_t *len, sp_err *err);

#endif /* SP_RPC_ROWS_PENDING_H */
