/*
 * verify_unreduced.c - checks unreduced-axis transitions op by op (see verify_unreduced.h).
 */
#include "export/verify_unreduced.h"

#include <stdio.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/strbuf.h"

typedef struct checker {
  sp_module *m;
  bool have_pending;
  sp_loc pending_loc;
  char pending[400];
  bool oom;
} checker;

/* Reports one violation of `op` ("'NAME' op " and the message, sp_op_message): the previous
 * one goes to the diagnostics list, this one waits to be the returned error (so that a failing
 * run reports each exactly once). */
static void report(checker *c, const sp_op *op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(checker *c, const sp_op *op, const char *fmt, ...) {
  if (c->have_pending && sp_diag_emit(c->m->diags, SP_DIAG_ERROR, c->pending_loc, "%s", c->pending))
    c->oom = true;
  va_list ap;
  va_start(ap, fmt);
  sp_op_messagev(c->pending, sizeof c->pending, op->name, fmt, ap);
  va_end(ap);
  c->pending_loc = op->loc;
  c->have_pending = true;
}

static const char *kind_of(const sp_sharding *s) {
  return s && s->unreduced_kind ? s->unreduced_kind : "sum";
}

static bool has_axis(const sp_sharding *s, const sp_axis_ref *r) {
  for (int i = 0; s && i < s->nunreduced; i++)
    if (sp_axis_ref_equal(&s->unreduced[i], r)) return true;
  return false;
}

static void axis_text(char *buf, size_t n, const sp_axis_ref *r) {
  if (sp_axis_is_sub(r))
    snprintf(buf, n, "%s:(%lld)%lld", r->name, (long long)r->pre, (long long)r->size);
  else
    snprintf(buf, n, "%s", r->name);
}

static bool same_mesh(const sp_module *m, const sp_sharding *a, const sp_sharding *b) {
  if (!a || !b) return true;
  if (a->mesh_name && b->mesh_name) return strcmp(a->mesh_name, b->mesh_name) == 0;
  const sp_mesh *x = sp_module_sharding_mesh(m, a), *y = sp_module_sharding_mesh(m, b);
  return x && y && sp_mesh_equal(x, y);
}

/* The first axis unreduced in one of a, b and not in the other (NULL if none). */
static const sp_axis_ref *first_mismatch(const sp_sharding *a, const sp_sharding *b) {
  for (int i = 0; a && i < a->nunreduced; i++)
    if (!has_axis(b, &a->unreduced[i])) return &a->unreduced[i];
  for (int i = 0; b && i < b->nunreduced; i++)
    if (!has_axis(a, &b->unreduced[i])) return &b->unreduced[i];
  return NULL;
}

/* The reduction kind an op with a body computes ("sum", "max", "min"); "sum" by default. */
static const char *body_kind(const sp_op *op) {
  if (!op->nregions || !op->regions[0].nblocks) return "sum";
  for (const sp_op *b = op->regions[0].blocks[0]->first; b; b = b->next) {
    if (b->kind == SP_OP_MAXIMUM) return "max";
    if (b->kind == SP_OP_MINIMUM) return "min";
    if (b->kind == SP_OP_ADD) return "sum";
  }
  return "sum";
}

static bool any_overlap(const sp_sharding *in, const sp_axis_ref *axes, int n) {
  for (int i = 0; i < n; i++)
    if (has_axis(in, &axes[i])) return true;
  return false;
}

/* Reports (and returns true) when `out` keeps an unreduced axis of `in` under another kind. */
static bool check_kept_kind(checker *c, const sp_op *op, const sp_sharding *in,
                            const sp_sharding *out) {
  if (!in || !out || !in->nunreduced || !out->nunreduced || !same_mesh(c->m, in, out)) return false;
  if (strcmp(kind_of(in), kind_of(out)) == 0) return false;
  for (int i = 0; i < in->nunreduced; i++)
    if (has_axis(out, &in->unreduced[i])) {
      report(c, op, "cannot change the reduction operator of kept unreduced axes from %s to %s.",
             kind_of(in), kind_of(out));
      return true;
    }
  return false;
}

static void check_blessed(checker *c, const sp_op *op) {
  const sp_sharding *in = op->noperands ? op->operands[0].value->sharding : NULL;
  if (op->kind == SP_OP_SDY_RESHARD || op->kind == SP_OP_SDY_SHARDING_CONSTRAINT) {
    check_kept_kind(c, op, in, op->nresults ? op->results[0].sharding : NULL);
    return;
  }
  if (op->kind == SP_OP_SDY_ALL_REDUCE) {
    if (!in) {
      report(c, op, "operand must be sharded.");
      return;
    }
    sp_attr *at = sp_op_attr(op, "reduction_axes");
    int n = at && at->kind == SP_ATTR_AXES ? at->u.axes.n : 0;
    if (strcmp(kind_of(in), "sum") != 0 && any_overlap(in, n ? at->u.axes.v : NULL, n))
      report(c, op, "cannot reduce '%s' unreduced axes. Expected 'sum'.", kind_of(in));
    return;
  }
  if (op->kind == SP_OP_ALL_REDUCE) {
    for (int i = 0; i < op->noperands; i++) {
      const sp_sharding *s = op->operands[i].value->sharding;
      if (s && s->nunreduced && strcmp(kind_of(s), body_kind(op)) != 0) {
        report(c, op, "cannot reduce '%s' unreduced axes. Expected '%s'.", kind_of(s), body_kind(op));
        return;
      }
    }
  }
}

static void check_default(checker *c, const sp_op *op) {
  const char *own = op->kind == SP_OP_REDUCE || op->kind == SP_OP_REDUCE_WINDOW ? body_kind(op) : "sum";
  char ax[128];
  for (int r = 0; r < op->nresults; r++) {
    const sp_sharding *out = op->results[r].sharding;
    bool introduced_reported = false;
    for (int i = 0; i < op->noperands; i++) {
      const sp_sharding *in = op->operands[i].value->sharding;
      if (!in || !in->nunreduced || !same_mesh(c->m, in, out)) continue;
      for (int k = 0; k < in->nunreduced; k++)
        if (!has_axis(out, &in->unreduced[k])) {
          axis_text(ax, sizeof ax, &in->unreduced[k]);
          report(c, op, "dropped unreduced axis '%s' without a blessed operation (e.g., "
                 "sdy.reshard). This is an invalid transition from unreduced to reduced.", ax);
          return;
        }
      if (check_kept_kind(c, op, in, out)) return;
    }
    if (!out || !out->nunreduced || strcmp(kind_of(out), own) == 0) continue;
    /* Axes new in this result must be of the op's own kind. */
    for (int k = 0; k < out->nunreduced && !introduced_reported; k++) {
      bool old = false;
      for (int i = 0; i < op->noperands && !old; i++)
        old = has_axis(op->operands[i].value->sharding, &out->unreduced[k]);
      if (!old) {
        report(c, op, "cannot introduce '%s' unreduced axes. Expected '%s'.", kind_of(out), own);
        introduced_reported = true;
      }
    }
  }
}

static void check_call(checker *c, const sp_op *op) {
  const char *callee = sp_op_get_str(op, "callee");
  sp_op *f = callee ? sp_module_lookup_func(c->m, callee) : NULL;
  if (!f || !f->func) return;
  sp_block *entry = f->nregions && f->regions[0].nblocks ? f->regions[0].blocks[0] : NULL;
  char ax[128];
  for (int i = 0; i < op->noperands && entry && i < entry->nargs; i++) {
    const sp_axis_ref *bad = first_mismatch(op->operands[i].value->sharding, entry->args[i]->sharding);
    if (bad) {
      axis_text(ax, sizeof ax, bad);
      report(c, op, "has unreduced axes mismatch for '%s' at call argument %d.", ax, i);
    }
  }
  for (int i = 0; i < op->nresults && i < f->func->nresults; i++) {
    const sp_sharding *want = f->func->result_shardings ? f->func->result_shardings[i] : NULL;
    const sp_axis_ref *bad = first_mismatch(op->results[i].sharding, want);
    if (bad) {
      axis_text(ax, sizeof ax, bad);
      report(c, op, "has unreduced axes mismatch for '%s' at call result %d.", ax, i);
    }
  }
}

/* A function result may not ask for unreduced axes its returned value does not have. */
static void check_return(checker *c, const sp_op *op) {
  sp_op *f = sp_op_parent(op);
  if (!f || f->kind != SP_OP_FUNC || !f->func) return;
  char ax[128];
  for (int i = 0; i < op->noperands && i < f->func->nresults; i++) {
    const sp_sharding *want = f->func->result_shardings ? f->func->result_shardings[i] : NULL;
    const sp_sharding *have = op->operands[i].value->sharding;
    for (int k = 0; want && k < want->nunreduced; k++) {
      if (has_axis(have, &want->unreduced[k])) continue;
      axis_text(ax, sizeof ax, &want->unreduced[k]);
      report(c, op, "has unreduced axes mismatch for '%s' at return value %d without a "
             "blessed operation (e.g., sdy.reshard). This is an invalid transition from "
             "unreduced to reduced.", ax, i);
      break;
    }
  }
}

static bool check_op(sp_op *op, void *ctx) {
  checker *c = ctx;
  switch (op->kind) {
    case SP_OP_MODULE:
    case SP_OP_FUNC:
    case SP_OP_SDY_MESH:
    case SP_OP_SDY_RETURN:
    case SP_OP_RETURN: return true;
    case SP_OP_FUNC_RETURN: check_return(c, op); return true;
    case SP_OP_FUNC_CALL: check_call(c, op); return true;
    case SP_OP_SDY_RESHARD:
    case SP_OP_SDY_SHARDING_CONSTRAINT:
    case SP_OP_SDY_ALL_REDUCE:
    case SP_OP_ALL_REDUCE: check_blessed(c, op); return true;
    case SP_OP_SDY_ALL_GATHER:
    case SP_OP_SDY_ALL_SLICE:
    case SP_OP_SDY_ALL_TO_ALL:
    case SP_OP_SDY_COLLECTIVE_PERMUTE:
    case SP_OP_SDY_REDUCE_SCATTER: return true;
    default: check_default(c, op); return true;
  }
}

int sp_export_verify_unreduced_axes(sp_module *m, sp_err *err) {
  checker c;
  memset(&c, 0, sizeof c);
  c.m = m;
  sp_op_walk(m->op, check_op, &c);
  if (c.oom) return sp_err_set(err, SP_ENOMEM, "out of memory reporting unreduced axes");
  if (!c.have_pending) return SP_OK;
  return sp_error_at(err, SP_EINVAL, m, c.pending_loc, "%s", c.pending);
}
