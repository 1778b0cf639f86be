/*
 * graph_writer.c - IR -> shardplan.v1.Graph (see graph.h): every op, value, type, attribute,
 * sharding, rule and region as the message carries it, so that reading the message back
 * (graph_reader.c) builds the same IR.
 *
 * Value ids are positional, so no value table is needed: result i of op number n is
 * n * 2^20 + i + 1; argument k of the blocks of op n (counted over its regions and blocks in
 * order) is 2^62 + n * 2^20 + k. Op numbers are the pre-order numbers of graph.h, kept in each
 * op's pass_index scratch field while writing (so the module is not const).
 *
 * Memory: the message tree is allocated in one arena handed to the caller.
 */
#include "graph/graph.h"

#include <string.h>

#include "ir/sp_limits.h"

#define PER_OP ((uint64_t)1 << 20)
#define ARG_BASE ((uint64_t)1 << 62)

typedef struct writer {
  sp_arena *a;
  int64_t nops;
} writer;

#define NEW(w, var, T, INIT)                      \
  do {                                            \
    (var) = sp_arena_alloc((w)->a, sizeof(T));    \
    if (!(var)) return SP_ENOMEM;                 \
    T init_ = INIT;                               \
    *(var) = init_;                               \
  } while (0)

#define NEW_ARRAY(w, var, n)                                              \
  do {                                                                    \
    (var) = (n) ? sp_arena_calloc((w)->a, (size_t)(n), sizeof *(var)) : NULL; \
    if ((n) && !(var)) return SP_ENOMEM;                                  \
  } while (0)

static char *str(writer *w, const char *s) { return sp_arena_strdup(w->a, s ? s : ""); }

static int value_id(const sp_value *v, uint64_t *id) {
  if (v->def) {
    *id = (uint64_t)v->def->pass_index * PER_OP + (uint64_t)v->index + 1;
    return SP_OK;
  }
  const sp_region *reg = v->block ? v->block->parent : NULL;
  const sp_op *owner = reg ? reg->parent : NULL;
  if (!owner) return SP_EINTERNAL;
  uint64_t k = 0;
  for (int r = 0; r < owner->nregions; r++)
    for (int b = 0; b < owner->regions[r].nblocks; b++) {
      const sp_block *blk = owner->regions[r].blocks[b];
      if (blk == v->block) {
        *id = ARG_BASE + (uint64_t)owner->pass_index * PER_OP + k + (uint64_t)v->index;
        return SP_OK;
      }
      k += (uint64_t)blk->nargs;
    }
  return SP_EINTERNAL;
}

static int put_type(writer *w, const sp_type *t, Shardplan__V1__Type **out) {
  Shardplan__V1__Type *pt;
  NEW(w, pt, Shardplan__V1__Type, SHARDPLAN__V1__TYPE__INIT);
  if (!t) {
    *out = pt;
    return SP_OK;
  }
  switch (t->kind) {
    case SP_TYPE_TENSOR:
      pt->kind = SHARDPLAN__V1__TYPE__KIND__TENSOR;
      pt->element_type = str(w, t->elem);
      if (t->encoding) pt->encoding = str(w, t->encoding);
      if (t->rank < 0) {
        pt->unranked = true;
        break;
      }
      pt->n_shape = (size_t)t->rank;
      NEW_ARRAY(w, pt->shape, t->rank);
      for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] == SP_DYN_DIM) {
          pt->shape[d] = 0;
          pt->n_dynamic_dims++;
        } else {
          pt->shape[d] = t->dims[d];
        }
      }
      NEW_ARRAY(w, pt->dynamic_dims, pt->n_dynamic_dims);
      for (int d = 0, k = 0; d < t->rank; d++)
        if (t->dims[d] == SP_DYN_DIM) pt->dynamic_dims[k++] = (uint32_t)d;
      break;
    case SP_TYPE_TOKEN:
      pt->kind = SHARDPLAN__V1__TYPE__KIND__TOKEN;
      pt->text = str(w, t->text);
      break;
    case SP_TYPE_TUPLE:
      pt->kind = SHARDPLAN__V1__TYPE__KIND__TUPLE;
      pt->n_elements = (size_t)t->nelems;
      NEW_ARRAY(w, pt->elements, t->nelems);
      for (int i = 0; i < t->nelems; i++) {
        int rc = put_type(w, t->elems[i], &pt->elements[i]);
        if (rc) return rc;
      }
      break;
    case SP_TYPE_OTHER:
      pt->kind = SHARDPLAN__V1__TYPE__KIND__OTHER;
      pt->text = str(w, t->text);
      break;
  }
  *out = pt;
  return SP_OK;
}

static int put_mesh(writer *w, const sp_mesh *m, Shardplan__V1__Mesh **out) {
  Shardplan__V1__Mesh *pm;
  NEW(w, pm, Shardplan__V1__Mesh, SHARDPLAN__V1__MESH__INIT);
  pm->n_axes = (size_t)m->naxes;
  NEW_ARRAY(w, pm->axes, m->naxes);
  for (int i = 0; i < m->naxes; i++) {
    NEW(w, pm->axes[i], Shardplan__V1__MeshAxis, SHARDPLAN__V1__MESH_AXIS__INIT);
    pm->axes[i]->name = str(w, m->axes[i].name);
    pm->axes[i]->size = m->axes[i].size;
  }
  pm->n_device_ids = (size_t)m->ndevice_ids;
  NEW_ARRAY(w, pm->device_ids, m->ndevice_ids);
  for (int i = 0; i < m->ndevice_ids; i++) pm->device_ids[i] = m->device_ids[i];
  *out = pm;
  return SP_OK;
}

static int put_axes(writer *w, int n, const sp_axis_ref *v, size_t *nout,
                    Shardplan__V1__AxisRef ***out) {
  *nout = (size_t)n;
  NEW_ARRAY(w, *out, n);
  for (int i = 0; i < n; i++) {
    Shardplan__V1__AxisRef *a;
    NEW(w, a, Shardplan__V1__AxisRef, SHARDPLAN__V1__AXIS_REF__INIT);
    a->name = str(w, v[i].name);
    a->pre_size = v[i].size ? v[i].pre : 0;
    a->size = v[i].size;
    (*out)[i] = a;
  }
  return SP_OK;
}

static int put_sharding(writer *w, const sp_sharding *s, Shardplan__V1__Sharding **out) {
  Shardplan__V1__Sharding *ps;
  int rc;
  NEW(w, ps, Shardplan__V1__Sharding, SHARDPLAN__V1__SHARDING__INIT);
  if (s->inline_mesh) {
    ps->has_inline_mesh = true;
    if ((rc = put_mesh(w, s->inline_mesh, &ps->inline_mesh))) return rc;
  } else {
    ps->mesh_name = str(w, s->mesh_name);
  }
  ps->n_dims = (size_t)s->rank;
  NEW_ARRAY(w, ps->dims, s->rank);
  for (int d = 0; d < s->rank; d++) {
    Shardplan__V1__DimSharding *pd;
    NEW(w, pd, Shardplan__V1__DimSharding, SHARDPLAN__V1__DIM_SHARDING__INIT);
    if ((rc = put_axes(w, s->dims[d].naxes, s->dims[d].axes, &pd->n_axes, &pd->axes))) return rc;
    pd->closed = s->dims[d].closed;
    pd->has_priority = s->dims[d].priority != SP_NO_PRIORITY;
    pd->priority = pd->has_priority ? s->dims[d].priority : 0;
    ps->dims[d] = pd;
  }
  if ((rc = put_axes(w, s->nreplicated, s->replicated, &ps->n_replicated, &ps->replicated)) ||
      (rc = put_axes(w, s->nunreduced, s->unreduced, &ps->n_unreduced, &ps->unreduced)))
    return rc;
  if (s->unreduced_kind) ps->unreduced_kind = str(w, s->unreduced_kind);
  *out = ps;
  return SP_OK;
}

static int put_rule(writer *w, const sp_rule *r, Shardplan__V1__ShardingRule **out) {
  Shardplan__V1__ShardingRule *pr;
  NEW(w, pr, Shardplan__V1__ShardingRule, SHARDPLAN__V1__SHARDING_RULE__INIT);
  pr->custom = r->custom;
  pr->n_factors = (size_t)r->nfactors;
  NEW_ARRAY(w, pr->factors, r->nfactors);
  for (int i = 0; i < r->nfactors; i++) {
    NEW(w, pr->factors[i], Shardplan__V1__RuleFactor, SHARDPLAN__V1__RULE_FACTOR__INIT);
    pr->factors[i]->size = r->factors[i].size;
    pr->factors[i]->kind = (Shardplan__V1__FactorKind)r->factors[i].kind;
    pr->factors[i]->blocked = r->factors[i].blocked;
  }
  for (int side = 0; side < 2; side++) {
    int n = side ? r->nresults : r->noperands;
    const sp_rule_tensor *ts = side ? r->results : r->operands;
    Shardplan__V1__RuleTensor **pts;
    NEW_ARRAY(w, pts, n);
    for (int t = 0; t < n; t++) {
      NEW(w, pts[t], Shardplan__V1__RuleTensor, SHARDPLAN__V1__RULE_TENSOR__INIT);
      pts[t]->n_dims = (size_t)ts[t].rank;
      NEW_ARRAY(w, pts[t]->dims, ts[t].rank);
      for (int d = 0; d < ts[t].rank; d++) {
        Shardplan__V1__RuleDim *pd;
        NEW(w, pd, Shardplan__V1__RuleDim, SHARDPLAN__V1__RULE_DIM__INIT);
        pd->n_factors = (size_t)ts[t].dims[d].nfactors;
        NEW_ARRAY(w, pd->factors, ts[t].dims[d].nfactors);
        for (int k = 0; k < ts[t].dims[d].nfactors; k++)
          pd->factors[k] = (uint32_t)ts[t].dims[d].factors[k];
        pts[t]->dims[d] = pd;
      }
    }
    if (side) {
      pr->n_results = (size_t)n;
      pr->results = pts;
    } else {
      pr->n_operands = (size_t)n;
      pr->operands = pts;
    }
  }
  *out = pr;
  return SP_OK;
}

static int put_attr(writer *w, const sp_attr *at, Shardplan__V1__Attribute **out) {
  Shardplan__V1__Attribute *pa;
  int rc = SP_OK;
  NEW(w, pa, Shardplan__V1__Attribute, SHARDPLAN__V1__ATTRIBUTE__INIT);
  pa->name = str(w, at->name);
  switch (at->kind) {
    case SP_ATTR_UNIT:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_UNIT;
      pa->unit = true;
      break;
    case SP_ATTR_BOOL:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_BOOL_VALUE;
      pa->bool_value = at->u.b;
      break;
    case SP_ATTR_INT:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_INT_VALUE;
      pa->int_value = at->u.i;
      break;
    case SP_ATTR_INTS:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_INTS;
      NEW(w, pa->ints, Shardplan__V1__Ints, SHARDPLAN__V1__INTS__INIT);
      pa->ints->n_values = (size_t)at->u.ints.n;
      NEW_ARRAY(w, pa->ints->values, at->u.ints.n);
      for (int i = 0; i < at->u.ints.n; i++) pa->ints->values[i] = at->u.ints.v[i];
      break;
    case SP_ATTR_STR:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_STR;
      pa->str = str(w, at->u.s);
      break;
    case SP_ATTR_SYMBOL:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_SYMBOL;
      pa->symbol = str(w, at->u.s);
      break;
    case SP_ATTR_ENUM:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_ENUM_VALUE;
      pa->enum_value = str(w, at->u.s);
      break;
    case SP_ATTR_TEXT:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_TEXT;
      pa->text = str(w, at->u.s);
      break;
    case SP_ATTR_SHARDING:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_SHARDING;
      rc = put_sharding(w, at->u.sharding, &pa->sharding);
      break;
    case SP_ATTR_SHARDINGS:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_SHARDINGS;
      NEW(w, pa->shardings, Shardplan__V1__Shardings, SHARDPLAN__V1__SHARDINGS__INIT);
      pa->shardings->n_shardings = (size_t)at->u.shardings.n;
      NEW_ARRAY(w, pa->shardings->shardings, at->u.shardings.n);
      for (int i = 0; i < at->u.shardings.n && !rc; i++)
        rc = put_sharding(w, at->u.shardings.v[i], &pa->shardings->shardings[i]);
      break;
    case SP_ATTR_AXES:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_AXES;
      NEW(w, pa->axes, Shardplan__V1__AxisRefs, SHARDPLAN__V1__AXIS_REFS__INIT);
      rc = put_axes(w, at->u.axes.n, at->u.axes.v, &pa->axes->n_axes, &pa->axes->axes);
      break;
    case SP_ATTR_RULE:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_RULE;
      rc = put_rule(w, at->u.rule, &pa->rule);
      break;
    case SP_ATTR_MESH:
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_MESH;
      rc = put_mesh(w, at->u.mesh, &pa->mesh);
      break;
    case SP_ATTR_DIM_AXES:
    case SP_ATTR_ALL_TO_ALL: {
      /* The sdy collectives' axis lists travel as their MLIR text. */
      sp_strbuf sb = SP_STRBUF_INIT;
      if (at->kind == SP_ATTR_DIM_AXES)
        sp_dim_axes_print(&sb, at->u.dim_axes.v, at->u.dim_axes.n);
      else
        sp_all_to_all_params_print(&sb, at->u.all_to_all.v, at->u.all_to_all.n);
      pa->value_case = SHARDPLAN__V1__ATTRIBUTE__VALUE_TEXT;
      pa->text = str(w, sp_strbuf_str(&sb));
      sp_strbuf_free(&sb);
      if (!pa->text) rc = SP_ENOMEM;
      break;
    }
  }
  *out = pa;
  return rc;
}

static int put_attrs(writer *w, const sp_attrs *d, size_t *nout, Shardplan__V1__Attribute ***out,
                     const char *skip) {
  int n = d ? d->n : 0;
  NEW_ARRAY(w, *out, n);
  size_t k = 0;
  for (int i = 0; i < n; i++) {
    if (skip && strcmp(d->v[i].name, skip) == 0) continue;
    int rc = put_attr(w, &d->v[i], &(*out)[k++]);
    if (rc) return rc;
  }
  *nout = k;
  return SP_OK;
}

static int put_value(writer *w, const sp_value *v, Shardplan__V1__Value **out) {
  Shardplan__V1__Value *pv;
  int rc;
  NEW(w, pv, Shardplan__V1__Value, SHARDPLAN__V1__VALUE__INIT);
  if ((rc = value_id(v, &pv->id))) return rc;
  if (v->name_hint) pv->name = str(w, v->name_hint);
  if ((rc = put_type(w, v->type, &pv->type))) return rc;
  if (v->sharding) {
    pv->has_sharding = true;
    if ((rc = put_sharding(w, v->sharding, &pv->sharding))) return rc;
  }
  if ((rc = put_attrs(w, &v->attrs, &pv->n_attributes, &pv->attributes, NULL))) return rc;
  *out = pv;
  return SP_OK;
}

static int put_op(writer *w, sp_op *op, Shardplan__V1__Op **out);

static int put_block(writer *w, sp_block *b, Shardplan__V1__Block **out) {
  Shardplan__V1__Block *pb;
  int rc;
  NEW(w, pb, Shardplan__V1__Block, SHARDPLAN__V1__BLOCK__INIT);
  pb->n_arguments = (size_t)b->nargs;
  NEW_ARRAY(w, pb->arguments, b->nargs);
  for (int i = 0; i < b->nargs; i++)
    if ((rc = put_value(w, b->args[i], &pb->arguments[i]))) return rc;
  size_t n = 0;
  for (sp_op *op = b->first; op; op = op->next) n++;
  pb->n_ops = n;
  NEW_ARRAY(w, pb->ops, n);
  size_t k = 0;
  for (sp_op *op = b->first; op; op = op->next)
    if ((rc = put_op(w, op, &pb->ops[k++]))) return rc;
  *out = pb;
  return SP_OK;
}

static int put_func(writer *w, const sp_op *op, Shardplan__V1__FunctionSignature **out) {
  const sp_func_info *fi = op->func;
  Shardplan__V1__FunctionSignature *fs;
  int rc;
  NEW(w, fs, Shardplan__V1__FunctionSignature, SHARDPLAN__V1__FUNCTION_SIGNATURE__INIT);
  bool has_body = op->nregions && op->regions[0].nblocks;
  if (!has_body && fi->nargs) {
    fs->n_arg_types = (size_t)fi->nargs;
    NEW_ARRAY(w, fs->arg_types, fi->nargs);
    fs->n_arg_attributes = (size_t)fi->nargs;
    NEW_ARRAY(w, fs->arg_attributes, fi->nargs);
    for (int i = 0; i < fi->nargs; i++) {
      if ((rc = put_type(w, fi->arg_types[i], &fs->arg_types[i]))) return rc;
      NEW(w, fs->arg_attributes[i], Shardplan__V1__Attributes, SHARDPLAN__V1__ATTRIBUTES__INIT);
      if ((rc = put_attrs(w, fi->decl_arg_attrs ? &fi->decl_arg_attrs[i] : NULL,
                          &fs->arg_attributes[i]->n_attributes,
                          &fs->arg_attributes[i]->attributes, NULL)))
        return rc;
    }
  }
  fs->n_results = (size_t)fi->nresults;
  NEW_ARRAY(w, fs->results, fi->nresults);
  for (int i = 0; i < fi->nresults; i++) {
    Shardplan__V1__FunctionResult *fr;
    NEW(w, fr, Shardplan__V1__FunctionResult, SHARDPLAN__V1__FUNCTION_RESULT__INIT);
    if ((rc = put_type(w, fi->result_types[i], &fr->type))) return rc;
    if (fi->result_shardings && fi->result_shardings[i]) {
      fr->has_sharding = true;
      if ((rc = put_sharding(w, fi->result_shardings[i], &fr->sharding))) return rc;
    }
    if ((rc = put_attrs(w, fi->result_attrs ? &fi->result_attrs[i] : NULL, &fr->n_attributes,
                        &fr->attributes, NULL)))
      return rc;
    fs->results[i] = fr;
  }
  *out = fs;
  return SP_OK;
}

static int put_op(writer *w, sp_op *op, Shardplan__V1__Op **out) {
  Shardplan__V1__Op *po;
  int rc;
  NEW(w, po, Shardplan__V1__Op, SHARDPLAN__V1__OP__INIT);
  op->pass_index = (int)w->nops++;
  if ((uint64_t)op->nresults >= PER_OP) return SP_ELIMIT;
  po->name = str(w, op->name);
  po->n_operands = (size_t)op->noperands;
  NEW_ARRAY(w, po->operands, op->noperands);
  for (int i = 0; i < op->noperands; i++) {
    if (!op->operands[i].value) return SP_EINTERNAL;
    if ((rc = value_id(op->operands[i].value, &po->operands[i]))) return rc;
  }
  po->n_results = (size_t)op->nresults;
  NEW_ARRAY(w, po->results, op->nresults);
  for (int i = 0; i < op->nresults; i++)
    if ((rc = put_value(w, &op->results[i], &po->results[i]))) return rc;
  if ((rc = put_attrs(w, &op->attrs, &po->n_attributes, &po->attributes, NULL))) return rc;
  po->n_regions = (size_t)op->nregions;
  NEW_ARRAY(w, po->regions, op->nregions);
  for (int r = 0; r < op->nregions; r++) {
    Shardplan__V1__Region *pr;
    NEW(w, pr, Shardplan__V1__Region, SHARDPLAN__V1__REGION__INIT);
    pr->n_blocks = (size_t)op->regions[r].nblocks;
    NEW_ARRAY(w, pr->blocks, op->regions[r].nblocks);
    for (int b = 0; b < op->regions[r].nblocks; b++)
      if ((rc = put_block(w, op->regions[r].blocks[b], &pr->blocks[b]))) return rc;
    po->regions[r] = pr;
  }
  if (op->func) {
    po->has_function = true;
    if ((rc = put_func(w, op, &po->function))) return rc;
  }
  *out = po;
  return SP_OK;
}

int sp_graph_from_module(sp_module *m, Shardplan__V1__Graph **out, sp_arena **arena_out,
                         sp_err *err) {
  *out = NULL;
  *arena_out = NULL;
  writer w = {sp_arena_new(0), 0};
  if (!w.a) return sp_err_set(err, SP_ENOMEM, "out of memory");
  Shardplan__V1__Graph *g = sp_arena_alloc(w.a, sizeof *g);
  int rc = SP_ENOMEM;
  if (!g) goto fail;
  Shardplan__V1__Graph init = SHARDPLAN__V1__GRAPH__INIT;
  *g = init;
  const char *name = sp_op_get_str(m->op, "sym_name");
  if (name) g->name = str(&w, name);
  if ((rc = put_attrs(&w, &m->op->attrs, &g->n_attributes, &g->attributes, "sym_name")))
    goto fail;
  sp_block *body = sp_module_body(m);
  size_t n = 0;
  for (sp_op *op = body->first; op; op = op->next, n++)
    if (op->kind == SP_OP_MODULE) { /* MLIR text with two top-level modules nests them */
      sp_arena_free(w.a);
      return sp_err_set(err, SP_EUNSUPPORTED, "graph: nested modules are not supported");
    }
  g->n_ops = n;
  g->ops = n ? sp_arena_calloc(w.a, n, sizeof *g->ops) : NULL;
  if (n && !g->ops) goto fail;
  size_t k = 0;
  for (sp_op *op = body->first; op; op = op->next)
    if ((rc = put_op(&w, op, &g->ops[k++]))) goto fail;
  *out = g;
  *arena_out = w.a;
  return SP_OK;
fail:
  sp_arena_free(w.a);
  return sp_err_set(err, rc, rc == SP_ENOMEM ? "out of memory writing the graph"
                                             : "cannot write the module as a graph (%s)",
                    sp_status_name(rc));
}
