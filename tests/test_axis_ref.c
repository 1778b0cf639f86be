/*
 * test_axis_ref.c - sub-axis relations on the examples of Shardy's semantics (axis "x"=16
 * unless said otherwise).
 */
#include <check.h>
#include <signal.h>

#include "ir/axis_ref.h"
#include "test_support.h"

#define N 16
static sp_axis_ref full(void) { return (sp_axis_ref){"x", 0, 0}; }
static sp_axis_ref sub(int64_t pre, int64_t size) { return (sp_axis_ref){"x", pre, size}; }
static void assert_ref(sp_axis_ref r, int64_t pre, int64_t size) {
  ck_assert_int_eq(r.pre, pre);
  ck_assert_int_eq(r.size, size);
}

START_TEST(sub_axis_validity_requires_divisible_strict_part) {
  sp_axis_ref a = sub(2, 4), b = sub(1, 16), c = sub(3, 2), d = sub(1, 1), e = sub(4, 8);
  ck_assert(sp_axis_is_valid(&a, N));
  ck_assert(!sp_axis_is_valid(&b, N)); /* the whole axis must be written as "x" */
  ck_assert(!sp_axis_is_valid(&c, N)); /* 6 does not divide 16 */
  ck_assert(!sp_axis_is_valid(&d, N)); /* size 1 */
  ck_assert(!sp_axis_is_valid(&e, N)); /* 32 > 16 */
}
END_TEST

START_TEST(containment_prefix_and_suffix_follow_pre_and_next) {
  sp_axis_ref a = sub(2, 8), b = sub(4, 2), p = sub(1, 4), x = full(), s = sub(4, 4);
  ck_assert(sp_axis_contains(&a, &b, N));
  ck_assert(!sp_axis_contains(&b, &a, N));
  ck_assert(sp_axis_is_prefix_of(&p, &x, N));
  ck_assert(sp_axis_is_strict_prefix_of(&p, &x, N));
  ck_assert(!sp_axis_is_strict_prefix_of(&x, &x, N));
  sp_axis_ref q = sub(2, 2);
  ck_assert(sp_axis_is_prefix_of(&q, &a, N));
  ck_assert(sp_axis_is_suffix_of(&s, &x, N));
  ck_assert(!sp_axis_is_suffix_of(&p, &x, N));
}
END_TEST

START_TEST(overlap_part_of_two_sub_axes_is_their_intersection) {
  sp_axis_ref a = sub(1, 4), b = sub(2, 4), out;
  ck_assert(sp_axis_overlaps(&a, &b, N));
  ck_assert(sp_axis_overlap_part(&a, &b, N, &out));
  assert_ref(out, 2, 2);
  sp_axis_ref c = sub(1, 2), d = sub(4, 4);
  ck_assert(!sp_axis_overlaps(&c, &d, N));
}
END_TEST

START_TEST(sub_axes_that_do_not_nest_cannot_coexist) {
  /* size-6 axis: "x":(1)2 and "x":(3)2 */
  sp_axis_ref a = {"x", 1, 2}, b = {"x", 3, 2};
  ck_assert(!sp_axis_can_coexist(&a, &b, 6));
  sp_axis_ref c = sub(1, 4), d = sub(2, 4);
  ck_assert(sp_axis_can_coexist(&c, &d, N));
}
END_TEST

START_TEST(prefix_without_overlap_cuts_the_major_part) {
  sp_axis_ref x = full(), b = sub(4, 2), out;
  ck_assert(sp_axis_prefix_without_overlap(&x, &b, N, &out));
  assert_ref(out, 1, 4);
  /* no overlap: unchanged */
  sp_axis_ref c = sub(1, 2), d = sub(4, 4);
  ck_assert(sp_axis_prefix_without_overlap(&c, &d, N, &out));
  assert_ref(out, 1, 2);
  /* b starts before a: nothing left */
  ck_assert(!sp_axis_prefix_without_overlap(&b, &x, N, &out));
  /* other name: unchanged */
  sp_axis_ref y = {"y", 0, 0};
  ck_assert(sp_axis_prefix_without_overlap(&y, &x, N, &out));
  ck_assert_str_eq(out.name, "y");
}
END_TEST

START_TEST(suffix_without_overlap_cuts_the_minor_part) {
  sp_axis_ref x = full(), b = sub(1, 4), out;
  ck_assert(sp_axis_suffix_without_overlap(&x, &b, N, &out));
  assert_ref(out, 4, 4);
  ck_assert(!sp_axis_suffix_without_overlap(&b, &x, N, &out));
}
END_TEST

START_TEST(adjacent_sub_axes_merge_into_one_or_the_full_axis) {
  sp_axis_ref a = sub(2, 4), b = sub(8, 2);
  ck_assert(sp_axis_can_merge(&a, &b));
  assert_ref(sp_axis_merge(&a, &b, N), 2, 8);
  sp_axis_ref c = sub(1, 4), d = sub(4, 4);
  assert_ref(sp_axis_merge(&c, &d, N), 0, 0);
  ck_assert(!sp_axis_can_merge(&b, &a));
}
END_TEST

#ifndef NDEBUG
/* axis_ref.h: merging requires sp_axis_can_merge; debug builds check it. */
START_TEST(merging_parts_that_cannot_merge_aborts_in_debug_builds) {
  sp_axis_ref a = sub(2, 4), b = sub(8, 2);
  sp_axis_merge(&b, &a, N); /* aborts */
}
END_TEST
#endif

START_TEST(greatest_common_prefix_needs_a_shared_start) {
  sp_axis_ref a = sub(1, 2), x = full(), out;
  ck_assert(sp_axis_greatest_common_prefix(&a, &x, N, &out));
  assert_ref(out, 1, 2);
  sp_axis_ref b = sub(2, 2);
  ck_assert(!sp_axis_greatest_common_prefix(&b, &a, N, &out));
}
END_TEST

START_TEST(mesh_order_sorts_by_axis_then_full_then_sub_axes) {
  sp_mesh_axis axes[2] = {{"y", 4}, {"x", 16}};
  sp_mesh m = {2, axes, 0, NULL};
  sp_axis_ref y = {"y", 0, 0}, x = full(), x14 = sub(1, 4), x22 = sub(2, 2);
  ck_assert_int_lt(sp_axis_compare(&y, &x, &m), 0);
  ck_assert_int_lt(sp_axis_compare(&x14, &x, &m), 0);
  ck_assert_int_lt(sp_axis_compare(&x, &x22, &m), 0);
  ck_assert_int_lt(sp_axis_compare(&x14, &x22, &m), 0);
  ck_assert_int_eq(sp_axis_compare(&x, &x, &m), 0);
}
END_TEST

static Suite *axis_suite(void) {
  Suite *s = suite_create("axis_ref");
  TCase *tc = tcase_create("relations");
  tcase_add_test(tc, sub_axis_validity_requires_divisible_strict_part);
  tcase_add_test(tc, containment_prefix_and_suffix_follow_pre_and_next);
  tcase_add_test(tc, overlap_part_of_two_sub_axes_is_their_intersection);
  tcase_add_test(tc, sub_axes_that_do_not_nest_cannot_coexist);
  tcase_add_test(tc, prefix_without_overlap_cuts_the_major_part);
  tcase_add_test(tc, suffix_without_overlap_cuts_the_minor_part);
  tcase_add_test(tc, adjacent_sub_axes_merge_into_one_or_the_full_axis);
#ifndef NDEBUG
  tcase_add_test_raise_signal(tc, merging_parts_that_cannot_merge_aborts_in_debug_builds,
                              SIGABRT);
#endif
  tcase_add_test(tc, greatest_common_prefix_needs_a_shared_start);
  tcase_add_test(tc, mesh_order_sorts_by_axis_then_full_then_sub_axes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(axis_suite()); }
