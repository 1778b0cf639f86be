/*
 * test_int_math.c - the size arithmetic of ir/int_math.h: gcd and saturating products.
 */
#include <check.h>
#include <stdint.h>

#include "ir/int_math.h"
#include "test_support.h"

START_TEST(gcd_of_sizes_and_of_zero) {
  ck_assert_int_eq(sp_gcd64(12, 18), 6);
  ck_assert_int_eq(sp_gcd64(18, 12), 6);
  ck_assert_int_eq(sp_gcd64(7, 5), 1);
  ck_assert_int_eq(sp_gcd64(8, 0), 8);
  ck_assert_int_eq(sp_gcd64(0, 8), 8);
  ck_assert_int_eq(sp_gcd64((int64_t)1 << 40, (int64_t)3 << 20), (int64_t)1 << 20);
}
END_TEST

START_TEST(products_saturate_at_int64_max_instead_of_overflowing) {
  ck_assert_int_eq(sp_mul_sat(6, 7), 42);
  ck_assert_int_eq(sp_mul_sat(0, INT64_MAX), 0);
  ck_assert_int_eq(sp_mul_sat(INT64_MAX, 0), 0);
  ck_assert_int_eq(sp_mul_sat(INT64_MAX, 1), INT64_MAX);
  ck_assert_int_eq(sp_mul_sat((int64_t)1 << 32, (int64_t)1 << 30), (int64_t)1 << 62);
  ck_assert_int_eq(sp_mul_sat((int64_t)1 << 32, (int64_t)1 << 31), INT64_MAX);
  ck_assert_int_eq(sp_mul_sat(INT64_MAX / 2 + 1, 2), INT64_MAX);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("int_math");
  TCase *tc = tcase_create("int_math");
  tcase_add_test(tc, gcd_of_sizes_and_of_zero);
  tcase_add_test(tc, products_saturate_at_int64_max_instead_of_overflowing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
