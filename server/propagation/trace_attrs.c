/*
 * trace_attrs.c - Shardy's debugging attributes from the propagation trace (see trace_attrs.h).
 */
#include "propagation/trace_attrs.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "propagation/data_flow_edges.h"
#include "propagation/trace.h"

/* ------------------------------------------------------------------ text */

static void put_end(sp_strbuf *sb, const sp_edge_end *e) {
  sp_strbuf_printf(sb, "%s-%d", e->result ? "result" : "operand", e->index);
}

/* #sdy.propagation_edges<[{step-N = [{"a" = operand-0 -> [result-0]}, ...]}, ...]> */
static void put_edges(sp_strbuf *sb, const sp_trace_edge *v, int n) {
  sp_strbuf_puts(sb, "#sdy.propagation_edges<[");
  for (int i = 0; i < n;) {
    int step = v[i].step;
    if (i) sp_strbuf_puts(sb, ", ");
    sp_strbuf_printf(sb, "{step-%d = [", step);
    for (int first = i; i < n && v[i].step == step; i++) {
      if (i > first) sp_strbuf_puts(sb, ", ");
      sp_strbuf_putc(sb, '{');
      sp_axis_ref_print(sb, &v[i].axis);
      sp_strbuf_puts(sb, " = ");
      put_end(sb, &v[i].source);
      sp_strbuf_puts(sb, " -> [");
      for (int k = 0; k < v[i].ntargets; k++) {
        if (k) sp_strbuf_puts(sb, ", ");
        put_end(sb, &v[i].targets[k]);
      }
      sp_strbuf_puts(sb, "]}");
    }
    sp_strbuf_puts(sb, "]}");
  }
  sp_strbuf_puts(sb, "]>");
}

/* The name Shardy gives an axis in an origins dictionary: a, c:(1)4. */
static char *axis_key(const sp_axis_ref *r) {
  sp_strbuf sb = SP_STRBUF_INIT;
  if (r->size) sp_strbuf_printf(&sb, "%s:(%lld)%lld", r->name, (long long)r->pre, (long long)r->size);
  else sp_strbuf_puts(&sb, r->name);
  return sp_strbuf_detach(&sb);
}

static bool bare_identifier(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (s++; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '$' || *s == '.')) return false;
  return true;
}

typedef struct keyed {
  char *key;
  const sp_origin *origin;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
  return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key);
}

/* {a = "self", "c:(1)4" = "input: 0"}; false on out-of-memory. */
static bool put_origins(sp_strbuf *sb, const sp_axis_origin *v, int n, const void *node) {
  keyed *k = calloc((size_t)(n ? n : 1), sizeof *k);
  bool ok = k != NULL;
  for (int i = 0; ok && i < n; i++) {
    k[i].origin = &v[i].origin;
    ok = (k[i].key = axis_key(&v[i].axis)) != NULL;
  }
  if (ok) {
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    sp_strbuf_putc(sb, '{');
    for (int i = 0; i < n; i++) {
      if (i) sp_strbuf_puts(sb, ", ");
      if (bare_identifier(k[i].key)) sp_strbuf_puts(sb, k[i].key);
      else sp_strbuf_printf(sb, "\"%s\"", k[i].key);
      sp_strbuf_puts(sb, " = \"");
      sp_trace_origin_print(sb, k[i].origin, node);
      sp_strbuf_putc(sb, '"');
    }
    sp_strbuf_putc(sb, '}');
  }
  for (int i = 0; k && i < n; i++) free(k[i].key);
  free(k);
  return ok;
}

/* Sets `name` = the builder's text (as verbatim MLIR) on `attrs`, and empties the builder. */
static int set_text(sp_module *m, sp_attrs *attrs, const char *name, sp_strbuf *sb) {
  if (!sp_strbuf_ok(sb)) return SP_ENOMEM;
  sp_attr at = {.name = name, .kind = SP_ATTR_TEXT};
  at.u.s = sp_arena_strdup(m->arena, sp_strbuf_str(sb));
  sp_strbuf_reset(sb);
  if (!at.u.s) return SP_ENOMEM;
  return sp_attrs_set(m->arena, attrs, &at);
}

/* ------------------------------------------------------------------ writing */

static bool own_sharding_attr(const sp_op *op) {
  return op->kind == SP_OP_SDY_SHARDING_CONSTRAINT || op->kind == SP_OP_SDY_DATA_FLOW_EDGE ||
         op->kind == SP_OP_SDY_RESHARD;
}

typedef struct writer {
  sp_module *m;
  const sp_trace *t;
  sp_strbuf sb;
  int rc;
} writer;

/* The origins of `node`, printed as seen from `self`. */
static int write_node(writer *w, sp_attrs *attrs, const void *node, const void *self) {
  int n;
  const sp_axis_origin *v = node ? sp_trace_origins(w->t, node, &n) : NULL;
  if (!v || !n) return SP_OK;
  if (!put_origins(&w->sb, v, n, self)) return SP_ENOMEM;
  return set_text(w->m, attrs, "sdy.sharding_origins", &w->sb);
}

static int write_func(writer *w, sp_op *fn) {
  int rc = SP_OK, n;
  sp_block *b = fn->nregions && fn->regions[0].nblocks ? fn->regions[0].blocks[0] : NULL;
  for (int i = 0; !rc && b && i < b->nargs; i++)
    rc = write_node(w, &b->args[i]->attrs, b->args[i], b->args[i]);
  for (int i = 0; !rc && fn->func->result_attrs && i < fn->func->nresults; i++)
    rc = write_node(w, &fn->func->result_attrs[i], sp_trace_func_result_node(fn, i),
                    sp_trace_func_result(fn, i));
  const sp_trace_edge *e = sp_trace_edges(w->t, fn, &n);
  if (!rc && n && fn->func->nresults && fn->func->result_attrs) {
    put_edges(&w->sb, e, n);
    rc = set_text(w->m, &fn->func->result_attrs[0], "sdy.propagation_edges", &w->sb);
  }
  return rc;
}

static int write_op(writer *w, sp_op *op) {
  int n, rc = SP_OK;
  const sp_trace_edge *e = sp_trace_edges(w->t, op, &n);
  if (n) {
    put_edges(&w->sb, e, n);
    if ((rc = set_text(w->m, &op->attrs, "sdy.propagation_edges", &w->sb))) return rc;
  }
  if (own_sharding_attr(op) && op->nresults == 1)
    return write_node(w, &op->attrs, &op->results[0], &op->results[0]);
  bool any = false;
  for (int i = 0; i < op->nresults && !any; i++) any = sp_trace_origins(w->t, &op->results[i], &n) && n;
  if (!any) return SP_OK;
  sp_strbuf_putc(&w->sb, '[');
  for (int i = 0; i < op->nresults; i++) {
    if (i) sp_strbuf_puts(&w->sb, ", ");
    const sp_axis_origin *v = sp_trace_origins(w->t, &op->results[i], &n);
    if (!put_origins(&w->sb, v, n, &op->results[i])) return SP_ENOMEM;
  }
  sp_strbuf_putc(&w->sb, ']');
  return set_text(w->m, &op->attrs, "sdy.sharding_origins", &w->sb);
}

static bool write_each(sp_op *op, void *ctx) {
  writer *w = ctx;
  if (op->kind == SP_OP_FUNC && op->func) w->rc = write_func(w, op);
  else if (op->kind != SP_OP_MODULE) w->rc = write_op(w, op);
  return w->rc == SP_OK;
}

int sp_trace_write_attrs(sp_module *m, sp_err *err) {
  const sp_trace *t = sp_trace_get(m);
  if (!t) return SP_OK;
  writer w = {m, t, SP_STRBUF_INIT, SP_OK};
  sp_op_walk(m->op, write_each, &w);
  sp_strbuf_free(&w.sb);
  return w.rc ? sp_err_set(err, w.rc, "out of memory writing the propagation trace") : SP_OK;
}

/* ------------------------------------------------------------------ sinking */

/* [entry, ...] of attribute `from` of the edges on `owners`, set as `to` on `op`. */
static int gather(sp_module *m, sp_op *op, sp_value *const *owners, const sp_value *results,
                  int n, const char *from, const char *to, sp_strbuf *sb) {
  int found = 0;
  for (int i = 0; i < n; i++) {
    sp_op *e = sp_data_flow_edge_of(owners ? owners[i] : &results[i]);
    const sp_attr *a = e ? sp_op_attr(e, from) : NULL;
    if (!a || a->kind != SP_ATTR_TEXT) continue;
    sp_strbuf_puts(sb, found++ ? ", " : "[");
    sp_strbuf_puts(sb, a->u.s);
  }
  if (!found) return SP_OK;
  sp_strbuf_putc(sb, ']');
  return set_text(m, &op->attrs, to, sb);
}

typedef struct sinker {
  sp_module *m;
  bool origins, edges;
  sp_strbuf sb;
  int rc;
} sinker;

static bool sink_each(sp_op *op, void *ctx) {
  sinker *s = ctx;
  if (!sp_data_flow_is_data_flow_op(op)) return true;
  bool body = op->kind == SP_OP_SDY_NAMED_COMPUTATION || op->kind == SP_OP_SDY_MANUAL_COMPUTATION;
  sp_block *b = body && op->nregions && op->regions[0].nblocks ? op->regions[0].blocks[0] : NULL;
  int rc = SP_OK;
  if (s->origins) {
    if (b) rc = gather(s->m, op, b->args, NULL, b->nargs, "sdy.sharding_origins",
                       "sdy.block_arg_sharding_origins", &s->sb);
    if (!rc) rc = gather(s->m, op, NULL, op->results, op->nresults, "sdy.sharding_origins",
                         "sdy.result_sharding_origins", &s->sb);
  }
  if (s->edges && !rc) {
    if (b) rc = gather(s->m, op, b->args, NULL, b->nargs, "sdy.propagation_edges",
                       "sdy.block_arg_propagation_edges", &s->sb);
    if (!rc) rc = gather(s->m, op, NULL, op->results, op->nresults, "sdy.propagation_edges",
                         "sdy.result_propagation_edges", &s->sb);
  }
  s->rc = rc;
  return rc == SP_OK;
}

int sp_trace_sink_attrs(sp_module *m, bool origins, bool edges, sp_err *err) {
  if (!origins && !edges) return SP_OK;
  sinker s = {m, origins, edges, SP_STRBUF_INIT, SP_OK};
  sp_op_walk(m->op, sink_each, &s);
  sp_strbuf_free(&s.sb);
  return s.rc ? sp_err_set(err, s.rc, "out of memory sinking the propagation trace") : SP_OK;
}
