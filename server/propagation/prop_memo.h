/*
 * prop_memo.h - remembered outcomes of propagating through one op.
 *
 * sp_factor_propagate_op() is a pure function of the rule, the mesh, the options (strategy,
 * conservative, element-wise, per-factor directions) and the contents of the tensors'
 * shardings: projection, propagation and re-projection read nothing else. A generated
 * training graph repeats the same layer many times, so the same (rule, shardings) meet again
 * and again; a propagation session keeps each outcome (which tensors get which new sharding)
 * and hands it back when an op presents an equal key, instead of building the factor table
 * again.
 *
 * Keys compare rules and meshes by pointer (the session interns rules), options and
 * directions by value, and shardings by content (sp_sharding_equal, with inline meshes by
 * pointer). New shardings handed back are shared by every op that gets them: shardings are
 * never changed in place (ir/sharding.h), so sharing is invisible. Callers must not use the
 * memo when they record conflicts, which the memo does not replay.
 *
 * Memory: entries, their key copies and outcome arrays are malloc'd/arena'd by the memo and
 * freed by sp_prop_memo_free; the shardings in keys and outcomes are borrowed and must outlive
 * the memo (they live in the module's arena).
 */
#ifndef SP_PROP_MEMO_H
#define SP_PROP_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/mesh.h"
#include "ir/rule.h"
#include "ir/sharding.h"
#include "propagation/factor_propagation.h"

typedef struct sp_prop_memo sp_prop_memo;

typedef struct sp_prop_memo_key {
  const sp_rule *rule;
  const sp_mesh *mesh;
  const sp_prop_options *po;     /* po->directions: rule->nfactors entries, or NULL */
  int n;                         /* rule->noperands + rule->nresults */
  sp_sharding *const *in;        /* operands then results; NULL = no sharding */
  uint64_t hash;                 /* filled by sp_prop_memo_hash */
} sp_prop_memo_key;

/* NULL on out-of-memory. */
sp_prop_memo *sp_prop_memo_new(void);
/* NULL is a no-op. */
void sp_prop_memo_free(sp_prop_memo *m);

/* Fills k->hash; call once the other fields are set. (The memo remembers the hashes of the
 * shardings it has seen, by address: shardings never change.) */
void sp_prop_memo_hash(sp_prop_memo *m, sp_prop_memo_key *k);
/* On a hit, out[0..k->n-1] get the outcome (a new sharding or NULL per tensor) and true is
 * returned. */
bool sp_prop_memo_find(const sp_prop_memo *m, const sp_prop_memo_key *k, sp_sharding **out);
/* Remembers the outcome `out` for key `k`. Out-of-memory only means it is not remembered. */
void sp_prop_memo_add(sp_prop_memo *m, const sp_prop_memo_key *k, sp_sharding *const *out);

#endif /* SP_PROP_MEMO_H */
