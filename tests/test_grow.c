/*
 * test_grow.c - growth of heap arrays (ir/grow.h): room is made for the index asked for by
 * doubling, contents survive, nothing happens while there is room, and an impossible size fails
 * with the array left as it was.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "ir/err.h"
#include "ir/grow.h"
#include "test_support.h"

START_TEST(pushes_keep_every_element_and_capacity_doubles) {
  int *v = NULL, cap = 0;
  for (int n = 0; n < 1000; n++) {
    ck_assert_int_eq(sp_grow((void **)&v, &cap, n, sizeof *v), SP_OK);
    ck_assert_int_gt(cap, n);
    v[n] = 3 * n;
  }
  ck_assert_int_eq(cap, 1024);   /* 8, 16, ..., 1024 */
  for (int n = 0; n < 1000; n++) ck_assert_int_eq(v[n], 3 * n);
  free(v);
}
END_TEST

START_TEST(an_index_far_past_the_end_grows_in_one_step) {
  int *v = NULL, cap = 0;
  ck_assert_int_eq(sp_grow((void **)&v, &cap, 100, sizeof *v), SP_OK);
  ck_assert_int_eq(cap, 128);
  v[100] = 1;
  int *before = v;
  ck_assert_int_eq(sp_grow((void **)&v, &cap, 127, sizeof *v), SP_OK);  /* room already */
  ck_assert_ptr_eq(v, before);
  ck_assert_int_eq(cap, 128);
  free(v);
}
END_TEST

START_TEST(size_t_capacities_grow_the_same_way) {
  char *s = NULL;
  size_t cap = 0;
  ck_assert_int_eq(sp_grow_z((void **)&s, &cap, 0, 1), SP_OK);
  ck_assert_uint_eq(cap, 8);
  ck_assert_int_eq(sp_grow_z((void **)&s, &cap, 8, 1), SP_OK);
  ck_assert_uint_eq(cap, 16);
  free(s);
}
END_TEST

START_TEST(an_impossible_size_fails_and_leaves_the_array_alone) {
  int *v = NULL, cap = 0;
  ck_assert_int_eq(sp_grow((void **)&v, &cap, 3, sizeof *v), SP_OK);
  v[3] = 7;
  int *before = v;
  size_t zcap = (size_t)cap;
  ck_assert_int_eq(sp_grow_z((void **)&v, &zcap, SIZE_MAX / 2, sizeof *v), SP_ENOMEM);
  ck_assert_ptr_eq(v, before);
  ck_assert_uint_eq(zcap, 8);
  ck_assert_int_eq(v[3], 7);
  free(v);
}
END_TEST

static Suite *grow_suite(void) {
  Suite *s = suite_create("grow");
  TCase *tc = tcase_create("grow");
  tcase_add_test(tc, pushes_keep_every_element_and_capacity_doubles);
  tcase_add_test(tc, an_index_far_past_the_end_grows_in_one_step);
  tcase_add_test(tc, size_t_capacities_grow_the_same_way);
  tcase_add_test(tc, an_impossible_size_fails_and_leaves_the_array_alone);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(grow_suite()); }
