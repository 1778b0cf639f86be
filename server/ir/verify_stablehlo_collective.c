/*
 * verify_stablehlo_collective.c - StableHLO's checks of its collectives (all_gather,
 * all_to_all, reduce_scatter, all_reduce, collective_permute, collective_broadcast); see
 * verify_stablehlo_int.h.
 *
 * Replica groups and source-target pairs are read from their dense attribute's text
 * (`dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>`, or a splat `dense<0> : tensor<1x2xi64>`):
 * a rank-2 table, ids unique, StableHLO's wording ("replica id #3 seen more than once"). A
 * module with meshes also has every id name one of its devices (at most the largest mesh's
 * device count): the engine prices a collective over the mesh's devices, and an id beyond
 * them is none it could place.
 *
 * Memory: a table of ids (and a sorted copy) is malloc'd while one op is checked and freed
 * before returning; tables above SP_VS_MAX_IDS entries are refused.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/mesh.h"
#include "ir/verify_stablehlo_int.h"

#define SP_VS_MAX_IDS (1 << 20)

/* ------------------------------------------------------------------ dense id tables */

typedef struct id_table {
  int rank;            /* of the attribute's tensor type */
  int64_t rows, cols;  /* rank 2 only */
  int64_t n;           /* rows * cols values, row-major */
  int64_t *v;          /* malloc'd */
} id_table;

/* Reads the integers of `dense<...>` and the shape of its `tensor<RxCxi64>` type from `text`.
 * SP_OK with the table, or an error naming `attr`. */
static int read_ids(const sp_module *m, const sp_op *op, const char *attr, const char *text,
                    id_table *t, sp_err *err) {
  memset(t, 0, sizeof *t);
  const char *p = text ? strstr(text, "dense<") : NULL;
  const char *close = p ? strchr(p, '>') : NULL;
  const char *type = close ? strstr(close, "tensor<") : NULL;
  if (!type) return sp__verify_op_fail(m, op, err, "cannot read %s: expected dense<...> : tensor<...>", attr);
  /* the shape: dims separated by 'x' up to the element type */
  int64_t dims[SP_MAX_RANK];
  int64_t count = 1;
  const char *s = type + 7;
  while (isdigit((unsigned char)*s)) {
    char *end;
    long long d = strtoll(s, &end, 10);
    if (*end != 'x' || t->rank == SP_MAX_RANK || d < 0 ||
        __builtin_mul_overflow(count, (int64_t)d, &count) || count > SP_VS_MAX_IDS)
      return sp__verify_op_fail(m, op, err, "cannot read %s: its shape is malformed or holds more than %d "
                                "ids", attr, SP_VS_MAX_IDS);
    dims[t->rank++] = d;
    s = end + 1;
  }
  if (t->rank == 2) {
    t->rows = dims[0];
    t->cols = dims[1];
  }
  t->n = count;
  t->v = malloc((size_t)(count ? count : 1) * sizeof *t->v);
  if (!t->v) return sp_err_set(err, SP_ENOMEM, "out of memory reading %s", attr);
  int64_t got = 0;
  for (s = p + 6; s < close;) {
    if (*s == '-' || isdigit((unsigned char)*s)) {
      char *end;
      long long v = strtoll(s, &end, 10);
      if (end == s) break;
      if (got < count) t->v[got] = v;
      got++;
      s = end;
    } else if (*s == '[' || *s == ']' || *s == ',' || isspace((unsigned char)*s)) {
      s++;
    } else {
      break;
    }
  }
  if (s == close && got == 1 && count > 1) /* a splat */
    for (int64_t i = 1; i < count; i++) t->v[i] = t->v[0];
  else if (s != close || got != count) {
    free(t->v);
    t->v = NULL;
    return sp__verify_op_fail(m, op, err, "cannot read %s: expected %lld integers in dense<...>", attr,
                              (long long)count);
  }
  return SP_OK;
}

/* The devices of the module's meshes: the largest device count (or highest device id + 1);
 * -1 when the module has no mesh. */
static int64_t module_devices(const sp_module *m) {
  int64_t n = -1;
  for (const sp_op *o = sp_module_body(m)->first; o; o = o->next) {
    if (o->kind != SP_OP_SDY_MESH) continue;
    sp_attr *at = sp_op_attr(o, "mesh");
    if (!at || at->kind != SP_ATTR_MESH) continue;
    const sp_mesh *mesh = at->u.mesh;
    int64_t d = sp_mesh_num_devices(mesh);
    for (int i = 0; i < mesh->ndevice_ids; i++)
      if (mesh->device_ids[i] >= d) d = mesh->device_ids[i] + 1;
    if (d > n) n = d;
  }
  return n;
}

/* An id and where it stands in its table. */
typedef struct id_at {
  int64_t id, at;
} id_at;

static int cmp_id_at(const void *a, const void *b) {
  const id_at *x = a, *y = b;
  if (x->id != y->id) return x->id < y->id ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* Sorts the n ids of `v` taken every `step` entries from `v` (with their positions) into
 * `out`, and returns the position of the first id (in table order) whose value came earlier,
 * or -1 when all differ; -1 ids are padding when `skip_pad`. */
static int64_t sort_ids(const int64_t *v, int64_t n, int step, bool skip_pad, id_at *out) {
  for (int64_t i = 0; i < n; i++) out[i] = (id_at){v[i * step], i};
  qsort(out, (size_t)n, sizeof *out, cmp_id_at);
  int64_t first = -1;
  for (int64_t i = 1; i < n; i++) {
    /* sorted by (id, position): out[i] is the second occurrence of its id */
    bool second = out[i].id == out[i - 1].id && (i < 2 || out[i - 2].id != out[i].id);
    if (second && !(skip_pad && out[i].id == -1) && (first < 0 || out[i].at < first))
      first = out[i].at;
  }
  return first;
}

/* StableHLO's verifyReplicaGroups, then the device bound. `same_size`: every group has the
 * same size (no -1 padding); `group_size` > 0: that size. collective_broadcast (`any_ids`)
 * has its own, looser check: ids non-negative and unique, not necessarily 0..N-1. Replica
 * groups given by mesh axes (#stablehlo.replica_group_mesh_axes<...>) name no ids. */
static int check_replica_groups(const sp_module *m, const sp_op *op, bool same_size,
                                int64_t group_size, bool any_ids, sp_err *err) {
  const char *text = sp_op_get_str(op, "replica_groups");
  if (!text) return sp__verify_op_fail(m, op, err, "requires attribute 'replica_groups'");
  if (strncmp(text, "dense<", 6) != 0) return SP_OK;
  id_table t;
  int rc = read_ids(m, op, "replica_groups", text, &t, err);
  if (rc) return rc;
  id_at *sorted = NULL;
  if (t.rank != 2) {
    rc = sp__verify_op_fail(m, op, err, "replica groups should be a rank 2 tensor");
    goto done;
  }
  if (sp_op_get_str(op, "use_global_device_ids") && t.n == 0) {
    rc = sp__verify_op_fail(m, op, err, "if `use_global_device_ids` is set, the replica groups cannot be "
                            "empty");
    goto done;
  }
  for (int64_t i = 0; i < t.n; i++) {
    if (any_ids && t.v[i] < 0) {
      rc = sp__verify_op_fail(m, op, err, "replica_groups values must be positive, but was given %lld",
                              (long long)t.v[i]);
      goto done;
    }
    if (t.v[i] == -1 && same_size) {
      rc = sp__verify_op_fail(m, op, err, "Invalid replica id -1");
      goto done;
    }
  }
  sorted = malloc((size_t)(t.n ? t.n : 1) * sizeof *sorted);
  if (!sorted) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory checking replica_groups");
    goto done;
  }
  int64_t rep = sort_ids(t.v, t.n, 1, true, sorted);
  if (rep >= 0) {
    rc = sp__verify_op_fail(m, op, err, "replica id #%lld seen more than once", (long long)t.v[rep]);
    goto done;
  }
  /* sorted and unique apart from the -1 padding: the ids must be 0..k-1 */
  int64_t next = 0;
  for (int64_t i = 0; i < t.n; i++) {
    if (sorted[i].id == -1) continue;
    if (any_ids) {
      next = sorted[i].id + 1;   /* the highest id + 1, for the device bound */
      continue;
    }
    if (sorted[i].id != next) {
      rc = sp__verify_op_fail(m, op, err, "replica id #%lld not seen in replica groups", (long long)next);
      goto done;
    }
    next++;
  }
  if (same_size && group_size > 0 && t.cols != group_size) {
    rc = sp__verify_op_fail(m, op, err, "group size of replica_groups must be %lld", (long long)group_size);
    goto done;
  }
  int64_t devices = module_devices(m);
  if (devices > 0 && next > devices)
    rc = sp__verify_op_fail(m, op, err, "replica id #%lld is not a device of the module's meshes (%lld "
                            "devices)", (long long)(next - 1), (long long)devices);
done:
  free(sorted);
  free(t.v);
  return rc;
}

static int check_source_target_pairs(const sp_module *m, const sp_op *op, sp_err *err) {
  const char *text = sp_op_get_str(op, "source_target_pairs");
  if (!text) return sp__verify_op_fail(m, op, err, "requires attribute 'source_target_pairs'");
  id_table t;
  int rc = read_ids(m, op, "source_target_pairs", text, &t, err);
  if (rc) return rc;
  id_at *sorted = NULL;
  if (t.rank != 2) {
    rc = sp__verify_op_fail(m, op, err, "expect source_target_pairs attribute to be of rank 2, but got rank "
                            "%d", t.rank);
    goto done;
  }
  if (t.cols != 2) {
    rc = sp__verify_op_fail(m, op, err, "expect source_target_pairs attribute of shape (N, 2), but got (%lld, "
                            "%lld)", (long long)t.rows, (long long)t.cols);
    goto done;
  }
  int64_t devices = module_devices(m);
  for (int64_t i = 0; i < t.n; i++) {
    if (t.v[i] < 0) {
      rc = sp__verify_op_fail(m, op, err, "replica ids in source_target_pairs must be >= 0.");
      goto done;
    }
    if (devices > 0 && t.v[i] >= devices) {
      rc = sp__verify_op_fail(m, op, err, "source_target_pairs names device %lld, but the module's meshes "
                              "have %lld devices", (long long)t.v[i], (long long)devices);
      goto done;
    }
  }
  sorted = malloc((size_t)(t.rows ? t.rows : 1) * sizeof *sorted);
  if (!sorted) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory checking source_target_pairs");
    goto done;
  }
  for (int side = 0; side < 2; side++)
    if (sort_ids(t.v + side, t.rows, 2, false, sorted) >= 0) {
      rc = sp__verify_op_fail(m, op, err, side ? "duplicate targets not allowed."
                                               : "duplicate sources not allowed.");
      goto done;
    }
done:
  free(sorted);
  free(t.v);
  return rc;
}

/* ------------------------------------------------------------------ collectives */

/* Operands and results pair up (the variadic collectives), each result like its operand
 * where `same_type`. */
static int check_pairs(const sp_module *m, const sp_op *op, bool same_type, sp_err *err) {
  if (op->noperands < 1 || op->nresults != op->noperands)
    return sp__verify_op_fail(m, op, err, "expects one result per operand and at least one operand, but "
                              "has %d operands and %d results", op->noperands, op->nresults);
  for (int i = 0; same_type && i < op->noperands; i++) {
    const sp_type *t = sp__vs_operand(op, i);
    if (sp__vs_static(t)) {
      int rc = sp__vs_result_shape(m, op, i, t->dims, t->rank, t->elem, err);
      if (rc) return rc;
    }
  }
  return SP_OK;
}

static int verify_all_gather(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = check_pairs(m, op, false, err);
  if (rc) return rc;
  int64_t dim;
  if (!sp_op_get_int(op, "all_gather_dim", &dim))
    return sp__verify_op_fail(m, op, err, "requires attribute 'all_gather_dim'");
  if (dim < 0) return sp__verify_op_fail(m, op, err, "all_gather_dim cannot be negative");
  if ((rc = check_replica_groups(m, op, true, 0, false, err))) return rc;
  for (int i = 0; i < op->noperands; i++) {
    const sp_type *t = sp__vs_operand(op, i), *r = op->results[i].type;
    if (!sp__vs_static(t) || !sp__vs_static(r)) continue;
    if (dim >= t->rank) return sp__verify_op_fail(m, op, err, "all_gather_dim must be a valid index of operand");
    if (t->rank != r->rank)
      return sp__verify_op_fail(m, op, err, "operand and result must have the same rank");
    for (int d = 0; d < t->rank; d++)
      if (d != dim && t->dims[d] != r->dims[d])
        return sp__verify_op_fail(m, op, err, "operand and result should have the same shape except for the "
                                  "dimension size at 'all_gather_dim'");
    if (t->dims[dim] == 0)
      return sp__verify_op_fail(m, op, err, "dimension size of operand at 'all_gather_dim' cannot be zero");
    if (r->dims[dim] % t->dims[dim] != 0)
      return sp__verify_op_fail(m, op, err, "result gather dimension has size %lld, expected to be a multiple "
                                "of operand gather dimension size %lld", (long long)r->dims[dim],
                                (long long)t->dims[dim]);
  }
  return SP_OK;
}

static int verify_reduce_scatter(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = check_pairs(m, op, false, err);
  if (rc) return rc;
  int64_t dim;
  if (!sp_op_get_int(op, "scatter_dimension", &dim))
    return sp__verify_op_fail(m, op, err, "requires attribute 'scatter_dimension'");
  if ((rc = check_replica_groups(m, op, false, 0, false, err))) return rc;
  if (dim < 0) return sp__verify_op_fail(m, op, err, "expects scatter_dimension >= 0");
  for (int i = 0; i < op->noperands; i++) {
    const sp_type *t = sp__vs_operand(op, i), *r = op->results[i].type;
    if (!sp__vs_static(t) || !sp__vs_static(r)) continue;
    if (t->rank != r->rank)
      return sp__verify_op_fail(m, op, err, "operand and result should have same rank");
    if (dim >= t->rank)
      return sp__verify_op_fail(m, op, err, "scatter dim should be less than operand/result rank");
    for (int d = 0; d < t->rank; d++)
      if (d != dim && t->dims[d] != r->dims[d])
        return sp__verify_op_fail(m, op, err, "non scatter dimensions should be same for operand (%lld) and "
                                  "result (%lld)", (long long)t->dims[d], (long long)r->dims[d]);
    if (r->dims[dim] == 0)
      return sp__verify_op_fail(m, op, err, "result dimension size at scatter_dimension cannot be zero");
    if (t->dims[dim] % r->dims[dim] != 0)
      return sp__verify_op_fail(m, op, err, "operand scatter dimension has size %lld, expected to be a "
                                "multiple of result scatter dimension size %lld",
                                (long long)t->dims[dim], (long long)r->dims[dim]);
  }
  return op->nregions == 1 ? SP_OK
                           : sp__verify_op_fail(m, op, err, "expects one region (the reduction)");
}

static int verify_all_to_all(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = check_pairs(m, op, false, err);
  if (rc) return rc;
  int64_t split, concat, count;
  if (!sp_op_get_int(op, "split_dimension", &split) ||
      !sp_op_get_int(op, "concat_dimension", &concat) || !sp_op_get_int(op, "split_count", &count))
    return sp__verify_op_fail(m, op, err, "requires attributes 'split_dimension', 'concat_dimension' and "
                              "'split_count'");
  if (count <= 0) return sp__verify_op_fail(m, op, err, "AllToAll split_count must be > 0");
  if ((rc = check_replica_groups(m, op, true, count, false, err))) return rc;
  if (split < 0) return sp__verify_op_fail(m, op, err, "AllToAll split_dimension cannot be negative");
  if (concat < 0) return sp__verify_op_fail(m, op, err, "AllToAll concat_dimension cannot be negative");
  for (int i = 0; i < op->noperands; i++) {
    const sp_type *t = sp__vs_operand(op, i);
    if (!sp__vs_static(t)) continue;
    if (split >= t->rank)
      return sp__verify_op_fail(m, op, err, "AllToAll split_dimension %lld is out-of-bounds for input rank %d",
                                (long long)split, t->rank);
    if (concat >= t->rank)
      return sp__verify_op_fail(m, op, err, "AllToAll concat_dimension %lld is out-of-bounds for input rank "
                                "%d", (long long)concat, t->rank);
    if (t->dims[split] % count != 0)
      return sp__verify_op_fail(m, op, err, "split dimension has size %lld, expected to be a multiple of "
                                "split_count %lld", (long long)t->dims[split], (long long)count);
    int64_t dims[SP_MAX_RANK];
    memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
    dims[split] /= count;
    if (__builtin_mul_overflow(dims[concat], count, &dims[concat]))
      return sp__verify_op_fail(m, op, err, "the concatenated dimension overflows 64 bits");
    if ((rc = sp__vs_result_shape(m, op, i, dims, t->rank, t->elem, err))) return rc;
  }
  return SP_OK;
}

int sp__verify_collective(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc;
  switch (op->kind) {
    case SP_OP_ALL_GATHER: return verify_all_gather(m, op, err);
    case SP_OP_REDUCE_SCATTER: return verify_reduce_scatter(m, op, err);
    case SP_OP_ALL_TO_ALL: return verify_all_to_all(m, op, err);
    case SP_OP_ALL_REDUCE:
      if ((rc = check_pairs(m, op, true, err))) return rc;
      if ((rc = check_replica_groups(m, op, false, 0, false, err))) return rc;
      return op->nregions == 1 ? SP_OK
                               : sp__verify_op_fail(m, op, err, "expects one region (the reduction)");
    case SP_OP_COLLECTIVE_BROADCAST:
      if ((rc = sp__vs_counts(m, op, 1, 1, err)) || (rc = check_pairs(m, op, true, err))) return rc;
      return check_replica_groups(m, op, true, 0, true, err);
    case SP_OP_COLLECTIVE_PERMUTE:
      if ((rc = sp__vs_counts(m, op, 1, 1, err)) || (rc = check_pairs(m, op, true, err))) return rc;
      return check_source_target_pairs(m, op, err);
    default:
      return SP_OK;
  }
}
