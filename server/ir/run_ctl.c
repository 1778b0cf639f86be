/*
 * run_ctl.c - deadline, cancel flag and progress of a request (see run_ctl.h).
 */
#include "ir/run_ctl.h"

#include <math.h>
#include <stddef.h>

#include "ir/clock.h"

bool sp_run_ctl_cancelled(const sp_run_ctl *c) {
  return c && c->cancel && atomic_load_explicit(c->cancel, memory_order_relaxed) != 0;
}

double sp_run_ctl_deadline(const sp_run_ctl *c) {
  if (!c) return 0;
  if (c->moving_deadline_us)
    return (double)atomic_load_explicit(c->moving_deadline_us, memory_order_relaxed) / 1e6;
  return c->deadline;
}

bool sp_run_ctl_stopped(const sp_run_ctl *c) {
  if (!c) return false;
  if (sp_run_ctl_cancelled(c)) return true;
  double d = sp_run_ctl_deadline(c);
  return d > 0 && sp_clock_now() >= d;
}

double sp_run_ctl_left(const sp_run_ctl *c) {
  double d = sp_run_ctl_deadline(c);
  if (d <= 0) return HUGE_VAL;
  return d - sp_clock_now();
}

long long sp_run_ctl_snapshot_due(const sp_run_ctl *c) {
  if (!c || !c->snapshot_at_us) return 0;
  long long at = atomic_load_explicit(c->snapshot_at_us, memory_order_relaxed);
  return at > 0 && sp_clock_now() * 1e6 >= (double)at ? at : 0;
}

void sp_run_ctl_report(const sp_run_ctl *c, const sp_progress *p) {
  if (c && c->progress) c->progress(c->progress_ctx, p);
}
