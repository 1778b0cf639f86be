/*
 * cluster.h - the cluster model: devices, machines, links, and what a mesh axis costs.
 *
 * A cluster is a set of machines holding devices (each of a device type with memory bytes and
 * peak FLOP/s per element type) joined by links (kind, bandwidth in bytes/s, latency in s).
 * Within a machine every pair of devices uses the machine's link unless an explicit link says
 * otherwise; across machines the cluster's network link applies. Device types may differ
 * (a heterogeneous cluster); a mesh spans devices of one type.
 *
 * A mesh placed on the cluster (mesh axes + the physical device of every mesh coordinate) gets,
 * per axis, the alpha (latency) and beta (bandwidth) of the slowest link between any two devices
 * that differ only in that axis' coordinate: collectives along the axis run over those groups.
 * Rank mapping chooses the physical order so that the axes with the most traffic sit on the
 * fastest links; mesh-shape search enumerates the factorisations of a device count.
 *
 * The JSON format (the examples in examples/clusters/, documented in docs/cluster-format.md):
 *   {"device_types": {"a100": {"memory_bytes": 8.5e10, "flops": {"bf16": 3.12e14, "f32": 1.95e13}}},
 *    "machines": [{"name": "node0", "device_type": "a100", "num_devices": 8,
 *                  "link": {"kind": "nvlink", "bandwidth": 3.0e11, "latency": 2e-6}}],
 *    "network": {"kind": "infiniband", "bandwidth": 2.5e10, "latency": 5e-6},
 *    "links": [{"src": 0, "dst": 1, "kind": "pcie", "bandwidth": 3.2e10, "latency": 5e-6}]}
 * Devices are numbered machine by machine in file order.
 *
 * Memory: a cluster is heap-owned (sp_cluster_free); placements are plain caller structs.
 */
#ifndef SP_CLUSTER_H
#define SP_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/mesh.h"

#define SP_CLUSTER_MAX_DTYPES 8
#define SP_CLUSTER_NAME_MAX 32
#define SP_MAX_MESH_AXES_CLUSTER 16   /* axes of a mesh placed on a cluster */

typedef struct sp_link {
  char kind[SP_CLUSTER_NAME_MAX];  /* "nvlink", "pcie", "network", ... */
  double bandwidth;                /* bytes per second, > 0 */
  double latency;                  /* seconds, >= 0 */
} sp_link;

typedef struct sp_device_type {
  char name[SP_CLUSTER_NAME_MAX];
  double memory_bytes;
  int nflops;
  char flops_dtype[SP_CLUSTER_MAX_DTYPES][16];  /* "bf16", "f32", ... */
  double flops[SP_CLUSTER_MAX_DTYPES];          /* peak FLOP/s for that element type */
} sp_device_type;

typedef struct sp_device {
  int id;
  int machine;        /* index into machines */
  int type;           /* index into device_types */
} sp_device;

typedef struct sp_machine {
  char name[SP_CLUSTER_NAME_MAX];
  int first_device, num_devices;
  sp_link link;       /* between two devices of this machine */
} sp_machine;

typedef struct sp_explicit_link {
  int src, dst;
  sp_link link;
} sp_explicit_link;

typedef struct sp_cluster {
  int ntypes;
  sp_device_type *types;
  int nmachines;
  sp_machine *machines;
  int ndevices;
  sp_device *devices;
  sp_link network;    /* between machines */
  int nlinks;
  sp_explicit_link *links;
  bool no_reduce_scatter;  /* "reduce_scatter": false: the runtime has no reduce-scatter and runs
                              a reduction onto a sharded result as an all-reduce, then each device
                              keeps its part (XLA on CPU); the search then offers only that */
} sp_cluster;

/* Reads a cluster from JSON text; errors name the field ("machines[1].num_devices: ..."). */
int sp_cluster_parse(const char *json, sp_cluster **out, sp_err *err);
int sp_cluster_load(const char *path, sp_cluster **out, sp_err *err);
void sp_cluster_free(sp_cluster *c);

/* The link between two devices (explicit, else same machine, else network). */
const sp_link *sp_cluster_link(const sp_cluster *c, int a, int b);
/* Peak FLOP/s of a device for an element type (falls back to the type's slowest listed rate;
 * 0 if the type lists none). */
double sp_cluster_device_flops(const sp_cluster *c, int device, const char *dtype);
double sp_cluster_device_memory(const sp_cluster *c, int device);

/* Per mesh axis: alpha (s) and bandwidth (bytes/s) of the slowest link inside its groups. */
typedef struct sp_axis_cost {
  double alpha;
  double bandwidth;
  char kind[SP_CLUSTER_NAME_MAX];   /* kind of that slowest link */
} sp_axis_cost;

/* `device_of` maps a mesh coordinate's linear index (row-major over `mesh` axes) to a cluster
 * device id; NULL means mesh->device_ids, or the identity when the mesh has none. Fills
 * costs[0..mesh->naxes). */
int sp_cluster_axis_costs(const sp_cluster *c, const sp_mesh *mesh, const int64_t *device_of,
                          sp_axis_cost *costs, sp_err *err);

/* Rank mapping: given per-axis traffic (bytes, any scale) for `mesh` placed on devices
 * first_device .. first_device+N-1, writes device_of[N] so that heavier-traffic axes vary
 * fastest in physical order (staying inside a machine when they fit). */
int sp_cluster_map_ranks(const sp_cluster *c, const sp_mesh *mesh, const double *traffic,
                         int first_device, int64_t *device_of, sp_err *err);

/* Mesh-shape search: every ordered factorisation of n into `naxes` factors (naxes >= 1),
 * each > 1, or >= 1 with `allow_one` (an axis of size 1 leaves the plan to the others),
 * written row by row into shapes[max][naxes] in lexicographic order; returns how many exist
 * (may exceed max). */
int sp_cluster_mesh_shapes(int64_t n, int naxes, bool allow_one, int64_t *shapes, int max);

#endif /* SP_CLUSTER_H */
