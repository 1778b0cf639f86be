/*
 * run_ctl.h - how a caller steers a long-running request: a deadline, a cancel flag, and a
 * progress callback. A host (the daemon, a test) fills one per request and hangs it on the
 * module (sp_module.ctl); propagation checks it between op visits, the solver between phases
 * and inside GLPK's branch-and-bound callback, and both report progress through it.
 *
 * Semantics: a cancel flag set (to non-zero) stops the work as soon as a check sees it; the
 * request then fails with SP_ETIMEOUT and a message saying it was cancelled. A deadline that
 * passes during propagation fails the request the same way (a half-propagated module is not a
 * plan); during the search it clamps the solver's time limit, so the best valid plan found in
 * time is returned with its gap and the status "timeout".
 *
 * Thread safety: the struct is read-only for the engine and may be shared by the threads of
 * one request; `cancel` is an atomic another thread may set at any time. The progress callback
 * runs on the thread doing the work, synchronously; it must not call back into the engine on
 * the same module. Memory: owned by the caller, must outlive the request.
 */
#ifndef SP_RUN_CTL_H
#define SP_RUN_CTL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* One progress report. */
typedef struct sp_progress {
  const char *stage;    /* "propagation" or "search" */
  double seconds;       /* search: since the solve started; propagation: of the round */
  /* propagation: a fixed point finished */
  int round;            /* fixed points run so far in this pass (1-based) */
  int64_t visits;       /* op visits so far in this pass */
  int64_t updates;      /* sharding changes so far in this pass */
  /* search: a new incumbent or bound, or a phase change */
  const char *phase;    /* solver phase ("greedy", "ilp", ...); NULL for propagation */
  bool has_plan;
  int64_t cost;         /* best plan so far (if has_plan), in solver units (ns) */
  int64_t bound;        /* best lower bound so far (INT64_MIN if none) */
  double gap;           /* (cost - bound) / cost when both are known, else 1 */
} sp_progress;

typedef void (*sp_progress_fn)(void *ctx, const sp_progress *p);

typedef struct sp_run_ctl {
  double deadline;            /* sp_clock_now() seconds; 0 = none */
  const atomic_int *cancel;   /* non-zero = cancel; NULL = never */
  sp_progress_fn progress;    /* NULL = none */
  void *progress_ctx;
  /* A deadline another thread may move, earlier or later, while the request runs (the
   * daemon's search shared by callers with different deadlines): sp_clock_now()
   * microseconds, 0 = none. When set it replaces `deadline`; the engine reads it at every
   * check, so a moved deadline takes effect at the next one. NULL = `deadline` only. */
  const atomic_llong *moving_deadline_us;
  /* When the host wants the best plan so far while the work goes on (the daemon: a caller
   * whose deadline comes before the search's end): sp_clock_now() microseconds, 0 = never;
   * another thread may move it. Once it has passed, the search hands its best valid plan to
   * the host (plan.h: sp_plan_options.on_snapshot) at its next check that has one, and goes
   * on. The host moves it on (to its next time, or 0); a time left in place is served once.
   * NULL = never. */
  const atomic_llong *snapshot_at_us;
} sp_run_ctl;

/* The deadline in force now (sp_clock_now() seconds; 0 = none). */
double sp_run_ctl_deadline(const sp_run_ctl *c);

/* True when `c` (may be NULL) has its cancel flag set. */
bool sp_run_ctl_cancelled(const sp_run_ctl *c);
/* True when `c` (may be NULL) is cancelled or its deadline has passed. */
bool sp_run_ctl_stopped(const sp_run_ctl *c);
/* Seconds left before the deadline (may be <= 0); HUGE_VAL without one. */
double sp_run_ctl_left(const sp_run_ctl *c);
/* The snapshot time (sp_run_ctl.snapshot_at_us) when it has passed, else 0. */
long long sp_run_ctl_snapshot_due(const sp_run_ctl *c);
/* Calls the progress callback, if any. */
void sp_run_ctl_report(const sp_run_ctl *c, const sp_progress *p);

#endif /* SP_RUN_CTL_H */
