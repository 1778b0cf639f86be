/*
 * test_hooks.h - hooks the daemon's test build defines to reach timing windows on purpose
 * (tests/daemon.cmake: shardpland-faults links tests/support/rows_hold_hook.c). They are weak
 * references: undefined, hence NULL, in shardpland, which never calls them.
 */
#ifndef SP_RPC_TEST_HOOKS_H
#define SP_RPC_TEST_HOOKS_H

/* Called on the answering thread once a plan handed out before its detail rows were stored
 * has been answered, before the rows are written (plan_job.c); it may block to hold them
 * back, so that a test reaches that window deterministically. */
extern void sp_test_hook_rows_pending(const char *key) __attribute__((weak));

#endif /* SP_RPC_TEST_HOOKS_H */
