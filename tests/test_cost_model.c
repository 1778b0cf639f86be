/*
 * test_cost_model.c - the alpha-beta collective formulas, multi-axis groups, resharding,
 * compute and per-device bytes, checked against hand computations on the example clusters.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "search/cost_model.h"
#include "search/reshard_memo.h"
#include "cluster_support.h"
#include "test_support.h"

#define NVLINK_BW 3.0e11
#define NVLINK_ALPHA 2e-6
#define NET_BW 2.5e10
#define NET_ALPHA 5e-6
#define MIB (1024.0 * 1024.0)

static void assert_close(double got, double want) {
  ck_assert_msg(fabs(got - want) <= 1e-12 + 1e-9 * fabs(want), "got %.17g, want %.17g", got, want);
}

/* ---- the formulas ---- */

START_TEST(all_gather_costs_alpha_plus_n_minus_1_over_n_of_the_bytes) {
  double b = 64 * MIB;
  assert_close(sp_collective_seconds(SP_COLL_ALL_GATHER, 4, NVLINK_ALPHA, NVLINK_BW, b),
               NVLINK_ALPHA + 0.75 * b / NVLINK_BW);
}
END_TEST

START_TEST(reduce_scatter_costs_the_same_as_all_gather) {
  double b = 10e6;
  assert_close(sp_collective_seconds(SP_COLL_REDUCE_SCATTER, 8, 1e-5, 1e10, b),
               1e-5 + (7.0 / 8.0) * b / 1e10);
}
END_TEST

START_TEST(all_reduce_moves_twice_n_minus_1_over_n_of_the_bytes) {
  double b = 128 * MIB;
  assert_close(sp_collective_seconds(SP_COLL_ALL_REDUCE, 2, NET_ALPHA, NET_BW, b),
               NET_ALPHA + 2 * 0.5 * b / NET_BW);
}
END_TEST

START_TEST(all_to_all_moves_n_minus_1_over_n_squared_of_the_bytes) {
  double b = 32 * MIB;
  assert_close(sp_collective_seconds(SP_COLL_ALL_TO_ALL, 4, NVLINK_ALPHA, NVLINK_BW, b),
               NVLINK_ALPHA + (3.0 / 16.0) * b / NVLINK_BW);
}
END_TEST

START_TEST(a_group_of_one_device_costs_nothing) {
  ck_assert(sp_collective_seconds(SP_COLL_ALL_REDUCE, 1, 1e-3, 1e9, 1e9) == 0.0);
  ck_assert(sp_collective_seconds(SP_COLL_ALL_GATHER, 0, 1e-3, 1e9, 1e9) == 0.0);
}
END_TEST

/* ---- the model on a cluster ---- */

static sp_mesh_axis AXES[2] = {{"data", 2}, {"model", 4}};
static sp_mesh MESH = {2, AXES, 0, NULL};

static sp_ft_axis ax(int i) { return sp_ft_axis_make(&MESH, i, 0, 0); }

START_TEST(axis_on_one_machine_is_priced_with_nvlink) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  sp_cost_model cm;
  sp_err err;
  ck_assert_int_eq(sp_cost_model_init(&cm, c, &MESH, NULL, &err), SP_OK);
  sp_ft_axis model = ax(1);
  sp_collective out;
  double s = sp_cost_collective(&cm, SP_COLL_ALL_REDUCE, &model, 1, 64 * MIB, &out);
  assert_close(s, NVLINK_ALPHA + 2 * 0.75 * 64 * MIB / NVLINK_BW);
  ck_assert_int_eq(out.n, 4);
  ck_assert_int_eq(out.kind, SP_COLL_ALL_REDUCE);
  assert_close(cm.memory_bytes, 85899345920.0);
  sp_cost_model_free(&cm);
  sp_cluster_free(c);
}
END_TEST

START_TEST(group_over_two_axes_runs_at_the_slowest_link_of_the_product_group) {
  sp_cluster *c = sp_test_load_cluster("four_machines_32gpu.json");
  /* data across machines 0 and 1, model inside each machine. */
  int64_t dev[8] = {0, 1, 2, 3, 8, 9, 10, 11};
  sp_cost_model cm;
  sp_err err;
  ck_assert_int_eq(sp_cost_model_init(&cm, c, &MESH, dev, &err), SP_OK);
  ck_assert_str_eq(cm.axis[0].kind, "infiniband");
  ck_assert_str_eq(cm.axis[1].kind, "nvlink");
  sp_ft_axis both[2] = {ax(0), ax(1)};
  sp_collective out;
  double b = 96 * MIB;
  double s = sp_cost_collective(&cm, SP_COLL_ALL_REDUCE, both, 2, b, &out);
  assert_close(s, NET_ALPHA + 2 * (7.0 / 8.0) * b / NET_BW);
  ck_assert_int_eq(out.n, 8);
  /* The model axis alone stays on NVLink. */
  sp_ft_axis model = ax(1);
  assert_close(sp_cost_collective(&cm, SP_COLL_REDUCE_SCATTER, &model, 1, b, NULL),
               NVLINK_ALPHA + 0.75 * b / NVLINK_BW);
  sp_cost_model_free(&cm);
  sp_cluster_free(c);
}
END_TEST

START_TEST(compute_divides_the_flops_by_the_devices_sharing_them_and_the_dtype_peak) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  sp_cost_model cm;
  sp_err err;
  ck_assert_int_eq(sp_cost_model_init(&cm, c, &MESH, NULL, &err), SP_OK);
  double flops = 2.0 * 8 * 2048 * 4096 * 4096;
  assert_close(sp_cost_compute(&cm, flops, 8, "bf16"), flops / 8 / 3.12e14);
  assert_close(sp_cost_compute(&cm, flops, 2, "f32"), flops / 2 / 1.95e13);
  ck_assert(sp_cost_compute(&cm, 0, 8, "bf16") == 0.0);
  sp_cost_model_free(&cm);
  sp_cluster_free(c);
}
END_TEST

/* ---- layouts, bytes, resharding ---- */

static sp_arena *A;
static sp_cluster *C;
static sp_cost_model CM;

static void setup(void) {
  A = sp_arena_new(0);
  C = sp_test_load_cluster("one_machine_8gpu.json");
  sp_err err;
  ck_assert_int_eq(sp_cost_model_init(&CM, C, &MESH, NULL, &err), SP_OK);
}

static void teardown(void) {
  sp_cost_model_free(&CM);
  sp_cluster_free(C);
  sp_arena_free(A);
}

/* A layout from a tiny spec: one string per dim, 'd' = data, 'm' = model, in order. */
static sp_layout *lay(int rank, const char *const *dims) {
  sp_ft_axes per[4];
  memset(per, 0, sizeof per);
  for (int d = 0; d < rank; d++)
    for (const char *p = dims[d]; *p; p++)
      ck_assert_int_eq(sp_ft_axes_push(A, &per[d], ax(*p == 'd' ? 0 : 1)), SP_OK);
  sp_layout *l = sp_layout_from_dims(A, rank, per);
  ck_assert_ptr_nonnull(l);
  return l;
}

static sp_type *f32_2d(int64_t r, int64_t c) {
  int64_t dims[2] = {r, c};
  return sp_type_tensor(A, 2, dims, "f32");
}

START_TEST(local_bytes_divide_the_tensor_by_every_axis_that_shards_it) {
  int64_t dims[3] = {8, 2048, 4096};
  sp_type *t = sp_type_tensor(A, 3, dims, "bf16");
  const char *spec[3] = {"d", "", "m"};
  assert_close(sp_cost_tensor_bytes(t), 8.0 * 2048 * 4096 * 2);
  assert_close(sp_cost_local_bytes(&CM, t, lay(3, spec)), 8.0 * 2048 * 4096 * 2 / 8);
}
END_TEST

START_TEST(a_boolean_takes_a_byte_as_xla_stores_it) {
  int64_t dims[2] = {16, 128};
  assert_close(sp_cost_tensor_bytes(sp_type_tensor(A, 2, dims, "i1")), 16.0 * 128);
  assert_close(sp_cost_tensor_bytes(sp_type_tensor(A, 2, dims, "i8")), 16.0 * 128);
  assert_close(sp_cost_tensor_bytes(sp_type_tensor(A, 2, dims, "bf16")), 16.0 * 128 * 2);
}
END_TEST

START_TEST(dropping_an_axis_is_an_all_gather_of_the_gathered_bytes) {
  sp_type *t = f32_2d(1024, 1024);   /* 4 MiB */
  const char *from[2] = {"d", ""}, *to[2] = {"", ""};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, from), lay(2, to), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 1);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_GATHER);
  assert_close(r.steps[0].bytes, 4 * MIB);
  assert_close(r.seconds, NVLINK_ALPHA + 0.5 * 4 * MIB / NVLINK_BW);
}
END_TEST

/* `spec` (see lay) holding partial sums over the axes of `unreduced` (bit per mesh axis). */
static sp_layout *partial(int rank, const char *const *spec, uint32_t unreduced) {
  sp_layout *l = lay(rank, spec);
  l->unreduced = unreduced;
  return l;
}

START_TEST(partial_sums_read_whole_pay_one_all_reduce_of_the_bytes_held_before) {
  sp_type *t = f32_2d(1024, 1024);   /* 4 MiB */
  const char *spec[2] = {"d", ""};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, partial(2, spec, 1u << 1), lay(2, spec), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 1);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_REDUCE);
  ck_assert_int_eq(r.steps[0].naxes, 1);
  ck_assert(sp_ft_axis_equal(r.steps[0].axes[0], ax(1)));
  assert_close(r.steps[0].bytes, 2 * MIB);
  assert_close(r.seconds, NVLINK_ALPHA + 2 * 0.75 * 2 * MIB / NVLINK_BW);
}
END_TEST

START_TEST(partial_sums_read_sharded_over_their_axis_are_one_reduce_scatter_then_a_free_slice) {
  sp_type *t = f32_2d(1024, 1024);
  const char *from[2] = {"", ""}, *to[2] = {"m", "d"};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, partial(2, from, 1u << 1), lay(2, to), &r), SP_OK);
  /* all_reduce {"model"} then all_slice [{"model"}, {"data"}]: the canonicalizer's fusion. */
  ck_assert_int_eq(r.nsteps, 2);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_REDUCE_SCATTER);
  ck_assert(r.steps[0].naxes == 1 && sp_ft_axis_equal(r.steps[0].axes[0], ax(1)));
  assert_close(r.steps[0].bytes, 4 * MIB);
  ck_assert_int_eq(r.steps[1].kind, SP_COLL_ALL_SLICE);
  ck_assert(r.steps[1].naxes == 1 && sp_ft_axis_equal(r.steps[1].axes[0], ax(0)));
  assert_close(r.seconds, NVLINK_ALPHA + 0.75 * 4 * MIB / NVLINK_BW);
}
END_TEST

/* The same read on a runtime without reduce-scatter: the export still fuses the all_reduce and
 * the slice into a reduce_scatter, which runs as the all_reduce it is made of (B alike, twice
 * the bytes term), then each device keeps its part; the rest of the slice is the same. */
START_TEST(without_reduce_scatter_the_fused_reduction_is_priced_as_its_all_reduce) {
  sp_type *t = f32_2d(1024, 1024);
  const char *from[2] = {"", ""}, *to[2] = {"m", "d"};
  sp_reshard r;
  CM.no_reduce_scatter = true;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, partial(2, from, 1u << 1), lay(2, to), &r), SP_OK);
  CM.no_reduce_scatter = false;
  ck_assert_int_eq(r.nsteps, 2);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_REDUCE);
  ck_assert(r.steps[0].naxes == 1 && sp_ft_axis_equal(r.steps[0].axes[0], ax(1)));
  assert_close(r.steps[0].bytes, 4 * MIB);
  ck_assert_int_eq(r.steps[1].kind, SP_COLL_ALL_SLICE);
  ck_assert(r.steps[1].naxes == 1 && sp_ft_axis_equal(r.steps[1].axes[0], ax(0)));
  assert_close(r.seconds, NVLINK_ALPHA + 2 * 0.75 * 4 * MIB / NVLINK_BW);
}
END_TEST

START_TEST(partial_sums_kept_over_an_axis_pay_only_for_the_axes_reduced) {
  sp_type *t = f32_2d(1024, 1024);
  const char *spec[2] = {"", ""};
  sp_reshard r;
  /* Partial over both axes, kept partial over "model": all-reduce over "data" only. */
  ck_assert_int_eq(sp_cost_reshard(&CM, t, partial(2, spec, 3u), partial(2, spec, 1u << 1), &r),
                   SP_OK);
  ck_assert_int_eq(r.nsteps, 1);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_REDUCE);
  ck_assert(r.steps[0].naxes == 1 && sp_ft_axis_equal(r.steps[0].axes[0], ax(0)));
  /* The same partial sums in both: nothing moves. */
  ck_assert_int_eq(sp_cost_reshard(&CM, t, partial(2, spec, 2u), partial(2, spec, 2u), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 0);
  ck_assert(r.seconds == 0.0);
}
END_TEST

START_TEST(a_layout_gaining_partial_sums_is_never_priced) {
  sp_type *t = f32_2d(1024, 1024);
  const char *spec[2] = {"d", ""};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, spec), partial(2, spec, 1u << 1), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 0);
  ck_assert(r.seconds >= SP_COST_NEVER);
}
END_TEST

START_TEST(adding_an_axis_is_a_free_all_slice) {
  sp_type *t = f32_2d(1024, 1024);
  const char *from[2] = {"", ""}, *to[2] = {"d", "m"};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, from), lay(2, to), &r), SP_OK);
  /* One all_slice over both axes, as the export lowers it; it sends nothing. */
  ck_assert_int_eq(r.nsteps, 1);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_SLICE);
  ck_assert_int_eq(r.steps[0].naxes, 2);
  ck_assert_int_eq(r.steps[0].n, 8);
  ck_assert(r.steps[0].bytes == 0.0);   /* nothing moves */
  ck_assert(r.steps[0].seconds == 0.0);
  ck_assert(r.seconds == 0.0);
}
END_TEST

START_TEST(moving_an_axis_to_another_dim_is_an_all_to_all) {
  sp_type *t = f32_2d(1024, 1024);
  const char *from[2] = {"m", ""}, *to[2] = {"", "m"};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, from), lay(2, to), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 1);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_TO_ALL);
  ck_assert_int_eq(r.steps[0].n, 4);
  /* B is the group's whole tensor: 4 MiB (each device holds 1 MiB). */
  assert_close(r.steps[0].bytes, 4 * MIB);
  assert_close(r.seconds, NVLINK_ALPHA + (3.0 / 16.0) * 4 * MIB / NVLINK_BW);
}
END_TEST

START_TEST(common_prefix_stays_and_only_the_rest_of_the_dim_is_gathered) {
  sp_type *t = f32_2d(1024, 1024);
  const char *from[2] = {"dm", ""}, *to[2] = {"d", ""};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, from), lay(2, to), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 1);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_GATHER);
  ck_assert_int_eq(r.steps[0].n, 4);
  assert_close(r.steps[0].bytes, 2 * MIB);   /* still split by "data" afterwards */
}
END_TEST

START_TEST(axes_out_of_order_in_a_dim_are_one_collective_permute_of_each_shard) {
  sp_type *t = f32_2d(1024, 1024);
  const char *from[2] = {"dm", ""}, *to[2] = {"md", ""};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, from), lay(2, to), &r), SP_OK);
  /* The export swaps the two axes in place: every device sends its 0.5 MiB shard once. */
  ck_assert_int_eq(r.nsteps, 1);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_COLLECTIVE_PERMUTE);
  ck_assert_int_eq(r.steps[0].n, 8);
  assert_close(r.steps[0].bytes, 0.5 * MIB);
  assert_close(r.seconds, NVLINK_ALPHA + 0.5 * MIB / NVLINK_BW);
}
END_TEST

START_TEST(a_permute_sends_each_shard_once_and_an_all_slice_sends_nothing) {
  assert_close(sp_collective_seconds(SP_COLL_COLLECTIVE_PERMUTE, 4, 2e-6, 1e9, 1e6), 2e-6 + 1e-3);
  ck_assert(sp_collective_seconds(SP_COLL_ALL_SLICE, 8, 2e-6, 1e9, 1e6) == 0.0);
  ck_assert(sp_collective_seconds(SP_COLL_COLLECTIVE_PERMUTE, 1, 2e-6, 1e9, 1e6) == 0.0);
  ck_assert_str_eq(sp_collective_name(SP_COLL_ALL_SLICE), "all-slice");
  ck_assert_str_eq(sp_collective_name(SP_COLL_COLLECTIVE_PERMUTE), "collective-permute");
}
END_TEST

START_TEST(a_new_axis_is_sliced_before_the_old_one_is_gathered) {
  sp_type *t = f32_2d(1024, 1024);
  const char *from[2] = {"d", ""}, *to[2] = {"", "m"};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, from), lay(2, to), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 2);
  ck_assert_int_eq(r.steps[0].kind, SP_COLL_ALL_SLICE);
  ck_assert(r.steps[0].seconds == 0.0);
  ck_assert_int_eq(r.steps[1].kind, SP_COLL_ALL_GATHER);
  /* After the free slice on "model" each device holds 1/8; gathering "data" yields 1/4. */
  assert_close(r.steps[1].bytes, 1 * MIB);
  assert_close(r.seconds, NVLINK_ALPHA + 0.5 * 1 * MIB / NVLINK_BW);
}
END_TEST

START_TEST(a_layout_change_is_lowered_once_and_priced_for_each_tensor) {
  const char *from[2] = {"m", ""}, *to[2] = {"", "m"};
  sp_reshard small, big;
  ck_assert_int_eq(sp_cost_reshard(&CM, f32_2d(64, 64), lay(2, from), lay(2, to), &small), SP_OK);
  ck_assert_int_eq(sp_cost_reshard(&CM, f32_2d(1024, 1024), lay(2, from), lay(2, to), &big), SP_OK);
  int64_t lookups, misses;
  sp_reshard_memo_stats(CM.memo, &lookups, &misses);
  ck_assert_int_eq(lookups, 2);
  ck_assert_int_eq(misses, 1);
  ck_assert_int_eq(small.nsteps, 1);
  ck_assert_int_eq(big.nsteps, 1);
  ck_assert_int_eq(small.steps[0].kind, big.steps[0].kind);
  assert_close(big.steps[0].bytes, 256 * small.steps[0].bytes);
}
END_TEST

/* The kinds of r's steps as letters: g(ather) s(lice) a(ll-to-all) p(ermute) r(educe). */
static const char *kinds(const sp_reshard *r) {
  static char buf[SP_RESHARD_MAX_STEPS + 1];
  static const char letter[] = {'g', 'R', 'r', 'a', 's', 'p'};
  int n = 0;
  for (int i = 0; i < r->nsteps; i++) buf[n++] = letter[r->steps[i].kind];
  buf[n] = 0;
  return buf;
}

START_TEST(a_dim_without_room_is_lowered_as_the_export_lowers_it_for_that_tensor) {
  /* "model" then "data" onto dim 0, from "model" on dim 1. With room on dim 1 the pass slices
   * "data" there and moves both with one all_to_all; a dim 1 of 4 rows holds "model" but not
   * "data" too, so it slices "data" on dim 0, swaps the dims' axes and moves "data". */
  const char *from[2] = {"", "m"}, *to[2] = {"md", ""};
  sp_reshard roomy, tight;
  ck_assert_int_eq(sp_cost_reshard(&CM, f32_2d(64, 64), lay(2, from), lay(2, to), &roomy), SP_OK);
  ck_assert_int_eq(sp_cost_reshard(&CM, f32_2d(64, 4), lay(2, from), lay(2, to), &tight), SP_OK);
  ck_assert_str_eq(kinds(&roomy), "sa");
  ck_assert_str_eq(kinds(&tight), "spa");
  /* Only a dim's divisibility by the mesh's parts matters: 128 rows lower as 64 do, from the
   * same entry; 4 and 12 rows (gcd 4 with the 8 devices) share one too. */
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, f32_2d(128, 128), lay(2, from), lay(2, to), &r), SP_OK);
  ck_assert_str_eq(kinds(&r), "sa");
  ck_assert_int_eq(sp_cost_reshard(&CM, f32_2d(64, 12), lay(2, from), lay(2, to), &r), SP_OK);
  ck_assert_str_eq(kinds(&r), "spa");
  int64_t lookups, misses;
  sp_reshard_memo_stats(CM.memo, &lookups, &misses);
  ck_assert_int_eq(lookups, 4);
  ck_assert_int_eq(misses, 2);
}
END_TEST

START_TEST(the_same_layout_costs_nothing) {
  sp_type *t = f32_2d(64, 64);
  const char *spec[2] = {"d", "m"};
  sp_reshard r;
  ck_assert_int_eq(sp_cost_reshard(&CM, t, lay(2, spec), lay(2, spec), &r), SP_OK);
  ck_assert_int_eq(r.nsteps, 0);
  ck_assert(r.seconds == 0.0);
}
END_TEST

START_TEST(layout_round_trips_through_a_closed_sharding_keeping_replicated_axes) {
  sp_sharding *s = sp_sharding_new(A, "mesh", 2, false);
  s->dims[0].naxes = 1;
  s->dims[0].axes = sp_arena_alloc(A, sizeof(sp_axis_ref));
  s->dims[0].axes[0] = (sp_axis_ref){"model", 1, 2};   /* "model":(1)2 */
  s->dims[1].priority = 1;
  s->nreplicated = 1;
  s->replicated = sp_arena_alloc(A, sizeof(sp_axis_ref));
  s->replicated[0] = (sp_axis_ref){"data", 0, 0};
  sp_layout *l;
  sp_err err;
  ck_assert_int_eq(sp_layout_from_sharding(A, s, 2, &MESH, &l, &err), SP_OK);
  ck_assert_int_eq(sp_layout_dim_shards(l, &MESH, 0), 2);
  ck_assert_int_eq(sp_layout_shards(l, &MESH), 2);
  sp_sharding *back = sp_layout_to_sharding(A, l, &MESH, "mesh", s);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_sharding_print(&sb, back);
  ck_assert_str_eq(sp_strbuf_str(&sb), "<@mesh, [{\"model\":(1)2}, {}p1], replicated={\"data\"}>");
  sp_strbuf_free(&sb);
}
END_TEST

START_TEST(sharding_naming_an_unknown_axis_is_an_error_naming_it) {
  sp_sharding *s = sp_sharding_new(A, "mesh", 1, true);
  s->dims[0].naxes = 1;
  s->dims[0].axes = sp_arena_alloc(A, sizeof(sp_axis_ref));
  s->dims[0].axes[0] = (sp_axis_ref){"pipe", 0, 0};
  sp_layout *l;
  sp_err err;
  ck_assert_int_eq(sp_layout_from_sharding(A, s, 1, &MESH, &l, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "dimension 0: axis \"pipe\" is not in the mesh");
}
END_TEST

START_TEST(mesh_larger_than_the_cluster_is_refused) {
  sp_mesh_axis big[1] = {{"x", 16}};
  sp_mesh m = {1, big, 0, NULL};
  sp_cost_model cm;
  sp_err err;
  ck_assert_int_eq(sp_cost_model_init(&cm, C, &m, NULL, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "mesh has 16 devices, the cluster only 8");
}
END_TEST

static Suite *cost_model_suite(void) {
  Suite *s = suite_create("cost_model");
  TCase *tc = tcase_create("formulas");
  tcase_add_test(tc, all_gather_costs_alpha_plus_n_minus_1_over_n_of_the_bytes);
  tcase_add_test(tc, reduce_scatter_costs_the_same_as_all_gather);
  tcase_add_test(tc, all_reduce_moves_twice_n_minus_1_over_n_of_the_bytes);
  tcase_add_test(tc, all_to_all_moves_n_minus_1_over_n_squared_of_the_bytes);
  tcase_add_test(tc, a_group_of_one_device_costs_nothing);
  tcase_add_test(tc, a_permute_sends_each_shard_once_and_an_all_slice_sends_nothing);
  tcase_add_test(tc, axis_on_one_machine_is_priced_with_nvlink);
  tcase_add_test(tc, group_over_two_axes_runs_at_the_slowest_link_of_the_product_group);
  tcase_add_test(tc, compute_divides_the_flops_by_the_devices_sharing_them_and_the_dtype_peak);
  suite_add_tcase(s, tc);
  tc = tcase_create("resharding");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, local_bytes_divide_the_tensor_by_every_axis_that_shards_it);
  tcase_add_test(tc, a_boolean_takes_a_byte_as_xla_stores_it);
  tcase_add_test(tc, dropping_an_axis_is_an_all_gather_of_the_gathered_bytes);
  tcase_add_test(tc, adding_an_axis_is_a_free_all_slice);
  tcase_add_test(tc, moving_an_axis_to_another_dim_is_an_all_to_all);
  tcase_add_test(tc, common_prefix_stays_and_only_the_rest_of_the_dim_is_gathered);
  tcase_add_test(tc, axes_out_of_order_in_a_dim_are_one_collective_permute_of_each_shard);
  tcase_add_test(tc, a_new_axis_is_sliced_before_the_old_one_is_gathered);
  tcase_add_test(tc, a_layout_change_is_lowered_once_and_priced_for_each_tensor);
  tcase_add_test(tc, the_same_layout_costs_nothing);
  tcase_add_test(tc, a_dim_without_room_is_lowered_as_the_export_lowers_it_for_that_tensor);
  tcase_add_test(tc, layout_round_trips_through_a_closed_sharding_keeping_replicated_axes);
  tcase_add_test(tc, sharding_naming_an_unknown_axis_is_an_error_naming_it);
  tcase_add_test(tc, mesh_larger_than_the_cluster_is_refused);
  tcase_add_test(tc, partial_sums_read_whole_pay_one_all_reduce_of_the_bytes_held_before);
  tcase_add_test(tc, partial_sums_read_sharded_over_their_axis_are_one_reduce_scatter_then_a_free_slice);
  tcase_add_test(tc, without_reduce_scatter_the_fused_reduction_is_priced_as_its_all_reduce);
  tcase_add_test(tc, partial_sums_kept_over_an_axis_pay_only_for_the_axes_reduced);
  tcase_add_test(tc, a_layout_gaining_partial_sums_is_never_priced);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(cost_model_suite()); }
