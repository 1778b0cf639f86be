/*
 * test_mesh.c - mesh and sharding verification (sp_verify_mesh, sp_verify_sharding), on IR
 * built in code. Every rule has a failing case that asserts the whole message, position
 * included, and the valid forms next to it are accepted.
 *
 * The module's mesh is @mesh = <["a"=4, "b"=2, "c"=16, "d"=6]>.
 */
#include <check.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/verify.h"
#include "test_support.h"

static const sp_loc L = {3, 7};

static sp_mesh *mk_mesh(sp_arena *a, int naxes, const char *const *names, const int64_t *sizes,
                        int nids, const int64_t *ids) {
  sp_mesh *m = sp_arena_calloc(a, 1, sizeof *m);
  m->naxes = naxes;
  m->axes = naxes ? sp_arena_calloc(a, (size_t)naxes, sizeof *m->axes) : NULL;
  for (int i = 0; i < naxes; i++) m->axes[i] = (sp_mesh_axis){names[i], sizes[i]};
  m->ndevice_ids = nids;
  if (nids) {
    m->device_ids = sp_arena_calloc(a, (size_t)nids, sizeof *m->device_ids);
    memcpy(m->device_ids, ids, (size_t)nids * sizeof *ids);
  }
  return m;
}

static void add_mesh_op(sp_module *m, const char *name, sp_mesh *mesh) {
  sp_op *op = sp_op_create(m->arena, "sdy.mesh", 0, NULL, 0, NULL, 0);
  sp_attr sym = {.name = "sym_name", .kind = SP_ATTR_STR, .u.s = name};
  sp_attr at = {.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = mesh};
  sp_attrs_set(m->arena, &op->attrs, &sym);
  sp_attrs_set(m->arena, &op->attrs, &at);
  op->loc = (sp_loc){1, 1};
  sp_block_append(sp_module_body(m), op);
}

static sp_module *fixture(void) {
  sp_module *m = sp_module_new("t.mlir");
  static const char *const names[] = {"a", "b", "c", "d"};
  static const int64_t sizes[] = {4, 2, 16, 6};
  add_mesh_op(m, "mesh", mk_mesh(m->arena, 4, names, sizes, 0, NULL));
  int64_t one = 0;
  add_mesh_op(m, "maximal", mk_mesh(m->arena, 0, NULL, NULL, 1, &one));
  add_mesh_op(m, "empty", mk_mesh(m->arena, 0, NULL, NULL, 0, NULL));
  return m;
}

static sp_type *tensor(sp_module *m, int rank, int64_t d) {
  int64_t dims[8] = {d, d, d, d, d, d, d, d};
  return sp_type_tensor(m->arena, rank, dims, "f32");
}

static sp_axis_ref full(const char *n) { return (sp_axis_ref){n, 0, 0}; }
static sp_axis_ref sub(const char *n, int64_t pre, int64_t size) {
  return (sp_axis_ref){n, pre, size};
}

/* Sets the axes of one list from a literal array. */
static sp_axis_ref *axes(sp_module *m, int n, const sp_axis_ref *v) {
  sp_axis_ref *c = sp_arena_calloc(m->arena, (size_t)n, sizeof *c);
  memcpy(c, v, (size_t)n * sizeof *v);
  return c;
}
#define SET_DIM(s, d, ...)                                                   \
  do {                                                                       \
    sp_axis_ref v_[] = {__VA_ARGS__};                                        \
    (s)->dims[d].naxes = (int)(sizeof v_ / sizeof v_[0]);                    \
    (s)->dims[d].axes = axes(m, (s)->dims[d].naxes, v_);                     \
  } while (0)
#define SET_LIST(s, field, nfield, ...)                                      \
  do {                                                                       \
    sp_axis_ref v_[] = {__VA_ARGS__};                                        \
    (s)->nfield = (int)(sizeof v_ / sizeof v_[0]);                           \
    (s)->field = axes(m, (s)->nfield, v_);                                   \
  } while (0)

/* Verifies and returns the message ("" when valid). */
static const char *check_sharding(sp_module *m, sp_sharding *s, sp_type *t) {
  static sp_err err;
  int rc = sp_verify_sharding(m, s, t, L, &err);
  if (rc == SP_OK) return "";
  ck_assert_int_eq(rc, SP_EINVAL);
  return err.msg;
}

static const char *check_mesh(sp_mesh *mesh, sp_loc loc) {
  static sp_err err;
  sp_module *m = sp_module_new("t.mlir");
  int rc = sp_verify_mesh(m, mesh, loc, &err);
  sp_module_free(m);
  return rc == SP_OK ? "" : err.msg;
}

/* ------------------------------------------------------------------ meshes */

START_TEST(mesh_axis_of_size_zero_is_rejected) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"a", "b"};
  int64_t s[] = {2, 0};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 2, n, s, 0, NULL), L),
                   "t.mlir:3:7: axis size must be at least 1, got: 0");
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_duplicate_axis_name_is_rejected) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"a", "b", "a"};
  int64_t s[] = {2, 2, 2};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 3, n, s, 0, NULL), L),
                   "t.mlir:3:7: duplicate axis name: \"a\"");
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_negative_device_id_is_rejected) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"a"};
  int64_t s[] = {2}, ids[] = {1, -1};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 1, n, s, 2, ids), L),
                   "t.mlir:3:7: device id must be non-negative, got: -1");
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_without_axes_but_two_device_ids_is_rejected) {
  sp_arena *a = sp_arena_new(0);
  int64_t ids[] = {0, 1};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 0, NULL, NULL, 2, ids), L),
                   "t.mlir:3:7: axes is empty and device_ids has more than one element");
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_device_id_count_must_equal_product_of_axis_sizes) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"a", "b"};
  int64_t s[] = {2, 2}, ids[] = {0, 1, 2};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 2, n, s, 3, ids), L),
                   "t.mlir:3:7: total product of axis sizes must match total number of device ids, got: 4 != 3");
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_device_ids_must_be_a_permutation_of_iota) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"a", "b"};
  int64_t s[] = {2, 2}, twice[] = {0, 1, 1, 3}, range[] = {0, 1, 4, 3};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 2, n, s, 4, twice), L),
                   "t.mlir:3:7: sorted device ids must be iota(product(axes)), got: 0, 1, 1, 3");
  ck_assert_str_eq(check_mesh(mk_mesh(a, 2, n, s, 4, range), L),
                   "t.mlir:3:7: sorted device ids must be iota(product(axes)), got: 0, 1, 3, 4");
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_valid_forms_are_accepted) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"a", "b"};
  int64_t s[] = {2, 1}, perm[] = {1, 0}, one[] = {3};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 2, n, s, 0, NULL), L), "");     /* size-1 axis */
  ck_assert_str_eq(check_mesh(mk_mesh(a, 2, n, s, 2, perm), L), "");     /* permuted ids */
  ck_assert_str_eq(check_mesh(mk_mesh(a, 0, NULL, NULL, 1, one), L), ""); /* maximal */
  ck_assert_str_eq(check_mesh(mk_mesh(a, 0, NULL, NULL, 0, NULL), L), ""); /* empty */
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_error_without_location_names_only_the_file) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"x", "x"};
  int64_t s[] = {2, 2};
  ck_assert_str_eq(check_mesh(mk_mesh(a, 2, n, s, 0, NULL), (sp_loc){0, 0}),
                   "t.mlir: duplicate axis name: \"x\"");
  sp_arena_free(a);
}
END_TEST

START_TEST(mesh_with_too_many_devices_hits_the_limit) {
  sp_arena *a = sp_arena_new(0);
  const char *n[] = {"a", "b", "c"};
  int64_t s[] = {1024, 1024, 1024};
  sp_err err;
  ck_assert_int_eq(sp_verify_mesh(NULL, mk_mesh(a, 3, n, s, 0, NULL), L, &err), SP_ELIMIT);
  ck_assert_str_eq(err.msg, "<input>:3:7: mesh has more than 1048576 devices (SP_MAX_DEVICES)");
  sp_arena_free(a);
}
END_TEST

/* ------------------------------------------------------------------ shardings */

START_TEST(sharding_naming_a_missing_mesh_is_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "nope", 1, false);
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)), "t.mlir:3:7: unknown mesh: @nope");
  sp_module_free(m);
}
END_TEST

START_TEST(sharding_rank_must_match_tensor_rank) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, false);
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: sharding doesn't match tensor rank: 1 != 2");
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)), "");
  sp_module_free(m);
}
END_TEST

START_TEST(sharding_with_unknown_axis_name_is_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, false);
  SET_DIM(s, 1, full("a"), full("e"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: unknown axis name: \"e\"");
  sp_module_free(m);
}
END_TEST

START_TEST(sharding_on_the_empty_mesh_knows_no_axis) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "empty", 1, true);
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)), "");
  SET_DIM(s, 0, full("a"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: unknown axis name: \"a\"");
  sp_module_free(m);
}
END_TEST

START_TEST(axis_used_in_two_dims_is_a_duplicate) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, true);
  SET_DIM(s, 0, full("a"));
  SET_DIM(s, 1, full("b"), full("a"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: duplicate axis ref: \"a\"");
  sp_module_free(m);
}
END_TEST

START_TEST(axis_sharding_a_dim_and_replicated_is_a_duplicate) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_DIM(s, 0, full("b"));
  SET_LIST(s, replicated, nreplicated, full("a"), full("b"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: duplicate axis ref: \"b\"");
  sp_module_free(m);
}
END_TEST

START_TEST(axis_both_replicated_and_unreduced_is_a_duplicate) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_LIST(s, replicated, nreplicated, sub("c", 2, 2));
  SET_LIST(s, unreduced, nunreduced, sub("c", 2, 2));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: duplicate axis ref: \"c\":(2)2");
  sp_module_free(m);
}
END_TEST

START_TEST(overlapping_sub_axes_in_different_dims_are_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, true);
  SET_DIM(s, 0, sub("c", 2, 4));
  SET_DIM(s, 1, sub("c", 1, 4));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: overlapping sub-axes: \"c\":(1)4, \"c\":(2)4");
  sp_module_free(m);
}
END_TEST

START_TEST(sub_axis_inside_a_larger_sub_axis_overlaps_it) {
  /* "c":(4)2 is the minor half of "c":(1)8. */
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 3, true);
  SET_DIM(s, 0, sub("c", 4, 2));
  SET_DIM(s, 1, sub("c", 1, 8));
  SET_LIST(s, replicated, nreplicated, full("a"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 3, 8)), "t.mlir:3:7: overlapping sub-axes: \"c\":(1)8, \"c\":(4)2");
  sp_module_free(m);
}
END_TEST

START_TEST(full_axis_and_its_sub_axis_cannot_both_be_used) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, true);
  SET_DIM(s, 0, full("c"));
  SET_DIM(s, 1, sub("c", 2, 2));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: both sub-axis and full-axis are used for axis name: \"c\"");
  sp_module_free(m);
}
END_TEST

START_TEST(sub_axis_that_does_not_divide_its_axis_is_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_DIM(s, 0, sub("c", 3, 2));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: sub-axis next pre-size 6 doesn't divide the size of the full axis 16: \"c\":(3)2");
  SET_DIM(s, 0, sub("c", 4, 8));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: sub-axis next pre-size 32 doesn't divide the size of the full axis 16: \"c\":(4)8");
  sp_module_free(m);
}
END_TEST

START_TEST(sub_axis_of_size_one_zero_pre_or_whole_axis_is_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_DIM(s, 0, sub("c", 2, 1));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: sub-axis sizes must be greater than 1: \"c\":(2)1");
  SET_DIM(s, 0, sub("c", 0, 2));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: sub-axis pre-size must be at least 1: \"c\":(0)2");
  SET_DIM(s, 0, sub("c", 1, 16));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: sub-axis size is equal to the full axis size: \"c\":(1)16");
  sp_module_free(m);
}
END_TEST

START_TEST(sub_axes_that_cannot_coexist_are_rejected) {
  /* "d"=6: "d":(1)2 and "d":(3)2 do not overlap, but their boundaries do not nest. */
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, true);
  SET_DIM(s, 0, sub("d", 3, 2));
  SET_DIM(s, 1, sub("d", 1, 2));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 12)),
                   "t.mlir:3:7: sub-axes \"d\":(1)2 and \"d\":(3)2 can't coexist");
  sp_module_free(m);
}
END_TEST

START_TEST(consecutive_mergeable_sub_axes_in_one_dim_are_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_DIM(s, 0, full("a"), sub("c", 1, 2), sub("c", 2, 4));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 64)),
                   "t.mlir:3:7: two consecutive sub-axes can be merged: \"c\":(1)2, \"c\":(2)4");
  sp_module_free(m);
}
END_TEST

START_TEST(mergeable_sub_axes_in_different_lists_are_accepted) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, false);
  SET_DIM(s, 0, sub("c", 1, 2));
  SET_DIM(s, 1, sub("c", 2, 4));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)), "");
  sp_module_free(m);
}
END_TEST

START_TEST(consecutive_mergeable_sub_axes_in_replicated_are_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_LIST(s, replicated, nreplicated, sub("c", 2, 2), sub("c", 4, 4));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: two consecutive sub-axes can be merged: \"c\":(2)2, \"c\":(4)4");
  sp_module_free(m);
}
END_TEST

START_TEST(replicated_axes_out_of_mesh_order_are_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_LIST(s, replicated, nreplicated, full("b"), full("a"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: replicated axes are not ordered w.r.t. mesh: \"b\" comes before "
                   "\"a\"");
  SET_LIST(s, replicated, nreplicated, full("a"), sub("c", 4, 2), sub("c", 1, 2));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: replicated axes are not ordered w.r.t. mesh: \"c\":(4)2 comes "
                   "before \"c\":(1)2");
  SET_LIST(s, replicated, nreplicated, full("a"), sub("c", 1, 2), sub("c", 4, 2));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)), "");
  sp_module_free(m);
}
END_TEST

START_TEST(unreduced_axes_out_of_mesh_order_are_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 1, true);
  SET_LIST(s, unreduced, nunreduced, full("d"), full("b"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: unreduced axes are not ordered w.r.t. mesh: \"d\" comes before "
                   "\"b\"");
  sp_module_free(m);
}
END_TEST

START_TEST(closed_empty_dim_with_priority_is_rejected) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 2, true);
  SET_DIM(s, 0, full("a"));
  s->dims[0].priority = 0; /* closed but not empty: fine */
  s->dims[1].priority = 1;
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: dim 1 is empty and closed but has a priority");
  s->dims[1].closed = false; /* {?}p1 is fine */
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)), "");
  s->dims[1].priority = -3;
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: dim 1 has a negative priority: p-3");
  sp_module_free(m);
}
END_TEST

START_TEST(maximal_mesh_sharding_must_have_no_dims) {
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "maximal", 0, true);
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)), ""); /* [] on a 2-d value is fine */
  s = sp_sharding_new(m->arena, "maximal", 2, true);
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 2, 8)),
                   "t.mlir:3:7: a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes");
  sp_module_free(m);
}
END_TEST

START_TEST(non_shaped_tuple_and_unranked_types_limit_shardings) {
  sp_module *m = fixture();
  sp_type tok = {.kind = SP_TYPE_TOKEN, .text = "!stablehlo.token"};
  sp_sharding *s0 = sp_sharding_new(m->arena, "mesh", 0, true);
  ck_assert_str_eq(check_sharding(m, s0, &tok), "");
  sp_sharding *s1 = sp_sharding_new(m->arena, "mesh", 1, true);
  ck_assert_str_eq(check_sharding(m, s1, &tok),
                   "t.mlir:3:7: non-shaped tensors can only have a sharding with rank 0 and no replicated or unreduced axes.");
  sp_type *one[1] = {tensor(m, 1, 8)}, *two[2] = {one[0], one[0]};
  sp_type tup1 = {.kind = SP_TYPE_TUPLE, .nelems = 1, .elems = one};
  sp_type tup2 = {.kind = SP_TYPE_TUPLE, .nelems = 2, .elems = two};
  ck_assert_str_eq(check_sharding(m, s1, &tup1), "");
  ck_assert_str_eq(check_sharding(m, s1, &tup2),
                   "t.mlir:3:7: ops can only have a sharding for a tuple of size 1");
  ck_assert_str_eq(check_sharding(m, s1, tensor(m, -1, 0)),
                   "t.mlir:3:7: only ranked tensors can have a sharding");
  sp_module_free(m);
}
END_TEST

START_TEST(inline_mesh_is_verified_with_the_sharding) {
  sp_module *m = fixture();
  const char *n[] = {"x", "x"};
  int64_t sz[] = {2, 2};
  sp_sharding *s = sp_sharding_new(m->arena, NULL, 1, true);
  s->inline_mesh = mk_mesh(m->arena, 2, n, sz, 0, NULL);
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)),
                   "t.mlir:3:7: duplicate axis name: \"x\"");
  s->inline_mesh->axes[1].name = "y";
  SET_DIM(s, 0, full("y"), full("x"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 1, 8)), "");
  sp_module_free(m);
}
END_TEST

START_TEST(well_formed_sharding_with_every_feature_is_accepted) {
  /* <@mesh, [{"a", "c":(1)2}, {"c":(4)2, ?}p1, {}], replicated={"b", "c":(2)2},
   *  unreduced={"d"}> */
  sp_module *m = fixture();
  sp_sharding *s = sp_sharding_new(m->arena, "mesh", 3, true);
  SET_DIM(s, 0, full("a"), sub("c", 1, 2));
  SET_DIM(s, 1, sub("c", 4, 2));
  s->dims[1].closed = false;
  s->dims[1].priority = 1;
  SET_LIST(s, replicated, nreplicated, full("b"), sub("c", 2, 2));
  SET_LIST(s, unreduced, nunreduced, full("d"));
  ck_assert_str_eq(check_sharding(m, s, tensor(m, 3, 7)), ""); /* divisibility not required */
  sp_module_free(m);
}
END_TEST

static Suite *mesh_suite(void) {
  Suite *s = suite_create("mesh");
  TCase *tm = tcase_create("mesh");
  tcase_add_test(tm, mesh_axis_of_size_zero_is_rejected);
  tcase_add_test(tm, mesh_duplicate_axis_name_is_rejected);
  tcase_add_test(tm, mesh_negative_device_id_is_rejected);
  tcase_add_test(tm, mesh_without_axes_but_two_device_ids_is_rejected);
  tcase_add_test(tm, mesh_device_id_count_must_equal_product_of_axis_sizes);
  tcase_add_test(tm, mesh_device_ids_must_be_a_permutation_of_iota);
  tcase_add_test(tm, mesh_valid_forms_are_accepted);
  tcase_add_test(tm, mesh_error_without_location_names_only_the_file);
  tcase_add_test(tm, mesh_with_too_many_devices_hits_the_limit);
  suite_add_tcase(s, tm);
  TCase *ts = tcase_create("sharding");
  tcase_add_test(ts, sharding_naming_a_missing_mesh_is_rejected);
  tcase_add_test(ts, sharding_rank_must_match_tensor_rank);
  tcase_add_test(ts, sharding_with_unknown_axis_name_is_rejected);
  tcase_add_test(ts, sharding_on_the_empty_mesh_knows_no_axis);
  tcase_add_test(ts, axis_used_in_two_dims_is_a_duplicate);
  tcase_add_test(ts, axis_sharding_a_dim_and_replicated_is_a_duplicate);
  tcase_add_test(ts, axis_both_replicated_and_unreduced_is_a_duplicate);
  tcase_add_test(ts, overlapping_sub_axes_in_different_dims_are_rejected);
  tcase_add_test(ts, sub_axis_inside_a_larger_sub_axis_overlaps_it);
  tcase_add_test(ts, full_axis_and_its_sub_axis_cannot_both_be_used);
  tcase_add_test(ts, sub_axis_that_does_not_divide_its_axis_is_rejected);
  tcase_add_test(ts, sub_axis_of_size_one_zero_pre_or_whole_axis_is_rejected);
  tcase_add_test(ts, sub_axes_that_cannot_coexist_are_rejected);
  tcase_add_test(ts, consecutive_mergeable_sub_axes_in_one_dim_are_rejected);
  tcase_add_test(ts, mergeable_sub_axes_in_different_lists_are_accepted);
  tcase_add_test(ts, consecutive_mergeable_sub_axes_in_replicated_are_rejected);
  tcase_add_test(ts, replicated_axes_out_of_mesh_order_are_rejected);
  tcase_add_test(ts, unreduced_axes_out_of_mesh_order_are_rejected);
  tcase_add_test(ts, closed_empty_dim_with_priority_is_rejected);
  tcase_add_test(ts, maximal_mesh_sharding_must_have_no_dims);
  tcase_add_test(ts, non_shaped_tuple_and_unranked_types_limit_shardings);
  tcase_add_test(ts, inline_mesh_is_verified_with_the_sharding);
  tcase_add_test(ts, well_formed_sharding_with_every_feature_is_accepted);
  suite_add_tcase(s, ts);
  return s;
}

int main(void) { return sp_test_run(mesh_suite()); }
