/*
 * test_hash.c - the canonical module hash: what it ignores, what it sees, and that the Shardy
 * conformance modules hash without error to mostly distinct digests.
 *
 * The in-code cases build one small module from a `variant` (each field changes one thing) and
 * compare digests with the base. The text cases go through the MLIR reader.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/grow.h"
#include "ir/hash.h"
#include "ir/ir.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "test_support.h"

/* The conformance part of this suite runs only when this shared file exists. */
#define SHARED_PART "conformance/shardy/basic_propagation.mlir"

/* ------------------------------------------------------------------ a module built in code */

typedef struct variant {
  int64_t dim0;          /* of the argument type */
  const char *elem;
  const char *axis;      /* sharding dim 0 of the argument */
  bool closed;           /* dim 0 closed */
  int priority;          /* dim 0 priority */
  const char *replicated; /* NULL = none */
  int64_t mesh_a;        /* size of mesh axis "a" */
  bool reversed_ids;     /* device_ids=[3,2,1,0] (with mesh_a = 2) */
  bool iota_ids;         /* device_ids=[0,1,2,3] written out */
  const char *op_name;
  int64_t attr_value;
  bool attrs_reordered;
  const char *name_prefix; /* SSA name hints */
  int loc_line;
  bool rule;             /* attach a sharding rule */
  int64_t rule_factor;   /* size of its factor i */
} variant;

static variant base(void) {
  return (variant){.dim0 = 8, .elem = "f32", .axis = "a", .closed = true, .priority = -1,
                   .mesh_a = 2, .op_name = "stablehlo.add", .attr_value = 1,
                   .name_prefix = "v", .loc_line = 1, .rule_factor = 8};
}

static void set_attr(sp_module *m, sp_op *op, sp_attr at) {
  sp_attrs_set(m->arena, &op->attrs, &at);
}

static sp_module *build(const variant *v) {
  sp_module *m = sp_module_new("h.mlir");
  sp_arena *a = m->arena;
  /* sdy.mesh @mesh = <["a"=A, "b"=2]> */
  sp_mesh *mesh = sp_arena_calloc(a, 1, sizeof *mesh);
  mesh->naxes = 2;
  mesh->axes = sp_arena_calloc(a, 2, sizeof *mesh->axes);
  mesh->axes[0] = (sp_mesh_axis){"a", v->mesh_a};
  mesh->axes[1] = (sp_mesh_axis){"b", 2};
  if (v->reversed_ids || v->iota_ids) {
    mesh->ndevice_ids = 4;
    mesh->device_ids = sp_arena_calloc(a, 4, sizeof(int64_t));
    for (int i = 0; i < 4; i++) mesh->device_ids[i] = v->reversed_ids ? 3 - i : i;
  }
  sp_op *mop = sp_op_create(a, "sdy.mesh", 0, NULL, 0, NULL, 0);
  set_attr(m, mop, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "mesh"});
  set_attr(m, mop, (sp_attr){.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = mesh});
  mop->loc = (sp_loc){v->loc_line, 1};
  sp_block_append(sp_module_body(m), mop);
  /* func.func @main(%arg0: tensor<D0x8xE> {sdy.sharding = ...}) -> tensor<D0x8xE> */
  int64_t dims[2] = {v->dim0, 8};
  sp_type *t = sp_type_tensor(a, 2, dims, v->elem);
  sp_op *fn = sp_op_create(a, "func.func", 0, NULL, 0, NULL, 1);
  set_attr(m, fn, (sp_attr){.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "main"});
  fn->func = sp_arena_calloc(a, 1, sizeof *fn->func);
  fn->func->nargs = 1;
  fn->func->arg_types = sp_arena_calloc(a, 1, sizeof(sp_type *));
  fn->func->arg_types[0] = t;
  fn->func->nresults = 1;
  fn->func->result_types = sp_arena_calloc(a, 1, sizeof(sp_type *));
  fn->func->result_types[0] = t;
  fn->loc = (sp_loc){v->loc_line + 1, 1};
  sp_block_append(sp_module_body(m), fn);
  sp_block *body = sp_region_add_block(a, &fn->regions[0]);
  sp_value *arg = sp_block_add_arg(a, body, t);
  arg->name_hint = sp_arena_printf(a, "%s_arg", v->name_prefix);
  arg->loc = (sp_loc){v->loc_line + 1, 20};
  sp_sharding *s = sp_sharding_new(a, "mesh", 2, true);
  s->dims[0].axes = sp_arena_calloc(a, 1, sizeof(sp_axis_ref));
  s->dims[0].axes[0] = (sp_axis_ref){v->axis, 0, 0};
  s->dims[0].naxes = 1;
  s->dims[0].closed = v->closed;
  s->dims[0].priority = v->priority;
  if (v->replicated) {
    s->replicated = sp_arena_calloc(a, 1, sizeof(sp_axis_ref));
    s->replicated[0] = (sp_axis_ref){v->replicated, 0, 0};
    s->nreplicated = 1;
  }
  arg->sharding = s;
  /* %0 = OP %arg0, %arg0 {x = N, y = "s"} */
  sp_value *ops[2] = {arg, arg};
  sp_op *op = sp_op_create(a, v->op_name, 2, ops, 1, &t, 0);
  sp_attr ax = {.name = "x", .kind = SP_ATTR_INT, .u.i = v->attr_value};
  sp_attr ay = {.name = "y", .kind = SP_ATTR_STR, .u.s = "s"};
  set_attr(m, op, v->attrs_reordered ? ay : ax);
  set_attr(m, op, v->attrs_reordered ? ax : ay);
  if (v->rule) {
    sp_rule *r = sp_arena_calloc(a, 1, sizeof *r);
    static int fi[] = {0}, fj[] = {1};
    static sp_rule_dim d2[2] = {{1, fi}, {1, fj}};
    static sp_rule_tensor ts[2] = {{2, d2}, {2, d2}};
    r->nfactors = 2;
    r->factors = sp_arena_calloc(a, 2, sizeof *r->factors);
    r->factors[0].size = v->rule_factor;
    r->factors[1].size = 8;
    r->noperands = 2;
    r->operands = ts;
    r->nresults = 1;
    r->results = ts;
    set_attr(m, op, (sp_attr){.name = "sdy.sharding_rule", .kind = SP_ATTR_RULE, .u.rule = r});
  }
  op->results[0].name_hint = sp_arena_printf(a, "%s0", v->name_prefix);
  op->loc = (sp_loc){v->loc_line + 2, 3};
  sp_block_append(body, op);
  sp_value *r0 = &op->results[0];
  sp_op *neg = sp_op_create(a, "stablehlo.negate", 1, &r0, 1, &t, 0);
  neg->results[0].name_hint = sp_arena_printf(a, "%s1", v->name_prefix);
  sp_block_append(body, neg);
  sp_value *rv = &neg->results[0];
  sp_op *ret = sp_op_create(a, "func.return", 1, &rv, 0, NULL, 0);
  sp_block_append(body, ret);
  return m;
}

static void digest_of(const variant *v, uint8_t out[SP_HASH_BYTES]) {
  sp_module *m = build(v);
  sp_err err;
  ck_assert_int_eq(sp_verify_module(m, &err), SP_OK);
  ck_assert_int_eq(sp_hash_module(m, out, &err), SP_OK);
  sp_module_free(m);
}

static bool same_as_base(const variant *v) {
  variant b = base();
  uint8_t x[SP_HASH_BYTES], y[SP_HASH_BYTES];
  digest_of(&b, x);
  digest_of(v, y);
  return memcmp(x, y, SP_HASH_BYTES) == 0;
}

START_TEST(hash_is_deterministic_and_printed_as_64_hex_digits) {
  variant b = base();
  uint8_t x[SP_HASH_BYTES], y[SP_HASH_BYTES];
  digest_of(&b, x);
  digest_of(&b, y);
  ck_assert_mem_eq(x, y, SP_HASH_BYTES);
  char hex[SP_HASH_HEX_BYTES];
  sp_hash_hex(x, hex);
  ck_assert_uint_eq(strlen(hex), 64);
  ck_assert_uint_eq(strspn(hex, "0123456789abcdef"), 64);
}
END_TEST

START_TEST(hash_ignores_value_names_locations_and_attribute_order) {
  variant v = base();
  v.name_prefix = "renamed";
  ck_assert(same_as_base(&v));
  v = base();
  v.loc_line = 40;
  ck_assert(same_as_base(&v));
  v = base();
  v.attrs_reordered = true;
  ck_assert(same_as_base(&v));
  v = base();
  v.iota_ids = true; /* device_ids=[0, 1, 2, 3] is the default order */
  ck_assert(same_as_base(&v));
}
END_TEST

START_TEST(hash_changes_with_each_semantic_change) {
  variant v[12];
  for (int i = 0; i < 12; i++) v[i] = base();
  v[0].dim0 = 16;                 /* a dim size */
  v[1].elem = "bf16";             /* the element type */
  v[2].axis = "b";                /* the sharding axis */
  v[3].closed = false;            /* closed -> open */
  v[4].priority = 1;              /* a priority */
  v[5].replicated = "b";          /* a replicated axis */
  v[6].mesh_a = 4;                /* a mesh axis size */
  v[7].reversed_ids = true;       /* the device order */
  v[8].op_name = "stablehlo.multiply"; /* the op name */
  v[9].attr_value = 2;            /* an attribute value */
  v[10].rule = true;              /* a sharding rule */
  v[11].rule = true;              /* ... and its factor size */
  v[11].rule_factor = 4;
  uint8_t d[13][SP_HASH_BYTES];
  variant b = base();
  digest_of(&b, d[12]);
  for (int i = 0; i < 12; i++) {
    if (i == 6) { /* "a"=4 with "b"=2 makes 8 devices; keep the ids out of it */
      v[i].reversed_ids = false;
    }
    digest_of(&v[i], d[i]);
  }
  /* every variant differs from the base and from every other variant */
  for (int i = 0; i < 13; i++)
    for (int j = i + 1; j < 13; j++)
      ck_assert_msg(memcmp(d[i], d[j], SP_HASH_BYTES) != 0, "variants %d and %d collide", i, j);
}
END_TEST

START_TEST(incremental_hasher_mixes_extra_inputs_into_the_module_digest) {
  variant b = base();
  sp_module *m = build(&b);
  uint8_t plain[SP_HASH_BYTES], k1[SP_HASH_BYTES], k2[SP_HASH_BYTES], k3[SP_HASH_BYTES];
  sp_err err;
  ck_assert_int_eq(sp_hash_module(m, plain, &err), SP_OK);
  const char *opts[3] = {"cluster-a", "cluster-b", NULL};
  uint8_t *keys[3] = {k1, k2, k3};
  for (int i = 0; i < 3; i++) {
    sp_hasher h;
    ck_assert_int_eq(sp_hasher_init(&h), SP_OK);
    sp_hasher_update_module(&h, m);
    sp_hasher_update_str(&h, opts[i]);
    sp_hasher_update_i64(&h, 8);
    ck_assert_int_eq(sp_hasher_final(&h, keys[i], &err), SP_OK);
  }
  ck_assert(memcmp(plain, k1, SP_HASH_BYTES) != 0);
  ck_assert(memcmp(k1, k2, SP_HASH_BYTES) != 0);
  ck_assert(memcmp(k1, k3, SP_HASH_BYTES) != 0); /* NULL and a string differ */
  /* the module part alone equals the one-shot hash */
  sp_hasher h;
  sp_hasher_init(&h);
  sp_hasher_update_module(&h, m);
  ck_assert_int_eq(sp_hasher_final(&h, k1, &err), SP_OK);
  ck_assert_mem_eq(plain, k1, SP_HASH_BYTES);
  sp_module_free(m);
}
END_TEST

START_TEST(strings_are_length_prefixed_so_splits_do_not_collide) {
  uint8_t x[SP_HASH_BYTES], y[SP_HASH_BYTES];
  sp_err err;
  sp_hasher h;
  sp_hasher_init(&h);
  sp_hasher_update_str(&h, "ab");
  sp_hasher_update_str(&h, "c");
  ck_assert_int_eq(sp_hasher_final(&h, x, &err), SP_OK);
  sp_hasher_init(&h);
  sp_hasher_update_str(&h, "a");
  sp_hasher_update_str(&h, "bc");
  ck_assert_int_eq(sp_hasher_final(&h, y, &err), SP_OK);
  ck_assert(memcmp(x, y, SP_HASH_BYTES) != 0);
}
END_TEST

START_TEST(sha256_of_raw_bytes_matches_the_standard_vector) {
  /* SHA-256("abc") */
  uint8_t d[SP_HASH_BYTES];
  char hex[SP_HASH_HEX_BYTES];
  sp_err err;
  sp_hasher h;
  sp_hasher_init(&h);
  sp_hasher_update_bytes(&h, "abc", 3);
  ck_assert_int_eq(sp_hasher_final(&h, d, &err), SP_OK);
  ck_assert_str_eq(sp_hash_hex(d, hex),
                   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

/* The digest of a module holding one op with one verbatim attribute. */
static void digest_of_text_attr(const char *text, uint8_t out[SP_HASH_BYTES]) {
  sp_module *m = sp_module_new("t.mlir");
  sp_op *op = sp_op_create(m->arena, "stablehlo.constant", 0, NULL, 0, NULL, 0);
  set_attr(m, op, (sp_attr){.name = "value", .kind = SP_ATTR_TEXT, .u.s = text});
  sp_block_append(sp_module_body(m), op);
  sp_err err;
  ck_assert_int_eq(sp_hash_module(m, out, &err), SP_OK);
  sp_module_free(m);
}

static bool texts_hash_alike(const char *x, const char *y) {
  uint8_t a[SP_HASH_BYTES], b[SP_HASH_BYTES];
  digest_of_text_attr(x, a);
  digest_of_text_attr(y, b);
  return memcmp(a, b, SP_HASH_BYTES) == 0;
}

START_TEST(verbatim_attribute_text_is_compared_modulo_whitespace_between_tokens) {
  ck_assert(texts_hash_alike("dense<1> : tensor<i32>", "dense<1>:tensor<i32>"));
  ck_assert(texts_hash_alike("#foo<a,\n   b>", "#foo<a, b>"));
  ck_assert(texts_hash_alike("array<i64: 1,  2>", "array<i64:1,2>"));
  ck_assert(!texts_hash_alike("a b", "ab"));                    /* two tokens vs one */
  ck_assert(!texts_hash_alike("\"a  b\"", "\"a b\""));           /* inside a string literal */
  ck_assert(!texts_hash_alike("\"x\\\" y\"", "\"x\\\"y\""));   /* escaped quote keeps the literal */
  ck_assert(!texts_hash_alike("dense<1>", "dense<2>"));
}
END_TEST

/* ------------------------------------------------------------------ modules as MLIR text */

static const char BASE[] =
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}, "
    "{}]>}, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : "
    "(tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>\n"
    "  %1 = stablehlo.custom_call @foo(%0) {backend_config = \"x\", has_side_effect = true} : "
    "(tensor<8x4xf32>) -> tensor<8x4xf32>\n"
    "  %2 = stablehlo.add %1, %0 : tensor<8x4xf32>\n"
    "  return %2 : tensor<8x4xf32>\n"
    "}\n";

static void hash_text(const char *text, uint8_t out[SP_HASH_BYTES]) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "h.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "the reader rejected the case: %s", err.msg);
  ck_assert_int_eq(sp_verify_module(m, &err), SP_OK);
  ck_assert_int_eq(sp_hash_module(m, out, &err), SP_OK);
  sp_module_free(m);
}

/* BASE with every occurrence of `from` replaced by `to` (malloc'd). `from` must occur. */
static char *edit(const char *text, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to), count = 0;
  for (const char *p = strstr(text, from); p; p = strstr(p + nf, from)) count++;
  ck_assert_msg(count > 0, "\"%s\" does not occur", from);
  char *out = malloc(strlen(text) + count * nt + 1), *w = out;
  const char *r = text;
  for (const char *p = strstr(r, from); p; p = strstr(r, from)) {
    memcpy(w, r, (size_t)(p - r));
    w += p - r;
    memcpy(w, to, nt);
    w += nt;
    r = p + nf;
  }
  strcpy(w, r);
  return out;
}

static bool edit_keeps_hash(const char *from, const char *to) {
  uint8_t a[SP_HASH_BYTES], b[SP_HASH_BYTES];
  char *t = edit(BASE, from, to);
  hash_text(BASE, a);
  hash_text(t, b);
  free(t);
  return memcmp(a, b, SP_HASH_BYTES) == 0;
}

START_TEST(text_hash_ignores_ssa_names) {
  char *t1 = edit(BASE, "%arg0", "%input");
  char *t2 = edit(t1, "%0", "%product");
  char *t3 = edit(t2, "%1", "%called");
  uint8_t a[SP_HASH_BYTES], b[SP_HASH_BYTES];
  hash_text(BASE, a);
  hash_text(t3, b);
  ck_assert_mem_eq(a, b, SP_HASH_BYTES);
  free(t1);
  free(t2);
  free(t3);
}
END_TEST

static const char TWO_FUNCS[] =
    "func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n"
    "  %0 = func.call @helper(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
    "  return %0 : tensor<8xf32>\n"
    "}\n"
    "func.func private @helper(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
    "  %y = stablehlo.negate %x : tensor<8xf32>\n"
    "  return %y : tensor<8xf32>\n"
    "}\n";

static bool texts_same_hash(const char *x, const char *y) {
  uint8_t a[SP_HASH_BYTES], b[SP_HASH_BYTES];
  hash_text(x, a);
  hash_text(y, b);
  return memcmp(a, b, SP_HASH_BYTES) == 0;
}

START_TEST(text_hash_ignores_function_names_but_keeps_which_one_is_main) {
  char *renamed = edit(TWO_FUNCS, "@helper", "@negate_all");
  ck_assert(texts_same_hash(TWO_FUNCS, renamed));
  /* One function: whatever its name, it is the one planned. */
  char *lone = edit(BASE, "@main", "@forward");
  ck_assert(texts_same_hash(BASE, lone));
  /* Two functions: the one called "main" is planned, so swapping the names is a change. */
  char *t1 = edit(TWO_FUNCS, "@main", "@tmp");
  char *t2 = edit(t1, "@helper", "@main");
  char *swapped = edit(t2, "@tmp", "@helper");
  ck_assert(!texts_same_hash(TWO_FUNCS, swapped));
  /* The callee's body still counts. */
  char *body = edit(renamed, "stablehlo.negate", "stablehlo.abs");
  ck_assert(!texts_same_hash(renamed, body));
  free(body);
  free(swapped);
  free(t2);
  free(t1);
  free(lone);
  free(renamed);
}
END_TEST

START_TEST(text_hash_ignores_attribute_order_in_a_dictionary) {
  ck_assert(edit_keeps_hash("{backend_config = \"x\", has_side_effect = true}",
                            "{has_side_effect = true, backend_config = \"x\"}"));
}
END_TEST

START_TEST(text_hash_ignores_comments_and_locations) {
  ck_assert(edit_keeps_hash("  %2 = stablehlo.add %1, %0 : tensor<8x4xf32>\n",
                            "  // the sum\n  %2 = stablehlo.add %1, %0 : tensor<8x4xf32> "
                            "loc(\"model.py\":12:3)\n"));
  ck_assert(edit_keeps_hash("sdy.mesh", "// a mesh\nsdy.mesh"));
}
END_TEST

START_TEST(text_hash_ignores_whitespace) {
  ck_assert(edit_keeps_hash(" : ", "   :\n      "));
  ck_assert(edit_keeps_hash("  %", "\t\t%"));
  ck_assert(edit_keeps_hash("[{\"a\", ?}, {}]", "[ {\"a\",?} ,{ } ]"));
}
END_TEST

START_TEST(text_hash_ignores_device_ids_in_default_order) {
  ck_assert(edit_keeps_hash("\"b\"=2]>", "\"b\"=2], device_ids=[0, 1, 2, 3]>"));
}
END_TEST

START_TEST(text_hash_changes_with_each_semantic_edit) {
  static const char *const edits[][2] = {
      {"8x", "32x"},                          /* a dim size */
      {"f32", "bf16"},                        /* the element type */
      {"[{\"a\", ?}", "[{\"b\", ?}"},         /* a sharding axis */
      {"{\"a\", ?}", "{\"a\"}"},              /* open -> closed */
      {"{\"a\", ?}", "{\"a\", ?}p1"},         /* a priority */
      {"{}]>}", "{}], replicated={\"b\"}>}"}, /* a replicated axis */
      {"\"a\"=2", "\"a\"=4"},                 /* a mesh axis size */
      {"\"b\"=2]>", "\"b\"=2], device_ids=[3, 2, 1, 0]>"}, /* the device order */
      {"stablehlo.add", "stablehlo.subtract"}, /* an op name */
      {"backend_config = \"x\"", "backend_config = \"y\""}, /* an attribute value */
      {"has_side_effect = true", "has_side_effect = false"},
      {"%2 = stablehlo.add %1, %0", "%2 = stablehlo.add %0, %1"}, /* the wiring */
  };
  enum { N = sizeof edits / sizeof edits[0] };
  uint8_t d[N + 1][SP_HASH_BYTES];
  hash_text(BASE, d[N]);
  for (int i = 0; i < N; i++) {
    char *t = edit(BASE, edits[i][0], edits[i][1]);
    hash_text(t, d[i]);
    free(t);
  }
  for (int i = 0; i <= N; i++)
    for (int j = i + 1; j <= N; j++)
      ck_assert_msg(memcmp(d[i], d[j], SP_HASH_BYTES) != 0, "edits %d and %d hash alike", i, j);
}
END_TEST

/* ------------------------------------------------------------------ the conformance set */

static const char *const CONFORMANCE[] = {
    "basic_propagation.mlir", "basic_propagation_conservative.mlir",
    "basic_propagation_data_flow_edges.mlir", "basic_propagation_keep_sharding_rules.mlir",
    "basic_propagation_token.mlir", "edge_shardings.mlir", "op_priority_propagation.mlir",
    "op_sharding_rule_registry.mlir", "op_sharding_rule_registry_failures.mlir",
    "propagation_pipeline.mlir", "propagation_pipeline_data_flow_edges.mlir",
    "sharding_origins.mlir"};

/* The chunk without comments and blanks (outside string literals): what a reader sees. */
static char *strip_text(const char *s, size_t n) {
  char *out = malloc(n + 1), *w = out;
  bool in_str = false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (in_str) {
      *w++ = c;
      if (c == '\\' && i + 1 < n) *w++ = s[++i];
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') i++;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '"') in_str = true;
    *w++ = c;
  }
  *w = '\0';
  return out;
}

typedef struct chunk_hash {
  uint8_t digest[SP_HASH_BYTES];
  char *text;
} chunk_hash;

static int by_text(const void *x, const void *y) {
  return strcmp(((const chunk_hash *)x)->text, ((const chunk_hash *)y)->text);
}
static int by_digest(const void *x, const void *y) {
  return memcmp(((const chunk_hash *)x)->digest, ((const chunk_hash *)y)->digest, SP_HASH_BYTES);
}

START_TEST(conformance_chunks_hash_without_error_and_mostly_apart) {
  chunk_hash *all = NULL;
  int n = 0, cap = 0;
  for (size_t i = 0; i < sizeof CONFORMANCE / sizeof *CONFORMANCE; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "conformance/shardy/%s", CONFORMANCE[i]);
    const char *path = sp_test_shared_path(rel);
    size_t len;
    char *text = sp_test_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    int nc = sp_mlir_split(text, len, NULL, 0);
    sp_mlir_chunk *chunks = calloc((size_t)nc, sizeof *chunks);
    sp_mlir_split(text, len, chunks, nc);
    for (int c = 0; c < nc; c++) {
      sp_module *m = NULL;
      sp_err err;
      if (sp_mlir_parse(chunks[c].begin, chunks[c].len, path, chunks[c].first_line, &m, &err)) {
        printf("reader gap (not a hash matter): %s\n", err.msg);
        continue;
      }
      ck_assert_int_eq(sp_grow((void **)&all, &cap, n, sizeof *all), SP_OK);
      ck_assert_int_eq(sp_hash_module(m, all[n].digest, &err), SP_OK);
      all[n].text = strip_text(chunks[c].begin, chunks[c].len);
      n++;
      sp_module_free(m);
    }
    free(chunks);
    free(text);
  }
  ck_assert_int_gt(n, 200);
  /* One text, one digest: copies of a chunk (comments and blanks aside) hash alike. */
  qsort(all, (size_t)n, sizeof *all, by_text);
  int texts = n > 0;
  for (int i = 1; i < n; i++) {
    if (strcmp(all[i].text, all[i - 1].text) != 0) {
      texts++;
      continue;
    }
    ck_assert_mem_eq(all[i].digest, all[i - 1].digest, SP_HASH_BYTES);
  }
  /* Different texts get different digests, but for the rare pair that differs only in names. */
  qsort(all, (size_t)n, sizeof *all, by_digest);
  int digests = n > 0;
  for (int i = 1; i < n; i++)
    digests += memcmp(all[i].digest, all[i - 1].digest, SP_HASH_BYTES) != 0;
  printf("conformance: %d chunks, %d distinct texts, %d distinct digests\n", n, texts, digests);
  ck_assert_int_ge(digests * 100, texts * 95);
  for (int i = 0; i < n; i++) free(all[i].text);
  free(all);
}
END_TEST

static Suite *hash_suite(void) {
  Suite *s = suite_create("hash");
  TCase *tc = tcase_create("in_code");
  tcase_add_test(tc, hash_is_deterministic_and_printed_as_64_hex_digits);
  tcase_add_test(tc, hash_ignores_value_names_locations_and_attribute_order);
  tcase_add_test(tc, hash_changes_with_each_semantic_change);
  tcase_add_test(tc, incremental_hasher_mixes_extra_inputs_into_the_module_digest);
  tcase_add_test(tc, strings_are_length_prefixed_so_splits_do_not_collide);
  tcase_add_test(tc, sha256_of_raw_bytes_matches_the_standard_vector);
  tcase_add_test(tc, verbatim_attribute_text_is_compared_modulo_whitespace_between_tokens);
  suite_add_tcase(s, tc);
  TCase *tt = tcase_create("text");
  tcase_add_test(tt, text_hash_ignores_ssa_names);
  tcase_add_test(tt, text_hash_ignores_function_names_but_keeps_which_one_is_main);
  tcase_add_test(tt, text_hash_ignores_attribute_order_in_a_dictionary);
  tcase_add_test(tt, text_hash_ignores_comments_and_locations);
  tcase_add_test(tt, text_hash_ignores_whitespace);
  tcase_add_test(tt, text_hash_ignores_device_ids_in_default_order);
  tcase_add_test(tt, text_hash_changes_with_each_semantic_edit);
  suite_add_tcase(s, tt);
  if (sp_test_have_shared(SHARED_PART)) {
    TCase *tc2 = tcase_create("conformance");
    tcase_set_timeout(tc2, 120);
    tcase_add_test(tc2, conformance_chunks_hash_without_error_and_mostly_apart);
    suite_add_tcase(s, tc2);
  }
  return s;
}

int main(void) { return sp_test_run_partial(hash_suite(), SHARED_PART); }
