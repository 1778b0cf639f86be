/*
 * mlir_mutator.c - the structure-aware MLIR mutator (see mlir_mutator.h).
 */
#include "mlir_mutator.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"
#include "ir/ir.h"
#include "ir/strbuf.h"
#include "fuzz_common.h"
#include "mlir/mlir.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));

/* ------------------------------------------------------------------ randomness */

static uint64_t rng;

static uint32_t rnd(uint32_t n) { /* uniform-ish in [0, n); 0 when n is 0 */
  if (n == 0) return 0;
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 2685821657736338717ULL) >> 33) % n;
}

/* ------------------------------------------------------------------ the module's parts */

#define MAX_ITEMS 4096

typedef struct parts {
  sp_module *m;
  int nvalues;
  sp_value *values[MAX_ITEMS];    /* ranked static tensors: args and results */
  int nops;
  sp_op *ops[MAX_ITEMS];          /* ops inside function bodies */
  int nfuncs;
  sp_op *funcs[64];
  sp_op *mesh_op;                 /* the first sdy.mesh */
  int ntypes;
  sp_type *types[MAX_ITEMS];      /* every tensor type met (may repeat) */
} parts;

static void add_type(parts *p, sp_type *t) {
  if (t && t->kind == SP_TYPE_TENSOR && t->rank > 0 && p->ntypes < MAX_ITEMS)
    p->types[p->ntypes++] = t;
}

static void add_value(parts *p, sp_value *v) {
  add_type(p, v->type);
  if (sp_type_is_static_tensor(v->type) && p->nvalues < MAX_ITEMS) p->values[p->nvalues++] = v;
}

static bool collect(sp_op *op, void *ctx) {
  parts *p = ctx;
  if (op->kind == SP_OP_SDY_MESH && !p->mesh_op) p->mesh_op = op;
  if (op->kind == SP_OP_FUNC) {
    if (p->nfuncs < 64) p->funcs[p->nfuncs++] = op;
    for (int i = 0; i < op->func->nargs; i++) add_type(p, op->func->arg_types[i]);
    for (int i = 0; i < op->func->nresults; i++) add_type(p, op->func->result_types[i]);
  }
  for (int r = 0; r < op->nregions; r++)
    for (int b = 0; b < op->regions[r].nblocks; b++) {
      sp_block *blk = op->regions[r].blocks[b];
      for (int i = 0; i < blk->nargs; i++) add_value(p, blk->args[i]);
    }
  if (op->kind != SP_OP_MODULE && op->kind != SP_OP_FUNC && op->kind != SP_OP_SDY_MESH) {
    if (p->nops < MAX_ITEMS) p->ops[p->nops++] = op;
    for (int i = 0; i < op->nresults; i++) add_value(p, &op->results[i]);
  }
  return true;
}

static const sp_mesh *the_mesh(const parts *p, const char **name) {
  if (!p->mesh_op) return NULL;
  sp_attr *a = sp_op_attr(p->mesh_op, "mesh");
  *name = sp_op_get_str(p->mesh_op, "sym_name");
  return a && a->kind == SP_ATTR_MESH && *name ? a->u.mesh : NULL;
}

/* ------------------------------------------------------------------ mutations */

static sp_sharding *random_sharding(parts *p, int rank) {
  const char *mesh_name;
  const sp_mesh *mesh = the_mesh(p, &mesh_name);
  if (!mesh) return NULL;
  sp_arena *a = p->m->arena;
  sp_sharding *s = sp_sharding_new(a, mesh_name, rank, rnd(2) == 0);
  if (!s) return NULL;
  bool used[64] = {false};
  for (int d = 0; d < rank; d++) {
    sp_dim_sharding *dim = &s->dims[d];
    dim->closed = rnd(3) != 0;
    int want = mesh->naxes > 0 ? (int)rnd(3) : 0;
    dim->axes = sp_arena_calloc(a, (size_t)(want ? want : 1), sizeof *dim->axes);
    for (int k = 0; k < want && dim->axes; k++) {
      int ax = (int)rnd((uint32_t)mesh->naxes);
      if (ax >= 64 || used[ax]) continue;
      used[ax] = true;
      dim->axes[dim->naxes++] = (sp_axis_ref){mesh->axes[ax].name, 0, 0};
    }
    /* An empty closed dim may not carry a priority (the verifier rejects it). */
    bool may_prioritize = dim->naxes > 0 || !dim->closed;
    dim->priority = may_prioritize && rnd(4) == 0 ? (int)rnd(3) : SP_NO_PRIORITY;
  }
  if (rnd(4) == 0) {
    s->replicated = sp_arena_calloc(a, (size_t)mesh->naxes + 1, sizeof *s->replicated);
    for (int ax = 0; ax < mesh->naxes && ax < 64 && s->replicated; ax++)
      if (!used[ax] && rnd(2)) s->replicated[s->nreplicated++] = (sp_axis_ref){mesh->axes[ax].name, 0, 0};
  }
  return s;
}

static bool mutate_sharding(parts *p) {
  if (rnd(4) == 0 && p->nfuncs > 0) { /* a function result */
    sp_op *f = p->funcs[rnd((uint32_t)p->nfuncs)];
    if (f->func->nresults == 0 || !f->func->result_shardings) return false;
    int i = (int)rnd((uint32_t)f->func->nresults);
    sp_type *t = f->func->result_types[i];
    if (!sp_type_is_static_tensor(t)) return false;
    f->func->result_shardings[i] = rnd(5) == 0 ? NULL : random_sharding(p, t->rank);
    return true;
  }
  if (p->nvalues == 0) return false;
  sp_value *v = p->values[rnd((uint32_t)p->nvalues)];
  v->sharding = rnd(5) == 0 ? NULL : random_sharding(p, v->type->rank);
  return true;
}

static bool mutate_mesh(parts *p) {
  const char *name;
  const sp_mesh *cm = the_mesh(p, &name);
  if (!cm) return false;
  sp_mesh *mesh = (sp_mesh *)cm;
  static const int64_t sizes[] = {1, 2, 2, 3, 4, 4, 8};
  mesh->ndevice_ids = 0;
  mesh->device_ids = NULL;
  if (rnd(4) == 0 && mesh->naxes < 6) { /* a new axis */
    sp_mesh_axis *axes = sp_arena_calloc(p->m->arena, (size_t)mesh->naxes + 1, sizeof *axes);
    if (!axes) return false;
    if (mesh->naxes > 0) memcpy(axes, mesh->axes, (size_t)mesh->naxes * sizeof *axes);
    axes[mesh->naxes].name = sp_arena_printf(p->m->arena, "z%d", mesh->naxes);
    axes[mesh->naxes].size = sizes[rnd(7)];
    mesh->axes = axes;
    mesh->naxes++;
    return true;
  }
  if (mesh->naxes == 0) return false;
  int ax = (int)rnd((uint32_t)mesh->naxes);
  int64_t old = mesh->axes[ax].size, devices = 1;
  mesh->axes[ax].size = sizes[rnd(7)];
  for (int i = 0; i < mesh->naxes; i++) devices *= mesh->axes[i].size;
  if (devices > 64) mesh->axes[ax].size = old; /* the fuzz cluster has 64 devices */
  return true;
}

static bool mutate_shape(parts *p) {
  if (p->ntypes == 0) return false;
  sp_type *t = p->types[rnd((uint32_t)p->ntypes)];
  int64_t from = t->dims[rnd((uint32_t)t->rank)];
  if (from == SP_DYN_DIM) return false;
  int64_t to;
  switch (rnd(4)) {
    case 0: to = from * 2; break;
    case 1: to = from % 2 == 0 ? from / 2 : from + 1; break;
    case 2: to = 1 + rnd(16); break;
    default: to = from * 3; break;
  }
  if (to == from || to > (1 << 20)) return false;
  for (int i = 0; i < p->ntypes; i++)
    for (int d = 0; d < p->types[i]->rank; d++)
      if (p->types[i]->dims[d] == from) p->types[i]->dims[d] = to;
  return true;
}

static const sp_op_kind binary_kinds[] = {SP_OP_ADD, SP_OP_SUBTRACT, SP_OP_MULTIPLY,
                                          SP_OP_DIVIDE, SP_OP_MAXIMUM, SP_OP_MINIMUM,
                                          SP_OP_POWER};
static const sp_op_kind unary_kinds[] = {SP_OP_NEGATE, SP_OP_EXP, SP_OP_TANH, SP_OP_SQRT,
                                         SP_OP_ABS, SP_OP_LOG, SP_OP_LOGISTIC};

static int kind_index(sp_op_kind k, const sp_op_kind *set, int n) {
  for (int i = 0; i < n; i++)
    if (set[i] == k) return i;
  return -1;
}

static bool mutate_op_kind(parts *p) {
  if (p->nops == 0) return false;
  sp_op *op = p->ops[rnd((uint32_t)p->nops)];
  const sp_op_kind *set = binary_kinds;
  int n = (int)(sizeof binary_kinds / sizeof binary_kinds[0]);
  if (kind_index(op->kind, set, n) < 0) {
    set = unary_kinds;
    n = (int)(sizeof unary_kinds / sizeof unary_kinds[0]);
    if (kind_index(op->kind, set, n) < 0) return false;
  }
  op->kind = set[rnd((uint32_t)n)];
  op->name = sp_op_kind_name(op->kind);
  return true;
}

static bool mutate_reroute(parts *p) {
  if (p->nops == 0) return false;
  sp_op *op = p->ops[rnd((uint32_t)p->nops)];
  if (op->noperands == 0 || !op->block) return false;
  int i = (int)rnd((uint32_t)op->noperands);
  sp_value *cur = op->operands[i].value;
  if (!cur) return false;
  sp_value *cands[256];
  int n = 0;
  sp_block *b = op->block;
  for (int k = 0; k < b->nargs && n < 256; k++)
    if (b->args[k] != cur && sp_type_equal(b->args[k]->type, cur->type)) cands[n++] = b->args[k];
  for (sp_op *q = b->first; q && q != op; q = q->next)
    for (int r = 0; r < q->nresults && n < 256; r++)
      if (&q->results[r] != cur && sp_type_equal(q->results[r].type, cur->type))
        cands[n++] = &q->results[r];
  if (n == 0) return false;
  sp_op_set_operand(op, i, cands[rnd((uint32_t)n)]);
  return true;
}

static bool mutate_remove(parts *p) {
  if (p->nops == 0) return false;
  int at = (int)rnd((uint32_t)p->nops);
  sp_op *op = p->ops[at];
  if (op->nresults != 1 || op->noperands < 1 || op->nregions != 0 || !op->block) return false;
  sp_value *in = op->operands[0].value;
  if (!in || !sp_type_equal(in->type, op->results[0].type)) return false;
  sp_value_replace_all_uses(&op->results[0], in);
  sp_op_erase(op);
  /* The op and its result leave the lists. */
  p->ops[at] = p->ops[--p->nops];
  for (int i = 0; i < p->nvalues; i++)
    if (p->values[i] == &op->results[0]) p->values[i--] = p->values[--p->nvalues];
  return true;
}

static bool mutate_constraint(parts *p) {
  if (p->nvalues == 0) return false;
  sp_value *v = p->values[rnd((uint32_t)p->nvalues)];
  sp_block *b = v->def ? v->def->block : v->block;
  if (!b || (!v->def && !b->first)) return false;
  sp_op *c = sp_op_create(p->m->arena, "sdy.sharding_constraint", 1, NULL, 1, &v->type, 0);
  if (!c) return false;
  c->results[0].sharding = random_sharding(p, v->type->rank);
  if (!c->results[0].sharding) return false;
  if (v->def) sp_op_insert_after(v->def, c);
  else sp_op_insert_before(b->first, c);
  sp_value_replace_all_uses(v, &c->results[0]);
  sp_op_set_operand(c, 0, v);
  return true;
}

/* ------------------------------------------------------------------ generation */

static size_t generate(uint8_t *data, size_t max_size) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.model = rnd(2) ? SP_GEN_MLP : SP_GEN_GPT;
  o.layers = 1 + (int)rnd(2);
  static const int64_t widths[] = {8, 16, 32, 64};
  o.hidden = widths[rnd(4)];
  o.heads = 1 << rnd(3);
  o.seq = 4 << rnd(2);
  o.batch = 2 << rnd(2);
  o.dtype = rnd(3) ? "f32" : "bf16";
  o.backward = rnd(3) == 0;
  o.naxes = 1 + (int)rnd(3);
  static const char *const names[] = {"data", "model", "pipe"};
  for (int i = 0; i < o.naxes; i++) {
    snprintf(o.axis_names[i], sizeof o.axis_names[i], "%s", names[i]);
    o.axis_sizes[i] = 1 + rnd(4);
  }
  o.annotate = (sp_gen_annotate)rnd(3);
  sp_err err;
  if (sp_gen_check(&o, &err) != SP_OK) {
    o.annotate = SP_GEN_ANNOTATE_NONE;
    o.heads = 1;
    if (sp_gen_check(&o, &err) != SP_OK) return 0;
  }
  sp_strbuf sb = SP_STRBUF_INIT;
  size_t n = 0;
  if (sp_gen_write(&o, &sb, NULL, &err) == SP_OK && sb.len <= max_size && !sb.oom) {
    memcpy(data, sb.buf, sb.len);
    n = sb.len;
  }
  sp_strbuf_free(&sb);
  return n;
}

/* ------------------------------------------------------------------ the mutator */

size_t sp_fuzz_mlir_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  sp_fuzz_seeds_done();   /* libFuzzer asks for mutations once the seeds have run */
  rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)seed * 0x2545F4914F6CDD1DULL) ^ size;
  rnd(2);
  sp_module *m = NULL;
  sp_err err;
  if (sp_mlir_parse((const char *)data, size, "in.mlir", 1, &m, &err) != SP_OK) {
    if (rnd(4) != 0 || !LLVMFuzzerMutate) {
      size_t n = generate(data, max_size);
      if (n) return n;
    }
    return LLVMFuzzerMutate ? LLVMFuzzerMutate(data, size, max_size) : size;
  }
  if (rnd(16) == 0 && LLVMFuzzerMutate) { /* keep exploring the syntax around valid modules */
    sp_module_free(m);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  parts *p = calloc(1, sizeof *p);
  if (!p) {
    sp_module_free(m);
    return size;
  }
  p->m = m;
  sp_op_walk(m->op, collect, p);
  int want = 1 + (int)rnd(3), done = 0;
  for (int tries = 0; tries < 16 && done < want; tries++) {
    bool ok;
    switch (rnd(10)) {
      case 0: case 1: case 2: ok = mutate_sharding(p); break;
      case 3: ok = mutate_mesh(p); break;
      case 4: ok = mutate_shape(p); break;
      case 5: ok = mutate_op_kind(p); break;
      case 6: ok = mutate_reroute(p); break;
      case 7: ok = mutate_remove(p); break;
      default: ok = mutate_constraint(p); break;
    }
    done += ok;
  }
  sp_strbuf sb = SP_STRBUF_INIT;
  size_t n = size;
  if (sp_mlir_print(m, &sb, &err) == SP_OK && !sb.oom && sb.len <= max_size) {
    memcpy(data, sb.buf, sb.len);
    n = sb.len;
  }
  sp_strbuf_free(&sb);
  free(p);
  sp_module_free(m);
  return n;
}
