/*
 * test_hash.c - the canonical module hash: what it ignores, what it sees, and that the Shardy
 * conformance modules hash without error to mostly distinct digests.
 *
 * The in-code cases build one small module from a `variant` (each field changes one thing) and
 * compare digests with the base. The text cases go through the MLIR reader.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/hash.h"
#include "ir/ir.h"
#include "ir/verify.h"
#include "test_support.h"

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
  return s;
}

int main(void) { return sp_test_run(hash_suite()); }
