/*
 * conflict.h - records of sharding conflicts met while propagating through ops.
 *
 * A conflict is a factor of one op along which the op's tensors cannot all agree: their axes
 * along the factor do not extend one another, or an axis one tensor offers cannot be used by
 * another (already shards another factor of it, is replicated or unreduced there, its
 * dimension is closed, it would not divide a factor that is not minor-most, or conservative
 * mode refuses a sub-axis). Shardy resolves such conflicts silently; shardplan keeps a record
 * of each: which tensors held (wanted) which axes, what each ended with, which level of the
 * strategy hierarchy handled it and how. The JSON report and the dashboard read these records.
 *
 * The records are plain data: axes are sp_axis_ref with names borrowed from the mesh, tensors
 * are row numbers (operands first, then results) with `noperands` to tell them apart.
 *
 * Memory: a log and its records live in the arena given to sp_conflict_log_init; the mesh
 * names they point to must outlive the log. Not thread-safe.
 */
#ifndef SP_CONFLICT_H
#define SP_CONFLICT_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/mesh.h"
#include "ir/strbuf.h"

typedef struct cJSON cJSON;

/* Why a tensor did not take (all of) the axes propagated along a factor. Bits. */
typedef enum sp_conflict_cause {
  SP_CONFLICT_INCOMPATIBLE = 1u << 0,   /* its axes and the others' do not extend one another */
  SP_CONFLICT_AXIS_IN_USE = 1u << 1,    /* the axis already shards another factor (or is one of
                                           its overflow axes) */
  SP_CONFLICT_REPLICATED = 1u << 2,     /* the axis is replicated or unreduced in the tensor */
  SP_CONFLICT_CLOSED = 1u << 3,         /* the tensor's dimension is closed */
  SP_CONFLICT_INDIVISIBLE = 1u << 4,    /* the axis would not divide a factor that is not
                                           minor-most (or the factor has overflow axes) */
  SP_CONFLICT_SUB_AXIS = 1u << 5,       /* conservative mode: sub-axes are not propagated */
  SP_CONFLICT_RESULT_LIMITED = 1u << 6  /* element-wise op: the operand takes no more than the
                                           result took */
} sp_conflict_cause;

#define SP_CONFLICT_CAUSE_COUNT 7

/* The strategy level that handled the conflict. */
typedef enum sp_conflict_level {
  SP_CONFLICT_LEVEL_BASIC = 0,      /* propagates only what every tensor accepts */
  SP_CONFLICT_LEVEL_AGGRESSIVE      /* picks a source tensor per factor, cuts per tensor */
} sp_conflict_level;

/* What happened along the factor. */
typedef enum sp_conflict_resolution {
  SP_CONFLICT_NOTHING_MOVED = 0,    /* no tensor gained an axis along the factor */
  SP_CONFLICT_COMMON_PREFIX,        /* basic: only the axes every tensor accepts moved */
  SP_CONFLICT_SOURCE_WON            /* aggressive: the source tensor's axes moved to the
                                       tensors that could take them */
} sp_conflict_resolution;

/* One tensor that has the factor, or that cut the candidate without having it (an axis it
 * uses for another factor). */
typedef struct sp_conflict_entry {
  int tensor;                /* row: operands 0..noperands-1, then results */
  bool has_factor;           /* false: before/after are empty */
  unsigned causes;           /* sp_conflict_cause bits found in this tensor */
  int blocking_factor;       /* AXIS_IN_USE: the other factor of this tensor that holds the
                                axis, -1 if none */
  bool closed;
  int nbefore, nafter;
  sp_axis_ref *before;       /* its axes along the factor when the op was visited */
  sp_axis_ref *after;        /* ... and after propagation through the op */
} sp_conflict_entry;

typedef struct sp_conflict {
  /* Context, stamped from the log when the record is added. */
  int op;                    /* caller's op number, -1 if unknown */
  const char *op_name;       /* e.g. "stablehlo.dot_general"; may be NULL */
  int line, col;             /* the op's place in the input, 0 if unknown */
  int round;                 /* op-priority round, -1 if none */
  int user_priority;         /* user-priority round, -1 if none */
  /* The factor. */
  int factor;
  int64_t factor_size;
  sp_conflict_level level;
  bool conservative;
  unsigned causes;           /* union over the entries (plus SUB_AXIS) */
  sp_conflict_resolution resolution;
  int source;                /* aggressive: the source tensor's row, -1 if none */
  int nchosen;
  sp_axis_ref *chosen;       /* the axes propagated along the factor (basic: after the
                                common cuts; aggressive: the candidate before per-tensor cuts) */
  int noperands;
  int nentries;
  sp_conflict_entry *entries;
} sp_conflict;

typedef struct sp_conflict_log {
  sp_arena *arena;
  int n, cap;
  sp_conflict *v;
  /* Context for the next records; the propagation driver sets these. */
  int op;
  const char *op_name;
  int line, col;
  int round;
  int user_priority;
  bool oom;                  /* a record was dropped for lack of memory */
} sp_conflict_log;

/* An empty log allocating from `a`, with context op -1, rounds -1. */
void sp_conflict_log_init(sp_conflict_log *log, sp_arena *a);
/* A new zeroed record stamped with the log's context (source -1); NULL on out-of-memory
 * (and log->oom is set). */
sp_conflict *sp_conflict_log_add(sp_conflict_log *log);
/* Allocates c->entries for `n` entries (zeroed, blocking_factor -1). SP_ENOMEM on failure. */
int sp_conflict_alloc_entries(sp_conflict_log *log, sp_conflict *c, int n);

const char *sp_conflict_cause_name(sp_conflict_cause bit);   /* "incompatible", ... */
const char *sp_conflict_level_name(sp_conflict_level l);     /* "basic", "aggressive" */
const char *sp_conflict_resolution_name(sp_conflict_resolution r);

/* One line per record plus one per entry, e.g.
 *   op 3 stablehlo.dot_general factor j=32: basic, common_prefix; causes: axis_in_use; chose []
 *     operand 1: ["a"] -> ["a"]  (axis_in_use by j)
 */
void sp_conflict_print(sp_strbuf *sb, const sp_conflict *c);

/* {"op", "op_name", "line", "col", "round", "user_priority", "factor", "factor_size", "level",
 *  "conservative", "causes": [..], "resolution", "source", "chosen": [..],
 *  "tensors": [{"tensor": "operand 0", "has_factor", "closed", "causes": [..], "blocking_factor": "j" | null,
 *  "before": [..], "after": [..]}]}; NULL on out-of-memory. */
cJSON *sp_conflict_to_json(const sp_conflict *c);
/* {"conflicts": [...], "dropped": bool}. */
cJSON *sp_conflict_log_to_json(const sp_conflict_log *log);

#endif /* SP_CONFLICT_H */
