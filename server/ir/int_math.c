/*
 * int_math.c - greatest common divisor and saturating multiplication of sizes (int_math.h).
 */
#include "ir/int_math.h"

int64_t sp_gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t r = a % b;
    a = b;
    b = r;
  }
  return a;
}

int64_t sp_mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > INT64_MAX / b) return INT64_MAX;
  return a * b;
}
