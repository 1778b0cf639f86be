/*
 * hash.h - the canonical SHA-256 of a module, and an incremental hasher for cache keys.
 *
 * The hash covers what the planner's answer depends on and nothing else. It changes with any
 * change of an op name, a type (shape, element type, encoding), an attribute value, a sharding
 * (mesh, axes, sub-axes, open/closed, priority, replicated, unreduced), a sharding rule, a mesh
 * (axes, sizes, device ids) or the graph's wiring. It does not change with SSA value names
 * (values are numbered in the order they first appear), function names (a function symbol,
 * where it is defined and wherever a symbol attribute such as a call's callee names it, is
 * hashed as its position among the module's functions; with more than one function the one
 * called "main" keeps its name, since the planner plans that one), locations, comments,
 * whitespace, or the order of the attributes of one dictionary (they are hashed sorted by
 * name). Uninterpreted
 * attribute text is hashed with its whitespace normalised (runs of blanks between two word
 * characters become one space, others vanish; string literals are kept as they are). Device
 * ids equal to 0..N-1 in order hash like no device ids, since they mean the same.
 *
 * The serialisation is unambiguous: every item is tagged, every string and list carries its
 * length. A plan cache key mixes the module with the cluster and the options through the same
 * `sp_hasher`:
 *
 *   sp_hasher h;
 *   sp_hasher_init(&h);
 *   sp_hasher_update_module(&h, module);
 *   sp_hasher_update_str(&h, "cluster"); ... sp_hasher_update_i64(&h, devices); ...
 *   sp_hasher_final(&h, key, &err);
 *
 * Memory: the hasher owns an OpenSSL digest context and a small table of value numbers; both
 * are released by sp_hasher_final() or sp_hasher_dispose(). Errors (out of memory) latch: the
 * update calls return nothing and sp_hasher_final() reports the first failure.
 */
#ifndef SP_HASH_H
#define SP_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/ptr_map.h"

#define SP_HASH_BYTES 32
#define SP_HASH_HEX_BYTES (2 * SP_HASH_BYTES + 1)

typedef struct sp_hasher {
  void *md;                 /* EVP_MD_CTX */
  int status;               /* first failure, SP_OK while healthy */
  size_t len;               /* bytes waiting in `buf` */
  unsigned char buf[4096];  /* batches the many small updates */
  /* value -> number in order of first sight (only while a module is being hashed) */
  sp_ptr_map values;
  /* scratch for sorting one attribute dictionary */
  const void **sorted;
  int capsorted;
  /* the module's function symbols in body order (only while a module is being hashed) */
  const char **funcs;
  int nfuncs, capfuncs;
  bool main_named;          /* more than one function: "main" is the one planned */
} sp_hasher;

/* Starts a SHA-256. SP_OK or SP_ENOMEM (also latched in the hasher). */
int sp_hasher_init(sp_hasher *h);
void sp_hasher_update_bytes(sp_hasher *h, const void *p, size_t n); /* raw, no length */
void sp_hasher_update_u64(sp_hasher *h, uint64_t v);
void sp_hasher_update_i64(sp_hasher *h, int64_t v);
void sp_hasher_update_f64(sp_hasher *h, double v);
/* A length-prefixed string; NULL hashes differently from "". */
void sp_hasher_update_str(sp_hasher *h, const char *s);
void sp_hasher_update_type(sp_hasher *h, const sp_type *t);
void sp_hasher_update_mesh(sp_hasher *h, const sp_mesh *m);
void sp_hasher_update_sharding(sp_hasher *h, const sp_sharding *s);
void sp_hasher_update_rule(sp_hasher *h, const sp_rule *r);
/* The canonical form of the whole module. */
void sp_hasher_update_module(sp_hasher *h, const sp_module *m);
/* Writes the digest and releases the hasher. Returns the latched status (SP_OK or SP_ENOMEM /
 * SP_EINTERNAL with a message in `err`). */
int sp_hasher_final(sp_hasher *h, uint8_t out[SP_HASH_BYTES], sp_err *err);
/* Releases a hasher that will not be finished. */
void sp_hasher_dispose(sp_hasher *h);

/* One-shot: the canonical hash of `m`. */
int sp_hash_module(const sp_module *m, uint8_t out[SP_HASH_BYTES], sp_err *err);

/* Lower-case hex of a digest into `out` (SP_HASH_HEX_BYTES, NUL-terminated); returns out. */
char *sp_hash_hex(const uint8_t digest[SP_HASH_BYTES], char out[SP_HASH_HEX_BYTES]);

#endif /* SP_HASH_H */
