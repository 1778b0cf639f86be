/*
 * rows_hold_hook.c - the daemon test build's hold on detail rows (shardpland-faults only; see
 * server/rpc/test_hooks.h).
 *
 * With SHARDPLAN_TEST_ROWS_HOLD=PATH in the environment, a plan answered before its detail
 * rows were stored has them held back while the file PATH exists: the hook first creates
 * PATH.reached (holding the plan's key), so a test knows the window is open, then waits for
 * PATH to go (at most 10 minutes, so a test that dies cannot leave the daemon stuck). Without
 * the variable, or when PATH does not exist, the rows are written at once as in shardpland.
 *
 * Memory: nothing kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rpc/test_hooks.h"

void sp_test_hook_rows_pending(const char *key) {
  const char *path = getenv("SHARDPLAN_TEST_ROWS_HOLD");
  if (!path || access(path, F_OK) != 0) return;
  /* Written aside and renamed: a test polling for PATH.reached never reads it half written. */
  char reached[4200], tmp[4300];
  snprintf(reached, sizeof reached, "%s.reached", path);
  snprintf(tmp, sizeof tmp, "%s.tmp", reached);
  FILE *f = fopen(tmp, "w");
  if (f) {
    fprintf(f, "%s\n", key);
    if (fclose(f) == 0) rename(tmp, reached);
  }
  for (int waited_ms = 0; access(path, F_OK) == 0 && waited_ms < 600000; waited_ms += 5)
    usleep(5000);
}
