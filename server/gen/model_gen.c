/*
 * model_gen.c - MLIR generators for MLP and GPT-style models (see model_gen.h).
 *
 * An emitter appends one op per line to the output, numbering results %0, %1, ... and
 * arguments %arg0, ...; a `val` remembers a value's name and shape so that each op can print
 * its types. Shapes are computed here, so the output always type-checks.
 */
#include "gen/model_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 6

typedef struct val {
  int id;                 /* >= 0: result %id; < 0: argument %arg(-id-1) */
  int rank;
  int64_t dims[MAX_RANK];
} val;

typedef struct emitter {
  sp_strbuf *sb;
  const sp_gen_options *o;
  int next_id;
  int64_t nops;
} emitter;

/* ------------------------------------------------------------------ printing helpers */

static void put_name(emitter *e, val v) {
  if (v.id >= 0)
    sp_strbuf_printf(e->sb, "%%%d", v.id);
  else
    sp_strbuf_printf(e->sb, "%%arg%d", -v.id - 1);
}

static void put_type(emitter *e, val v) {
  sp_strbuf_puts(e->sb, "tensor<");
  for (int i = 0; i < v.rank; i++) sp_strbuf_printf(e->sb, "%lldx", (long long)v.dims[i]);
  sp_strbuf_printf(e->sb, "%s>", e->o->dtype);
}

static void put_dims_list(emitter *e, const int *d, int n) {
  sp_strbuf_putc(e->sb, '[');
  for (int i = 0; i < n; i++) sp_strbuf_printf(e->sb, "%s%d", i ? ", " : "", d[i]);
  sp_strbuf_putc(e->sb, ']');
}

/* Ends an op line with its function type: " : (a, b) -> r". */
static void put_function_type(emitter *e, const val *operands, int n, val result) {
  sp_strbuf_puts(e->sb, " : (");
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(e->sb, ", ");
    put_type(e, operands[i]);
  }
  sp_strbuf_puts(e->sb, ") -> ");
  put_type(e, result);
  sp_strbuf_putc(e->sb, '\n');
}

static val shape(int rank, const int64_t *dims) {
  val v = {0, rank, {0}};
  if (rank > 0) memcpy(v.dims, dims, (size_t)rank * sizeof *dims);  /* scalars pass NULL */
  return v;
}

static val begin_op(emitter *e, val result) {
  result.id = e->next_id++;
  sp_strbuf_puts(e->sb, "    ");
  put_name(e, result);
  sp_strbuf_puts(e->sb, " = ");
  e->nops++;
  return result;
}

/* ------------------------------------------------------------------ ops */

static val scalar_constant(emitter *e, const char *literal) {
  val r = begin_op(e, shape(0, NULL));
  sp_strbuf_printf(e->sb, "stablehlo.constant dense<%s> : ", literal);
  put_type(e, r);
  sp_strbuf_putc(e->sb, '\n');
  return r;
}

static val unary(emitter *e, const char *op, val a) {
  val r = begin_op(e, a);
  sp_strbuf_printf(e->sb, "stablehlo.%s ", op);
  put_name(e, a);
  sp_strbuf_puts(e->sb, " : ");
  put_type(e, r);
  sp_strbuf_putc(e->sb, '\n');
  return r;
}

static val binary(emitter *e, const char *op, val a, val b) {
  val r = begin_op(e, a);
  sp_strbuf_printf(e->sb, "stablehlo.%s ", op);
  put_name(e, a);
  sp_strbuf_puts(e->sb, ", ");
  put_name(e, b);
  sp_strbuf_puts(e->sb, " : ");
  put_type(e, r);
  sp_strbuf_putc(e->sb, '\n');
  return r;
}

static bool in_list(int x, const int *v, int n) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* dot_general: result dims are batch dims, lhs free dims, rhs free dims. */
static val dot(emitter *e, val a, val b, const int *lb, const int *rb, int nb, const int *lc,
               const int *rc, int nc) {
  int64_t dims[MAX_RANK];
  int rank = 0;
  for (int i = 0; i < nb; i++) dims[rank++] = a.dims[lb[i]];
  for (int i = 0; i < a.rank; i++)
    if (!in_list(i, lb, nb) && !in_list(i, lc, nc)) dims[rank++] = a.dims[i];
  for (int i = 0; i < b.rank; i++)
    if (!in_list(i, rb, nb) && !in_list(i, rc, nc)) dims[rank++] = b.dims[i];
  val r = begin_op(e, shape(rank, dims));
  sp_strbuf_puts(e->sb, "stablehlo.dot_general ");
  put_name(e, a);
  sp_strbuf_puts(e->sb, ", ");
  put_name(e, b);
  if (nb) {
    sp_strbuf_puts(e->sb, ", batching_dims = ");
    put_dims_list(e, lb, nb);
    sp_strbuf_puts(e->sb, " x ");
    put_dims_list(e, rb, nb);
  }
  sp_strbuf_puts(e->sb, ", contracting_dims = ");
  put_dims_list(e, lc, nc);
  sp_strbuf_puts(e->sb, " x ");
  put_dims_list(e, rc, nc);
  val ab[2] = {a, b};
  put_function_type(e, ab, 2, r);
  return r;
}

/* x[..., k] . w[k, n] -> [..., n] */
static val matmul(emitter *e, val x, val w) {
  int lc = x.rank - 1, rc = 0;
  return dot(e, x, w, NULL, NULL, 0, &lc, &rc, 1);
}

/* dy[..., n] . w[k, n]^T -> [..., k] */
static val matmul_transposed(emitter *e, val dy, val w) {
  int lc = dy.rank - 1, rc = 1;
  return dot(e, dy, w, NULL, NULL, 0, &lc, &rc, 1);
}

/* Weight gradient: contract every leading (batch, sequence) dim of x and dy. */
static val weight_grad(emitter *e, val x, val dy) {
  int c[MAX_RANK];
  for (int i = 0; i < x.rank - 1; i++) c[i] = i;
  return dot(e, x, dy, NULL, NULL, 0, c, c, x.rank - 1);
}

static val reduce(emitter *e, val a, const char *combiner, const char *init, int dim) {
  val c = scalar_constant(e, init);
  int64_t dims[MAX_RANK];
  int rank = 0;
  for (int i = 0; i < a.rank; i++)
    if (i != dim) dims[rank++] = a.dims[i];
  val r = begin_op(e, shape(rank, dims));
  sp_strbuf_puts(e->sb, "stablehlo.reduce(");
  put_name(e, a);
  sp_strbuf_puts(e->sb, " init: ");
  put_name(e, c);
  sp_strbuf_printf(e->sb, ") applies stablehlo.%s across dimensions = [%d]", combiner, dim);
  val ac[2] = {a, c};
  put_function_type(e, ac, 2, r);
  return r;
}

static val broadcast(emitter *e, val a, const int *map, val to) {
  val r = begin_op(e, to);
  sp_strbuf_puts(e->sb, "stablehlo.broadcast_in_dim ");
  put_name(e, a);
  sp_strbuf_puts(e->sb, ", dims = ");
  put_dims_list(e, map, a.rank);
  put_function_type(e, &a, 1, r);
  return r;
}

/* Broadcast `a` (the leading dims of `like`) back to `like`'s shape. */
static val broadcast_leading(emitter *e, val a, val like) {
  int map[MAX_RANK];
  for (int i = 0; i < a.rank; i++) map[i] = i;
  return broadcast(e, a, map, like);
}

static val reshape(emitter *e, val a, int rank, const int64_t *dims) {
  val r = begin_op(e, shape(rank, dims));
  sp_strbuf_puts(e->sb, "stablehlo.reshape ");
  put_name(e, a);
  put_function_type(e, &a, 1, r);
  return r;
}

static val transpose(emitter *e, val a, const int *perm) {
  int64_t dims[MAX_RANK];
  for (int i = 0; i < a.rank; i++) dims[i] = a.dims[perm[i]];
  val r = begin_op(e, shape(a.rank, dims));
  sp_strbuf_puts(e->sb, "stablehlo.transpose ");
  put_name(e, a);
  sp_strbuf_puts(e->sb, ", dims = ");
  put_dims_list(e, perm, a.rank);
  put_function_type(e, &a, 1, r);
  return r;
}

/* ------------------------------------------------------------------ model blocks */

typedef struct layer_params {
  val gamma1, wq, wk, wv, wo, gamma2, w1, w2;
} layer_params;

/* What the backward pass needs from the forward pass of one layer. */
typedef struct layer_saved {
  val ln1, rb1, qt, kt, vt, probs, ctx2d, h, ln2, rb2, f1_tanh, gelu;
} layer_saved;

typedef struct norm_out {
  val y, rb;
} norm_out;

static norm_out layer_norm(emitter *e, val x, val gamma) {
  int last = x.rank - 1;
  val mean = reduce(e, x, "add", "0.000000e+00", last);
  val centered = binary(e, "subtract", x, broadcast_leading(e, mean, x));
  val var = reduce(e, binary(e, "multiply", centered, centered), "add", "0.000000e+00", last);
  val rb = broadcast_leading(e, unary(e, "rsqrt", var), x);
  val normed = binary(e, "multiply", centered, rb);
  int map = last;
  val g = broadcast(e, gamma, &map, x);
  return (norm_out){binary(e, "multiply", normed, g), rb};
}

static const int PERM_0213[4] = {0, 2, 1, 3};

/* [B, S, H] -> [B, N, S, D] */
static val split_heads(emitter *e, val x) {
  int64_t heads = e->o->heads, d[4] = {x.dims[0], x.dims[1], heads, x.dims[2] / heads};
  return transpose(e, reshape(e, x, 4, d), PERM_0213);
}

/* [B, N, S, D] -> [B, S, H] */
static val merge_heads(emitter *e, val x) {
  val t = transpose(e, x, PERM_0213);
  int64_t d[3] = {t.dims[0], t.dims[1], t.dims[2] * t.dims[3]};
  return reshape(e, t, 3, d);
}

static val softmax(emitter *e, val s) {
  int last = s.rank - 1;
  val mx = reduce(e, s, "maximum", "-1.000000e+04", last);
  val ex = unary(e, "exponential", binary(e, "subtract", s, broadcast_leading(e, mx, s)));
  val sum = reduce(e, ex, "add", "0.000000e+00", last);
  return binary(e, "divide", ex, broadcast_leading(e, sum, ex));
}

static const int B01[2] = {0, 1};

static val gpt_layer_forward(emitter *e, val x, const layer_params *p, layer_saved *sv) {
  norm_out n1 = layer_norm(e, x, p->gamma1);
  val qt = split_heads(e, matmul(e, n1.y, p->wq));
  val kt = split_heads(e, matmul(e, n1.y, p->wk));
  val vt = split_heads(e, matmul(e, n1.y, p->wv));
  int c3 = 3, c2 = 2;
  val scores = dot(e, qt, kt, B01, B01, 2, &c3, &c3, 1);
  val probs = softmax(e, scores);
  val ctx = dot(e, probs, vt, B01, B01, 2, &c3, &c2, 1);
  val ctx2d = merge_heads(e, ctx);
  val h = binary(e, "add", x, matmul(e, ctx2d, p->wo));
  norm_out n2 = layer_norm(e, h, p->gamma2);
  val f1 = matmul(e, n2.y, p->w1);
  val t = unary(e, "tanh", f1);
  val gelu = binary(e, "multiply", f1, t);
  val out = binary(e, "add", h, matmul(e, gelu, p->w2));
  *sv = (layer_saved){n1.y, n1.rb, qt, kt, vt, probs, ctx2d, h, n2.y, n2.rb, t, gelu};
  return out;
}

/* Returns the gradient w.r.t. the layer input; writes the weight gradients to `grads`
 * (wq, wk, wv, wo, w1, w2). */
static val gpt_layer_backward(emitter *e, val dout, const layer_params *p, const layer_saved *s,
                              val grads[6]) {
  /* MLP block */
  grads[5] = weight_grad(e, s->gelu, dout);
  val dgelu = matmul_transposed(e, dout, p->w2);
  val df1 = binary(e, "multiply", dgelu, s->f1_tanh);
  grads[4] = weight_grad(e, s->ln2, df1);
  val dln2 = matmul_transposed(e, df1, p->w1);
  val dh = binary(e, "add", dout, binary(e, "multiply", dln2, s->rb2));
  /* attention block */
  grads[3] = weight_grad(e, s->ctx2d, dh);
  val dctx = split_heads(e, matmul_transposed(e, dh, p->wo));
  int c2 = 2, c3 = 3;
  val dprobs = dot(e, dctx, s->vt, B01, B01, 2, &c3, &c3, 1);
  val dvt = dot(e, s->probs, dctx, B01, B01, 2, &c2, &c2, 1);
  val dscores = binary(e, "multiply", dprobs, s->probs);
  val dqt = dot(e, dscores, s->kt, B01, B01, 2, &c3, &c2, 1);
  val dkt = dot(e, dscores, s->qt, B01, B01, 2, &c2, &c2, 1);
  val heads[3] = {dqt, dkt, dvt};
  const val *w[3] = {&p->wq, &p->wk, &p->wv};
  val dy = {0};
  for (int i = 0; i < 3; i++) {
    val d2 = merge_heads(e, heads[i]);
    grads[i] = weight_grad(e, s->ln1, d2);
    val part = matmul_transposed(e, d2, *w[i]);
    dy = i == 0 ? part : binary(e, "add", dy, part);
  }
  return binary(e, "add", dh, binary(e, "multiply", dy, s->rb1));
}

/* ------------------------------------------------------------------ module */

static const char *annotation_for(const sp_gen_options *o, const char *role) {
  /* role: "x" (input), "col" (column-split weight), "row" (row-split weight) */
  if (o->annotate == SP_GEN_ANNOTATE_NONE) return NULL;
  if (strcmp(role, "x") == 0) return "data";
  if (o->annotate == SP_GEN_ANNOTATE_MEGATRON) return "model";
  return NULL;
}

static void put_arg(emitter *e, val v, const char *sharding_axis, int split_dim) {
  put_name(e, v);
  sp_strbuf_puts(e->sb, ": ");
  put_type(e, v);
  if (!sharding_axis) return;
  sp_strbuf_puts(e->sb, " {sdy.sharding = #sdy.sharding<@mesh, [");
  for (int d = 0; d < v.rank; d++) {
    if (d) sp_strbuf_puts(e->sb, ", ");
    if (d == split_dim)
      sp_strbuf_printf(e->sb, "{\"%s\"}", sharding_axis);
    else
      sp_strbuf_puts(e->sb, "{}");
  }
  sp_strbuf_puts(e->sb, "]>}");
}

static val new_arg(int *nargs, int rank, const int64_t *dims) {
  val v = shape(rank, dims);
  v.id = -(++*nargs);
  return v;
}

static void put_signature_arg(emitter *e, bool *first, val v, const char *axis, int dim) {
  if (!*first) sp_strbuf_puts(e->sb, ", ");
  *first = false;
  put_arg(e, v, axis, dim);
}

void sp_gen_default_options(sp_gen_options *o) {
  memset(o, 0, sizeof *o);
  o->model = SP_GEN_GPT;
  o->layers = 1;
  o->hidden = 1024;
  o->heads = 16;
  o->seq = 512;
  o->batch = 8;
  o->dtype = "f32";
  o->naxes = 2;
  strcpy(o->axis_names[0], "data");
  o->axis_sizes[0] = 2;
  strcpy(o->axis_names[1], "model");
  o->axis_sizes[1] = 4;
}

void sp_gen_gpt_training_options(sp_gen_options *o, int layers) {
  sp_gen_default_options(o);
  o->model = SP_GEN_GPT;
  o->layers = layers;
  o->hidden = 4096;
  o->heads = 32;
  o->seq = 2048;
  o->batch = 8;
  o->dtype = "bf16";
  o->backward = true;
}

int sp_gen_parse_mesh(const char *spec, sp_gen_options *o, sp_err *err) {
  int n = 0;
  const char *p = spec;
  while (*p) {
    if (n == SP_GEN_MAX_AXES)
      return sp_err_set(err, SP_EINVAL, "mesh '%s': more than %d axes", spec, SP_GEN_MAX_AXES);
    const char *eq = strchr(p, '=');
    size_t len = eq ? (size_t)(eq - p) : 0;
    if (!eq || len == 0 || len >= sizeof o->axis_names[0])
      return sp_err_set(err, SP_EINVAL, "mesh '%s': expected NAME=SIZE at '%s'", spec, p);
    char *end;
    long long size = strtoll(eq + 1, &end, 10);
    if (end == eq + 1 || size < 1 || (*end && *end != ','))
      return sp_err_set(err, SP_EINVAL, "mesh '%s': bad size for axis '%.*s'", spec, (int)len, p);
    memcpy(o->axis_names[n], p, len);
    o->axis_names[n][len] = '\0';
    o->axis_sizes[n] = size;
    n++;
    p = *end ? end + 1 : end;
  }
  if (n == 0) return sp_err_set(err, SP_EINVAL, "mesh '%s': no axes", spec);
  o->naxes = n;
  return SP_OK;
}

int sp_gen_check(const sp_gen_options *o, sp_err *err) {
  if (o->layers < 1) return sp_err_set(err, SP_EINVAL, "layers must be at least 1");
  if (o->hidden < 1 || o->batch < 1)
    return sp_err_set(err, SP_EINVAL, "hidden and batch must be at least 1");
  if (o->model == SP_GEN_GPT) {
    if (o->heads < 1 || o->seq < 1 || o->ffn < 0)
      return sp_err_set(err, SP_EINVAL, "heads and seq must be at least 1");
    if (o->hidden % o->heads)
      return sp_err_set(err, SP_EINVAL, "hidden (%lld) is not divisible by heads (%lld)",
                        (long long)o->hidden, (long long)o->heads);
  }
  if (!o->dtype || !*o->dtype) return sp_err_set(err, SP_EINVAL, "dtype is empty");
  if (o->annotate == SP_GEN_ANNOTATE_MEGATRON && o->naxes < 2)
    return sp_err_set(err, SP_EINVAL, "megatron annotations need a mesh with two axes");
  if (o->annotate != SP_GEN_ANNOTATE_NONE && o->naxes < 1)
    return sp_err_set(err, SP_EINVAL, "annotations need a mesh");
  return SP_OK;
}

static void put_mesh(emitter *e) {
  sp_strbuf_puts(e->sb, "  sdy.mesh @mesh = <[");
  for (int i = 0; i < e->o->naxes; i++)
    sp_strbuf_printf(e->sb, "%s\"%s\"=%lld", i ? ", " : "", e->o->axis_names[i],
                     (long long)e->o->axis_sizes[i]);
  sp_strbuf_puts(e->sb, "]>\n");
}

static void put_return(emitter *e, const val *results, int n) {
  sp_strbuf_puts(e->sb, "    return ");
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(e->sb, ", ");
    put_name(e, results[i]);
  }
  sp_strbuf_puts(e->sb, " : ");
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(e->sb, ", ");
    put_type(e, results[i]);
  }
  sp_strbuf_puts(e->sb, "\n  }\n}\n");
  e->nops++;
}

static void put_result_types(emitter *e, const val *results, int n) {
  sp_strbuf_puts(e->sb, ") -> (");
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(e->sb, ", ");
    put_type(e, results[i]);
  }
  sp_strbuf_puts(e->sb, ") {\n");
}

/* The body is emitted into a scratch buffer first, because the signature (written before it)
 * lists the results, whose shapes are known only at the end. */
static int write_gpt(emitter *e, sp_strbuf *sig) {
  const sp_gen_options *o = e->o;
  int64_t H = o->hidden, F = o->ffn ? o->ffn : 4 * o->hidden;
  int64_t xd[3] = {o->batch, o->seq, H}, hh[2] = {H, H}, hf[2] = {H, F}, fh[2] = {F, H}, g[1] = {H};
  int nargs = 0;
  val x = new_arg(&nargs, 3, xd);
  layer_params *ps = calloc((size_t)o->layers, sizeof *ps);
  layer_saved *ss = calloc((size_t)o->layers, sizeof *ss);
  int nres = 1 + (o->backward ? 1 + 6 * o->layers : 0);
  val *results = calloc((size_t)nres, sizeof *results);
  if (!ps || !ss || !results) {
    free(ps); free(ss); free(results);
    return SP_ENOMEM;
  }
  bool first = true;
  sp_strbuf *body = e->sb;
  e->sb = sig;
  put_signature_arg(e, &first, x, annotation_for(o, "x"), 0);
  for (int l = 0; l < o->layers; l++) {
    layer_params *p = &ps[l];
    p->gamma1 = new_arg(&nargs, 1, g);
    p->wq = new_arg(&nargs, 2, hh);
    p->wk = new_arg(&nargs, 2, hh);
    p->wv = new_arg(&nargs, 2, hh);
    p->wo = new_arg(&nargs, 2, hh);
    p->gamma2 = new_arg(&nargs, 1, g);
    p->w1 = new_arg(&nargs, 2, hf);
    p->w2 = new_arg(&nargs, 2, fh);
    const char *col = annotation_for(o, "col"), *row = annotation_for(o, "row");
    put_signature_arg(e, &first, p->gamma1, NULL, -1);
    put_signature_arg(e, &first, p->wq, col, 1);
    put_signature_arg(e, &first, p->wk, col, 1);
    put_signature_arg(e, &first, p->wv, col, 1);
    put_signature_arg(e, &first, p->wo, row, 0);
    put_signature_arg(e, &first, p->gamma2, NULL, -1);
    put_signature_arg(e, &first, p->w1, col, 1);
    put_signature_arg(e, &first, p->w2, row, 0);
  }
  e->sb = body;
  val h = x;
  for (int l = 0; l < o->layers; l++) h = gpt_layer_forward(e, h, &ps[l], &ss[l]);
  results[0] = h;
  if (o->backward) {
    val d = h;
    for (int l = o->layers - 1; l >= 0; l--)
      d = gpt_layer_backward(e, d, &ps[l], &ss[l], &results[2 + 6 * l]);
    results[1] = d;
  }
  e->sb = sig;
  put_result_types(e, results, nres);
  e->sb = body;
  put_return(e, results, nres);
  free(ps);
  free(ss);
  free(results);
  return SP_OK;
}

static int write_mlp(emitter *e, sp_strbuf *sig) {
  const sp_gen_options *o = e->o;
  int64_t xd[2] = {o->batch, o->hidden}, wd[2] = {o->hidden, o->hidden};
  int nargs = 0;
  val x = new_arg(&nargs, 2, xd);
  val *w = calloc((size_t)o->layers, sizeof *w), *acts = calloc((size_t)o->layers + 1, sizeof *acts);
  int nres = 1 + (o->backward ? 1 + o->layers : 0);
  val *results = calloc((size_t)nres, sizeof *results);
  if (!w || !acts || !results) {
    free(w); free(acts); free(results);
    return SP_ENOMEM;
  }
  bool first = true;
  sp_strbuf *body = e->sb;
  e->sb = sig;
  put_signature_arg(e, &first, x, annotation_for(o, "x"), 0);
  for (int l = 0; l < o->layers; l++) {
    w[l] = new_arg(&nargs, 2, wd);
    /* Megatron-style MLP: alternate column and row splits. */
    bool col = l % 2 == 0;
    put_signature_arg(e, &first, w[l], annotation_for(o, col ? "col" : "row"), col ? 1 : 0);
  }
  e->sb = body;
  acts[0] = x;
  for (int l = 0; l < o->layers; l++) acts[l + 1] = unary(e, "tanh", matmul(e, acts[l], w[l]));
  results[0] = acts[o->layers];
  if (o->backward) {
    val d = acts[o->layers];
    for (int l = o->layers - 1; l >= 0; l--) {
      val dh = binary(e, "multiply", d, acts[l + 1]);
      results[2 + l] = weight_grad(e, acts[l], dh);
      d = matmul_transposed(e, dh, w[l]);
    }
    results[1] = d;
  }
  e->sb = sig;
  put_result_types(e, results, nres);
  e->sb = body;
  put_return(e, results, nres);
  free(w);
  free(acts);
  free(results);
  return SP_OK;
}

int sp_gen_write(const sp_gen_options *o, sp_strbuf *out, int64_t *num_ops, sp_err *err) {
  int rc = sp_gen_check(o, err);
  if (rc) return rc;
  sp_strbuf sig = SP_STRBUF_INIT, body = SP_STRBUF_INIT;
  emitter e = {&body, o, 0, 0};
  int64_t devices = 1;
  for (int i = 0; i < o->naxes; i++) devices *= o->axis_sizes[i];
  rc = o->model == SP_GEN_GPT ? write_gpt(&e, &sig) : write_mlp(&e, &sig);
  if (rc == SP_OK) {
    sp_strbuf_printf(out, "module @jit_%s attributes {mhlo.num_partitions = %lld : i32, "
                          "mhlo.num_replicas = 1 : i32} {\n",
                     o->model == SP_GEN_GPT ? "gpt" : "mlp", (long long)devices);
    e.sb = out;
    if (o->naxes) put_mesh(&e);
    sp_strbuf_puts(out, "  func.func public @main(");
    sp_strbuf_putn(out, sp_strbuf_str(&sig), sig.len);
    sp_strbuf_putn(out, sp_strbuf_str(&body), body.len);
    if (!sp_strbuf_ok(out) || !sp_strbuf_ok(&sig) || !sp_strbuf_ok(&body)) rc = SP_ENOMEM;
  }
  sp_strbuf_free(&sig);
  sp_strbuf_free(&body);
  if (rc == SP_ENOMEM) return sp_err_set(err, SP_ENOMEM, "out of memory generating the model");
  if (num_ops) *num_ops = e.nops;
  return rc;
}

int64_t sp_gen_ops_per_layer(const sp_gen_options *o) {
  sp_gen_options one = *o;
  one.layers = 1;
  sp_strbuf sb = SP_STRBUF_INIT;
  int64_t n = 0;
  if (sp_gen_write(&one, &sb, &n, NULL) != SP_OK) n = 0;
  sp_strbuf_free(&sb);
  return n > 0 ? n - 1 : 0; /* the return op is not per layer */
}
