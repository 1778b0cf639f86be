/*
 * clock.h - the monotonic clock every stage measures time with (deadlines, time limits,
 * statistics). Seconds as a double since an arbitrary fixed origin; never goes back.
 * Thread-safe (clock_gettime).
 */
#ifndef SP_CLOCK_H
#define SP_CLOCK_H

#include <stdint.h>

/* Monotonic seconds (CLOCK_MONOTONIC). */
double sp_clock_now(void);
/* The same clock in whole milliseconds (deadlines and latencies kept as integers). */
int64_t sp_clock_now_ms(void);

#endif /* SP_CLOCK_H */
