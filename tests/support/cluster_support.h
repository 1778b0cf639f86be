/*
 * cluster_support.h - the example clusters for the suites of the search stage and above:
 * sp_test_load_cluster() loads examples/clusters/<name> of the source tree and fails the running
 * test on an error. Its own header, so that including it is what links sp_search (see
 * tests/CMakeLists.txt). The caller frees the cluster (sp_cluster_free).
 */
#ifndef SP_CLUSTER_SUPPORT_H
#define SP_CLUSTER_SUPPORT_H

#include <check.h>
#include <stdio.h>

#include "search/cluster.h"

static inline sp_cluster *sp_test_load_cluster(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/clusters/%s", SP_SOURCE_DIR, name);
  sp_cluster *c = NULL;
  sp_err err;
  int rc = sp_cluster_load(path, &c, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return c;
}

#endif /* SP_CLUSTER_SUPPORT_H */
