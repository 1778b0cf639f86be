/*
 * writer.c - the MLIR printer: modules, regions, the generic op form, attribute dictionaries
 * (see writer_int.h and mlir.h).
 *
 * The printer reads the IR only. Shardings, rules, meshes and the structured attributes of
 * attr_schema_int.h are spelled from their structured form; attributes kept as text are printed as
 * they are. Attribute dictionaries are sorted by name, as MLIR's are.
 */
#include "mlir/writer_int.h"

#include <stdlib.h>
#include <string.h>

#include "ir/op_attrs.h"
#include "ir/sp_limits.h"
#include "mlir/attr_schema_int.h"
#include "mlir/format_int.h"
#include "mlir/mlir.h"
#include "mlir/spelling_int.h"

/* ------------------------------------------------------------------ basics */

void sp__mlir_w_newline(sp__mlir_writer *w) {
  static const char spaces[] = "                                                                ";
  sp_strbuf_putc(w->out, '\n');
  int n = w->indent * 2;
  while (n > 0) {
    int k = n < (int)sizeof spaces - 1 ? n : (int)sizeof spaces - 1;
    sp_strbuf_putn(w->out, spaces, (size_t)k);
    n -= k;
  }
}

void sp__mlir_w_op_name(sp__mlir_writer *w, const sp_op *op) {
  const char *name = op->name;
  size_t dn = w->default_dialect ? strlen(w->default_dialect) : 0;
  if (strncmp(name, "builtin.", 8) == 0)
    name += 8;
  else if (dn && strncmp(name, w->default_dialect, dn) == 0 && name[dn] == '.')
    name += dn + 1;
  sp__mlir_w_puts(w, name);
}

void sp__mlir_w_value(sp__mlir_writer *w, const sp_value *v) {
  sp__mlir_namer_value(w->names, w->out, v);
}

void sp__mlir_w_operands(sp__mlir_writer *w, const sp_op *op, int from, int to) {
  for (int i = from; i < to; i++) {
    if (i > from) sp__mlir_w_puts(w, ", ");
    sp__mlir_w_value(w, op->operands[i].value);
  }
}

void sp__mlir_w_operands_lead(sp__mlir_writer *w, const sp_op *op) {
  if (!op->noperands) return;
  sp__mlir_w_putc(w, ' ');
  sp__mlir_w_operands(w, op, 0, op->noperands);
}

void sp__mlir_w_type(sp__mlir_writer *w, const sp_type *t) {
  if (t) sp_type_print(w->out, t);
  else sp__mlir_w_puts(w, "<<NULL TYPE>>");
}

static const sp_type *operand_type(const sp_op *op, int i) {
  const sp_value *v = op->operands[i].value;
  return v ? v->type : NULL;
}

void sp__mlir_w_operand_types(sp__mlir_writer *w, const sp_op *op, int from, int to) {
  for (int i = from; i < to; i++) {
    if (i > from) sp__mlir_w_puts(w, ", ");
    sp__mlir_w_type(w, operand_type(op, i));
  }
}

void sp__mlir_w_result_types(sp__mlir_writer *w, const sp_op *op) {
  for (int i = 0; i < op->nresults; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    sp__mlir_w_type(w, op->results[i].type);
  }
}

void sp__mlir_w_function_type(sp__mlir_writer *w, const sp_op *op) {
  sp__mlir_w_putc(w, '(');
  sp__mlir_w_operand_types(w, op, 0, op->noperands);
  sp__mlir_w_puts(w, ") -> ");
  if (op->nresults == 1) {
    sp__mlir_w_type(w, op->results[0].type);
  } else {
    sp__mlir_w_putc(w, '(');
    sp__mlir_w_result_types(w, op);
    sp__mlir_w_putc(w, ')');
  }
}

void sp__mlir_w_symbol_call(sp__mlir_writer *w, const sp_op *op, const char *symbol_attr,
                            const char *symbol) {
  const char *const elided[] = {symbol_attr, NULL};
  sp__mlir_w_op_name(w, op);
  sp__mlir_w_putc(w, ' ');
  sp__mlir_put_symbol(w->out, symbol);
  sp__mlir_w_putc(w, '(');
  sp__mlir_w_operands(w, op, 0, op->noperands);
  sp__mlir_w_putc(w, ')');
  sp__mlir_w_attr_dict(w, op, elided, false);
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
}

void sp__mlir_w_same_or_function_type(sp__mlir_writer *w, const sp_op *op) {
  bool same = op->nresults == 1;
  for (int i = 0; i < op->noperands && same; i++)
    same = sp_type_equal(operand_type(op, i), op->results[0].type);
  if (same)
    sp__mlir_w_type(w, op->results[0].type);
  else
    sp__mlir_w_function_type(w, op);
}

/* ------------------------------------------------------------------ shardings */

void sp__mlir_w_sharding(sp__mlir_writer *w, const sp_sharding *s) { sp_sharding_print(w->out, s); }

void sp__mlir_w_shardings(sp__mlir_writer *w, sp_sharding *const *v, int n) {
  sp__mlir_w_putc(w, '[');
  for (int i = 0; i < n; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    sp__mlir_w_sharding(w, v[i]);
  }
  sp__mlir_w_putc(w, ']');
}

static int type_rank(const sp_type *t) {
  return t && t->kind == SP_TYPE_TENSOR && t->rank > 0 ? t->rank : 0;
}

/* A fully open sharding on the mesh of `like`, for a value of type `t`. */
static void put_open_sharding(sp__mlir_writer *w, const sp_sharding *like, const sp_type *t) {
  sp_sharding s;
  memset(&s, 0, sizeof s);
  s.mesh_name = like->mesh_name;
  s.inline_mesh = like->inline_mesh;
  sp_dim_sharding dims[SP_MAX_RANK];
  s.rank = type_rank(t);
  if (s.rank > SP_MAX_RANK) s.rank = SP_MAX_RANK;
  for (int i = 0; i < s.rank; i++) {
    dims[i].naxes = 0;
    dims[i].axes = NULL;
    dims[i].closed = false;
    dims[i].priority = SP_NO_PRIORITY;
  }
  s.dims = dims;
  sp__mlir_w_sharding(w, &s);
}

bool sp__mlir_w_result_shardings(sp__mlir_writer *w, const sp_op *op) {
  const sp_sharding *like = NULL;
  for (int i = 0; i < op->nresults && !like; i++) like = op->results[i].sharding;
  if (!like) return false;
  sp__mlir_w_putc(w, '[');
  for (int i = 0; i < op->nresults; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    if (op->results[i].sharding)
      sp__mlir_w_sharding(w, op->results[i].sharding);
    else
      put_open_sharding(w, like, op->results[i].type);
  }
  sp__mlir_w_putc(w, ']');
  return true;
}

static bool has_result_sharding(const sp_op *op) {
  for (int i = 0; i < op->nresults; i++)
    if (op->results[i].sharding) return true;
  return false;
}

/* ------------------------------------------------------------------ attribute values */

static void put_ints_array(sp__mlir_writer *w, const sp_ints *v) {
  sp__mlir_w_puts(w, v->n ? "array<i64: " : "array<i64");
  sp__mlir_put_ints(w->out, v->v, v->n);
  sp__mlir_w_putc(w, '>');
}

/* dense<[[lo, hi], ...]> : tensor<Nx2xi64>, splat when all equal. */
static void put_int_pairs(sp__mlir_writer *w, const sp_ints *v) {
  bool splat = v->n > 0;
  for (int i = 1; i < v->n && splat; i++) splat = v->v[i] == v->v[0];
  sp__mlir_w_puts(w, "dense<");
  if (splat) {
    sp_strbuf_put_i64(w->out, v->v[0]);
  } else if (v->n) {
    sp__mlir_w_putc(w, '[');
    for (int i = 0; i + 1 < v->n; i += 2)
      sp_strbuf_printf(w->out, "%s[%lld, %lld]", i ? ", " : "", (long long)v->v[i],
                       (long long)v->v[i + 1]);
    sp__mlir_w_putc(w, ']');
  }
  sp_strbuf_printf(w->out, "> : tensor<%dx2xi64>", v->n / 2);
}

static void put_axes(sp__mlir_writer *w, const sp_axis_ref *v, int n) {
  sp__mlir_w_putc(w, '{');
  sp_axis_refs_print(w->out, v, n);
  sp__mlir_w_putc(w, '}');
}

void sp__mlir_w_dim_axes(sp__mlir_writer *w, const sp_dim_sharding *v, int n) {
  sp_dim_axes_print(w->out, v, n);
}

void sp__mlir_w_all_to_all_params(sp__mlir_writer *w, const sp_all_to_all_param *v, int n) {
  sp_all_to_all_params_print(w->out, v, n);
}

void sp__mlir_w_attr_value(sp__mlir_writer *w, sp_op_kind kind, const sp_attr *a) {
  const sp__mlir_attr_schema *s = sp__mlir_schema_find(kind, a->name);
  switch (a->kind) {
    case SP_ATTR_UNIT: sp__mlir_w_puts(w, "unit"); return;
    case SP_ATTR_BOOL: sp__mlir_w_puts(w, a->u.b ? "true" : "false"); return;
    case SP_ATTR_INT:
      sp_strbuf_printf(w->out, "%lld : %s", (long long)a->u.i,
                       s && s->form == SP__FORM_INT && s->extra ? s->extra : "i64");
      return;
    case SP_ATTR_INTS:
      if (s && s->form == SP__FORM_INTS_PAIRS) put_int_pairs(w, &a->u.ints);
      else put_ints_array(w, &a->u.ints);
      return;
    case SP_ATTR_STR: sp__mlir_put_string(w->out, a->u.s, strlen(a->u.s)); return;
    case SP_ATTR_SYMBOL: sp__mlir_put_symbol(w->out, a->u.s); return;
    case SP_ATTR_ENUM:
      if (s && s->form == SP__FORM_ENUM && s->extra)
        sp_strbuf_printf(w->out, "%s %s>", s->extra, a->u.s);
      else
        sp__mlir_w_puts(w, a->u.s);
      return;
    case SP_ATTR_TEXT: sp__mlir_w_puts(w, a->u.s); return;
    case SP_ATTR_SHARDING:
      sp__mlir_w_puts(w, "#sdy.sharding");
      sp__mlir_w_sharding(w, a->u.sharding);
      return;
    case SP_ATTR_SHARDINGS:
      sp__mlir_w_puts(w, "#sdy.sharding_per_value<");
      sp__mlir_w_shardings(w, a->u.shardings.v, a->u.shardings.n);
      sp__mlir_w_putc(w, '>');
      return;
    case SP_ATTR_AXES: put_axes(w, a->u.axes.v, a->u.axes.n); return;
    case SP_ATTR_DIM_AXES:
      sp__mlir_w_puts(w, "#sdy<list_of_axis_ref_lists");
      sp__mlir_w_dim_axes(w, a->u.dim_axes.v, a->u.dim_axes.n);
      sp__mlir_w_putc(w, '>');
      return;
    case SP_ATTR_ALL_TO_ALL:
      sp__mlir_w_puts(w, "#sdy<all_to_all_param_list");
      sp__mlir_w_all_to_all_params(w, a->u.all_to_all.v, a->u.all_to_all.n);
      sp__mlir_w_putc(w, '>');
      return;
    case SP_ATTR_RULE: sp_rule_print(w->out, a->u.rule); return;
    case SP_ATTR_MESH:
      sp__mlir_w_puts(w, "#sdy.mesh");
      sp_mesh_print(w->out, a->u.mesh);
      return;
  }
}

/* ------------------------------------------------------------------ composites */

static void put_conv_group(sp__mlir_writer *w, const sp_op *op, const char *batch,
                           const char *feature, const char *spatial, char bl, char fl) {
  int64_t b = -1, f = -1;
  sp_ints sp = {0, NULL};
  sp_op_get_int(op, batch, &b);
  sp_op_get_int(op, feature, &f);
  sp_op_get_ints(op, spatial, &sp);
  int rank = sp.n + 2;
  sp__mlir_w_putc(w, '[');
  for (int d = 0; d < rank; d++) {
    if (d) sp__mlir_w_puts(w, ", ");
    if (d == b) {
      sp__mlir_w_putc(w, bl);
      continue;
    }
    if (d == f) {
      sp__mlir_w_putc(w, fl);
      continue;
    }
    int k = -1;
    for (int i = 0; i < sp.n; i++)
      if (sp.v[i] == d) k = i;
    if (k >= 0) sp_strbuf_printf(w->out, "%d", k);
    else sp__mlir_w_putc(w, '?');
  }
  sp__mlir_w_putc(w, ']');
}

void sp__mlir_w_conv_dims(sp__mlir_writer *w, const sp_op *op) {
  put_conv_group(w, op, "input_batch_dimension", "input_feature_dimension",
                 "input_spatial_dimensions", 'b', 'f');
  sp__mlir_w_putc(w, 'x');
  put_conv_group(w, op, "kernel_input_feature_dimension", "kernel_output_feature_dimension",
                 "kernel_spatial_dimensions", 'i', 'o');
  sp__mlir_w_puts(w, "->");
  put_conv_group(w, op, "output_batch_dimension", "output_feature_dimension",
                 "output_spatial_dimensions", 'b', 'f');
}

static void put_composite(sp__mlir_writer *w, const sp_op *op, const sp__mlir_attr_schema *s) {
  if (s->form == SP__FORM_CONV_DIMS) {
    sp__mlir_w_puts(w, "#stablehlo.conv<");
    sp__mlir_w_conv_dims(w, op);
    sp__mlir_w_putc(w, '>');
    return;
  }
  const char *parts[8];
  bool is_int[8];
  int n = sp__mlir_schema_parts(s->form, parts, is_int);
  sp__mlir_w_puts(w, s->form == SP__FORM_GATHER_DIMS    ? "#stablehlo.gather<"
                     : s->form == SP__FORM_SCATTER_DIMS ? "#stablehlo.scatter<"
                                                        : "#stablehlo.dot<");
  bool first = true;
  for (int i = 0; i < n; i++) {
    if (is_int[i]) {
      int64_t v;
      if (!sp_op_get_int(op, parts[i], &v)) continue;
      sp_strbuf_printf(w->out, "%s%s = %lld", first ? "" : ", ", parts[i], (long long)v);
    } else {
      sp_ints v;
      if (!sp_op_get_ints(op, parts[i], &v) || v.n == 0) continue;
      sp_strbuf_printf(w->out, "%s%s = [", first ? "" : ", ", parts[i]);
      sp__mlir_put_ints(w->out, v.v, v.n);
      sp__mlir_w_putc(w, ']');
    }
    first = false;
  }
  sp__mlir_w_putc(w, '>');
}

/* ------------------------------------------------------------------ dictionaries */

typedef struct dict_item {
  const char *name;
  const sp_attr *attr;                 /* a plain attribute, or */
  const sp__mlir_attr_schema *composite; /* a composite rebuilt from its parts, or */
  bool result_shardings;               /* the results' shardings as sdy.sharding */
} dict_item;

static int cmp_item(const void *a, const void *b) {
  return strcmp(((const dict_item *)a)->name, ((const dict_item *)b)->name);
}

static bool in_list(const char *const *list, const char *name) {
  for (; list && *list; list++)
    if (strcmp(*list, name) == 0) return true;
  return false;
}

enum { ALL_ATTRS, INHERENT_ATTRS, DISCARDABLE_ATTRS };

/* Collects the printable entries; returns how many (items has room for op->attrs.n + 1). */
static int collect_items(const sp_op *op, const char *const *elided, int which, dict_item *items) {
  int n = 0;
  for (int i = 0; i < op->attrs.n; i++) {
    const sp_attr *a = &op->attrs.v[i];
    if (in_list(elided, a->name)) continue;
    const sp__mlir_attr_schema *s = sp__mlir_schema_find(op->kind, a->name);
    dict_item it = {a->name, a, NULL, false};
    if (s && s->form == SP__FORM_SUB) {
      if (in_list(elided, s->extra)) continue;
      const sp__mlir_attr_schema *parent = sp__mlir_schema_find(op->kind, s->extra);
      if (!parent) continue;
      bool seen = false;
      for (int k = 0; k < n && !seen; k++) seen = items[k].composite == parent;
      if (seen) continue;
      it.name = parent->name;
      it.attr = NULL;
      it.composite = parent;
      s = parent;
    }
    bool inherent = s && s->inherent;
    if ((which == INHERENT_ATTRS && !inherent) || (which == DISCARDABLE_ATTRS && inherent)) continue;
    items[n++] = it;
  }
  if (which != INHERENT_ATTRS && !in_list(elided, "sdy.sharding") && has_result_sharding(op) &&
      !sp_attrs_get(&op->attrs, "sdy.sharding")) {
    dict_item it = {"sdy.sharding", NULL, NULL, true};
    items[n++] = it;
  }
  qsort(items, (size_t)n, sizeof *items, cmp_item);
  return n;
}

static void put_items(sp__mlir_writer *w, const sp_op *op, const dict_item *items, int n) {
  for (int i = 0; i < n; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    sp__mlir_put_attr_name(w->out, items[i].name);
    if (items[i].attr && items[i].attr->kind == SP_ATTR_UNIT) continue;
    sp__mlir_w_puts(w, " = ");
    if (items[i].result_shardings) {
      sp__mlir_w_puts(w, "#sdy.sharding_per_value<");
      sp__mlir_w_result_shardings(w, op);
      sp__mlir_w_putc(w, '>');
    } else if (items[i].composite) {
      put_composite(w, op, items[i].composite);
    } else {
      sp__mlir_w_attr_value(w, op->kind, items[i].attr);
    }
  }
}

static void w_dict(sp__mlir_writer *w, const sp_op *op, const char *const *elided, int which,
                   const char *open, const char *close) {
  dict_item stack_items[16];
  dict_item *items = stack_items;
  if (op->attrs.n + 1 > 16) {
    items = malloc((size_t)(op->attrs.n + 1) * sizeof *items);
    if (!items) {
      w->out->oom = true;
      return;
    }
  }
  int n = collect_items(op, elided, which, items);
  if (n) {
    sp__mlir_w_puts(w, open);
    put_items(w, op, items, n);
    sp__mlir_w_puts(w, close);
  }
  if (items != stack_items) free(items);
}

void sp__mlir_w_attr_dict(sp__mlir_writer *w, const sp_op *op, const char *const *elided,
                          bool keyword) {
  w_dict(w, op, elided, ALL_ATTRS, keyword ? " attributes {" : " {", "}");
}

void sp__mlir_w_value_attrs(sp__mlir_writer *w, const sp_sharding *sharding,
                            const sp_attrs *attrs) {
  int n = attrs ? attrs->n : 0;
  if (!sharding && n == 0) return;
  dict_item stack_items[16];
  dict_item *items = n + 1 > 16 ? malloc((size_t)(n + 1) * sizeof *items) : stack_items;
  if (!items) {
    w->out->oom = true;
    return;
  }
  int k = 0;
  for (int i = 0; i < n; i++) {
    dict_item it = {attrs->v[i].name, &attrs->v[i], NULL, false};
    items[k++] = it;
  }
  sp_attr sh = {.name = "sdy.sharding", .kind = SP_ATTR_SHARDING};
  if (sharding && !(attrs && sp_attrs_get(attrs, "sdy.sharding"))) {
    sh.u.sharding = (sp_sharding *)sharding;
    dict_item it = {sh.name, &sh, NULL, false};
    items[k++] = it;
  }
  qsort(items, (size_t)k, sizeof *items, cmp_item);
  sp__mlir_w_puts(w, " {");
  for (int i = 0; i < k; i++) {
    if (i) sp__mlir_w_puts(w, ", ");
    sp__mlir_put_attr_name(w->out, items[i].name);
    if (items[i].attr->kind == SP_ATTR_UNIT) continue;
    sp__mlir_w_puts(w, " = ");
    sp__mlir_w_attr_value(w, SP_OP_UNKNOWN, items[i].attr);
  }
  sp__mlir_w_putc(w, '}');
  if (items != stack_items) free(items);
}

void sp__mlir_w_arg_decl(sp__mlir_writer *w, const sp_value *v) {
  sp__mlir_w_value(w, v);
  sp__mlir_w_puts(w, ": ");
  sp__mlir_w_type(w, v->type);
  sp__mlir_w_value_attrs(w, v->sharding, &v->attrs);
}

/* ------------------------------------------------------------------ regions and ops */

static void w_block_header(sp__mlir_writer *w, const sp_block *b) {
  sp_strbuf_printf(w->out, "^bb%d", sp__mlir_namer_block(w->names, b));
  if (b->nargs) {
    sp__mlir_w_putc(w, '(');
    for (int i = 0; i < b->nargs; i++) {
      if (i) sp__mlir_w_puts(w, ", ");
      sp__mlir_w_arg_decl(w, b->args[i]);
    }
    sp__mlir_w_putc(w, ')');
  }
  sp__mlir_w_putc(w, ':');
}

void sp__mlir_w_region(sp__mlir_writer *w, const sp_region *r, bool entry_args) {
  const char *saved = w->default_dialect;
  const sp_op *parent = r->parent;
  w->default_dialect = parent && parent->kind == SP_OP_FUNC     ? "func"
                       : parent && parent->kind == SP_OP_MODULE ? "builtin"
                                                                : "";
  sp__mlir_w_putc(w, '{');
  for (int i = 0; i < r->nblocks; i++) {
    const sp_block *b = r->blocks[i];
    /* An empty entry block followed by others needs its label to survive a re-parse. */
    if (i > 0 || (entry_args && b->nargs > 0) || (!b->first && r->nblocks > 1)) {
      sp__mlir_w_newline(w);
      w_block_header(w, b);
    }
    w->indent++;
    for (const sp_op *op = b->first; op; op = op->next) {
      sp__mlir_w_newline(w);
      sp__mlir_w_op(w, op);
    }
    w->indent--;
  }
  sp__mlir_w_newline(w);
  sp__mlir_w_putc(w, '}');
  w->default_dialect = saved;
}

void sp__mlir_w_generic_op(sp__mlir_writer *w, const sp_op *op) {
  sp__mlir_put_string(w->out, op->name, strlen(op->name));
  sp__mlir_w_putc(w, '(');
  sp__mlir_w_operands(w, op, 0, op->noperands);
  sp__mlir_w_putc(w, ')');
  w_dict(w, op, NULL, INHERENT_ATTRS, " <{", "}>");
  if (op->nregions) {
    sp__mlir_w_puts(w, " (");
    for (int i = 0; i < op->nregions; i++) {
      if (i) sp__mlir_w_puts(w, ", ");
      sp__mlir_w_region(w, &op->regions[i], true);
    }
    sp__mlir_w_putc(w, ')');
  }
  w_dict(w, op, NULL, DISCARDABLE_ATTRS, " {", "}");
  sp__mlir_w_puts(w, " : ");
  sp__mlir_w_function_type(w, op);
}

void sp__mlir_w_op(sp__mlir_writer *w, const sp_op *op) {
  sp__mlir_namer_results(w->names, w->out, op);
  const sp__mlir_format *f = sp__mlir_format_for(op->kind);
  if (f && f->print && f->print(w, op)) return;
  sp__mlir_w_generic_op(w, op);
}

int sp_mlir_print(const sp_module *m, sp_strbuf *out, sp_err *err) {
  sp__mlir_writer w;
  memset(&w, 0, sizeof w);
  w.out = out;
  w.m = m;
  w.default_dialect = "";
  int rc = sp__mlir_namer_build(m->op, &w.names);
  if (rc) return sp_err_set(err, rc, "out of memory while printing");
  sp__mlir_w_op(&w, m->op);
  sp_strbuf_putc(out, '\n');
  sp__mlir_namer_free(w.names);
  if (!sp_strbuf_ok(out)) return sp_err_set(err, SP_ENOMEM, "out of memory while printing");
  return SP_OK;
}

/* ------------------------------------------------------------------ value names (mlir.h) */

struct sp_mlir_names {
  sp__mlir_namer *namer;
};

int sp_mlir_names_new(const sp_module *m, sp_mlir_names **out, sp_err *err) {
  *out = NULL;
  sp_mlir_names *n = calloc(1, sizeof *n);
  if (!n || sp__mlir_namer_build(m->op, &n->namer) != SP_OK) {
    free(n);
    return sp_err_set(err, SP_ENOMEM, "out of memory naming values");
  }
  *out = n;
  return SP_OK;
}

void sp_mlir_names_value(const sp_mlir_names *n, sp_strbuf *sb, const sp_value *v) {
  sp__mlir_namer_value(n->namer, sb, v);
}

void sp_mlir_names_free(sp_mlir_names *n) {
  if (!n) return;
  sp__mlir_namer_free(n->namer);
  free(n);
}
