/*
 * int_math.h - the integer arithmetic of dim and axis sizes: greatest common divisor and
 * saturating multiplication (a product of sizes that would overflow int64 is INT64_MAX, which
 * no real size reaches, so comparisons against it stay correct).
 *
 * Pure functions: no state, no allocation, thread-safe.
 */
#ifndef SP_INT_MATH_H
#define SP_INT_MATH_H

#include <stdint.h>

/* gcd(a, b) by Euclid's algorithm; gcd(a, 0) = a. Sizes are >= 0. */
int64_t sp_gcd64(int64_t a, int64_t b);
/* a * b for a, b >= 0, INT64_MAX when the product does not fit. */
int64_t sp_mul_sat(int64_t a, int64_t b);

#endif /* SP_INT_MATH_H */
