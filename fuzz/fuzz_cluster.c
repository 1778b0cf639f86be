/*
 * fuzz_cluster.c - libFuzzer target: the cluster file reader (search/cluster.h), and on what
 * it accepts the per-axis link costs, rank mapping and mesh-shape enumeration a search runs.
 *
 * Invariants beyond "no crash": a rejected file has an error message; an accepted cluster has
 * positive bandwidths, non-negative latencies and memory, devices numbered machine by machine;
 * axis costs over its devices are positive and finite; rank mapping gives a permutation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ir/arena.h"
#include "ir/mesh.h"
#include "search/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_link(const sp_link *l) {
  sp_fuzz_check(l->bandwidth > 0 && isfinite(l->bandwidth), "link bandwidth", NULL);
  sp_fuzz_check(l->latency >= 0 && isfinite(l->latency), "link latency", NULL);
}

/* Places a 2-axis mesh over the first devices and checks costs and rank mapping. */
static void check_mesh(const sp_cluster *c, int64_t n0, int64_t n1) {
  if (n0 * n1 > c->ndevices || n0 * n1 > 64) return;
  sp_arena *a = sp_arena_new(0);
  sp_mesh mesh;
  memset(&mesh, 0, sizeof mesh);
  static char x[] = "x", y[] = "y";
  sp_mesh_axis axes[2] = {{.name = x, .size = n0}, {.name = y, .size = n1}};
  mesh.naxes = 2;
  mesh.axes = axes;
  sp_axis_cost costs[2];
  sp_err err;
  int rc = sp_cluster_axis_costs(c, &mesh, NULL, costs, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "axis costs failed without an error");
  } else {
    for (int i = 0; i < 2; i++)
      sp_fuzz_check(costs[i].bandwidth > 0 && costs[i].alpha >= 0, "axis cost", NULL);
  }
  double traffic[2] = {1.0, 3.0};
  int64_t device_of[64];
  rc = sp_cluster_map_ranks(c, &mesh, traffic, 0, device_of, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "rank mapping failed without an error");
  } else {
    char seen[64] = {0};
    for (int64_t i = 0; i < n0 * n1; i++) {
      sp_fuzz_check(device_of[i] >= 0 && device_of[i] < n0 * n1 && !seen[device_of[i]],
                    "rank mapping is not a permutation of the mesh's devices", NULL);
      seen[device_of[i]] = 1;
    }
  }
  sp_arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  sp_fuzz_check(text != NULL, "malloc", NULL);
  memcpy(text, data, size);
  text[size] = '\0';
  sp_cluster *c = NULL;
  sp_err err;
  int rc = sp_cluster_parse(text, &c, &err);
  free(text);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "cluster reader failed without an error");
    sp_fuzz_check(c == NULL, "cluster reader failed but returned a cluster", &err);
    return 0;
  }
  int next = 0;
  for (int i = 0; i < c->nmachines; i++) {
    sp_fuzz_check(c->machines[i].first_device == next, "devices numbered machine by machine",
                  NULL);
    next += c->machines[i].num_devices;
    check_link(&c->machines[i].link);
  }
  sp_fuzz_check(next == c->ndevices, "device count", NULL);
  if (c->nmachines > 1) check_link(&c->network);
  for (int i = 0; i < c->nlinks; i++) check_link(&c->links[i].link);
  for (int d = 0; d < c->ndevices && d < 64; d++) {
    sp_fuzz_check(sp_cluster_device_memory(c, d) >= 0, "device memory", NULL);
    sp_fuzz_check(sp_cluster_device_flops(c, d, "f32") >= 0, "device flops", NULL);
    check_link(sp_cluster_link(c, 0, d));
  }
  check_mesh(c, 2, c->ndevices / 2 > 0 ? c->ndevices / 2 : 1);
  check_mesh(c, c->ndevices, 1);
  int64_t shapes[16 * 3];
  int n = sp_cluster_mesh_shapes(c->ndevices, 3, false, shapes, 16);
  sp_fuzz_check(n >= 0, "mesh shapes", NULL);
  for (int i = 0; i < n && i < 16; i++)
    sp_fuzz_check(shapes[3 * i] * shapes[3 * i + 1] * shapes[3 * i + 2] == c->ndevices,
                  "mesh shape does not multiply to the device count", NULL);
  sp_cluster_free(c);
  return 0;
}
