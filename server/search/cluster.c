/*
 * cluster.c - cluster model: JSON reading, links, per-axis costs, rank mapping, mesh shapes
 * (see cluster.h).
 */
#include "search/cluster.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/file_read.h"

#define MAX_CLUSTER_JSON_BYTES (64L * 1024 * 1024)
#define MAX_CLUSTER_DEVICES (1 << 20)

void sp_cluster_free(sp_cluster *c) {
  if (!c) return;
  free(c->types);
  free(c->machines);
  free(c->devices);
  free(c->links);
  free(c);
}

/* ------------------------------------------------------------------ JSON helpers */

static int get_number(const cJSON *obj, const char *key, const char *where, bool required,
                      double min, double *out, sp_err *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (!required) return SP_OK;
    return sp_err_set(err, SP_EINVAL, "%s: missing \"%s\"", where, key);
  }
  if (!cJSON_IsNumber(v))
    return sp_err_set(err, SP_EINVAL, "%s.%s: expected a number", where, key);
  if (!isfinite(v->valuedouble)) /* 1e999 reads as inf */
    return sp_err_set(err, SP_EINVAL, "%s.%s: expected a finite number", where, key);
  if (v->valuedouble < min)
    return sp_err_set(err, SP_EINVAL, "%s.%s: %g is below the minimum %g", where, key,
                      v->valuedouble, min);
  *out = v->valuedouble;
  return SP_OK;
}

static int get_name(const cJSON *obj, const char *key, const char *where, bool required,
                    char out[SP_CLUSTER_NAME_MAX], sp_err *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!v) {
    if (!required) return SP_OK;
    return sp_err_set(err, SP_EINVAL, "%s: missing \"%s\"", where, key);
  }
  if (!cJSON_IsString(v) || !v->valuestring[0])
    return sp_err_set(err, SP_EINVAL, "%s.%s: expected a non-empty string", where, key);
  if (strlen(v->valuestring) >= SP_CLUSTER_NAME_MAX)
    return sp_err_set(err, SP_EINVAL, "%s.%s: longer than %d characters", where, key,
                      SP_CLUSTER_NAME_MAX - 1);
  strcpy(out, v->valuestring);
  return SP_OK;
}

static int parse_link(const cJSON *obj, const char *where, sp_link *l, sp_err *err) {
  if (!cJSON_IsObject(obj)) return sp_err_set(err, SP_EINVAL, "%s: expected an object", where);
  int rc;
  strcpy(l->kind, "link");
  if ((rc = get_name(obj, "kind", where, false, l->kind, err))) return rc;
  if ((rc = get_number(obj, "bandwidth", where, true, 1e-9, &l->bandwidth, err))) return rc;
  l->latency = 0;
  return get_number(obj, "latency", where, false, 0, &l->latency, err);
}

static int parse_device_type(const cJSON *item, sp_device_type *t, sp_err *err) {
  char where[96];
  snprintf(where, sizeof where, "device_types.%s", item->string);
  if (!cJSON_IsObject(item)) return sp_err_set(err, SP_EINVAL, "%s: expected an object", where);
  if (strlen(item->string) >= SP_CLUSTER_NAME_MAX)
    return sp_err_set(err, SP_EINVAL, "%s: name too long", where);
  strcpy(t->name, item->string);
  int rc = get_number(item, "memory_bytes", where, true, 1, &t->memory_bytes, err);
  if (rc) return rc;
  const cJSON *flops = cJSON_GetObjectItemCaseSensitive(item, "flops");
  if (!cJSON_IsObject(flops))
    return sp_err_set(err, SP_EINVAL, "%s.flops: expected an object of FLOP/s per element type",
                      where);
  const cJSON *f;
  cJSON_ArrayForEach(f, flops) {
    if (t->nflops == SP_CLUSTER_MAX_DTYPES)
      return sp_err_set(err, SP_EINVAL, "%s.flops: more than %d element types", where,
                        SP_CLUSTER_MAX_DTYPES);
    if (!cJSON_IsNumber(f) || f->valuedouble <= 0)
      return sp_err_set(err, SP_EINVAL, "%s.flops.%s: expected a positive number", where,
                        f->string);
    if (strlen(f->string) >= sizeof t->flops_dtype[0])
      return sp_err_set(err, SP_EINVAL, "%s.flops.%s: name too long", where, f->string);
    strcpy(t->flops_dtype[t->nflops], f->string);
    t->flops[t->nflops++] = f->valuedouble;
  }
  if (t->nflops == 0) return sp_err_set(err, SP_EINVAL, "%s.flops: empty", where);
  return SP_OK;
}

static int find_type(const sp_cluster *c, const char *name) {
  for (int i = 0; i < c->ntypes; i++)
    if (strcmp(c->types[i].name, name) == 0) return i;
  return -1;
}

static int parse_machines(const cJSON *arr, sp_cluster *c, sp_err *err) {
  if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
    return sp_err_set(err, SP_EINVAL, "machines: expected a non-empty array");
  c->nmachines = cJSON_GetArraySize(arr);
  c->machines = calloc((size_t)c->nmachines, sizeof *c->machines);
  if (!c->machines) return sp_err_set(err, SP_ENOMEM, "out of memory");
  long total = 0;
  const cJSON *m;
  int i = 0, rc;
  cJSON_ArrayForEach(m, arr) {
    char where[48];
    snprintf(where, sizeof where, "machines[%d]", i);
    sp_machine *mc = &c->machines[i];
    if (!cJSON_IsObject(m)) return sp_err_set(err, SP_EINVAL, "%s: expected an object", where);
    snprintf(mc->name, sizeof mc->name, "machine%d", i);
    if ((rc = get_name(m, "name", where, false, mc->name, err))) return rc;
    double n = 0;
    if ((rc = get_number(m, "num_devices", where, true, 1, &n, err))) return rc;
    if (n > MAX_CLUSTER_DEVICES || n != (double)(long)n)
      return sp_err_set(err, SP_EINVAL, "%s.num_devices: expected an integer up to %d", where,
                        MAX_CLUSTER_DEVICES);
    char tname[SP_CLUSTER_NAME_MAX];
    if ((rc = get_name(m, "device_type", where, true, tname, err))) return rc;
    if (find_type(c, tname) < 0)
      return sp_err_set(err, SP_EINVAL, "%s.device_type: unknown device type \"%s\"", where, tname);
    char lwhere[64];
    snprintf(lwhere, sizeof lwhere, "%s.link", where);
    const cJSON *link = cJSON_GetObjectItemCaseSensitive(m, "link");
    if (!link) return sp_err_set(err, SP_EINVAL, "%s: missing \"link\"", where);
    if ((rc = parse_link(link, lwhere, &mc->link, err))) return rc;
    mc->first_device = (int)total;
    mc->num_devices = (int)n;
    total += (long)n;
    if (total > MAX_CLUSTER_DEVICES)
      return sp_err_set(err, SP_ELIMIT, "more than %d devices in the cluster", MAX_CLUSTER_DEVICES);
    i++;
  }
  c->ndevices = (int)total;
  c->devices = calloc((size_t)total, sizeof *c->devices);
  if (!c->devices) return sp_err_set(err, SP_ENOMEM, "out of memory");
  i = 0;
  cJSON_ArrayForEach(m, arr) {
    int type = find_type(c, cJSON_GetObjectItemCaseSensitive(m, "device_type")->valuestring);
    for (int d = 0; d < c->machines[i].num_devices; d++) {
      sp_device *dev = &c->devices[c->machines[i].first_device + d];
      dev->id = c->machines[i].first_device + d;
      dev->machine = i;
      dev->type = type;
    }
    i++;
  }
  return SP_OK;
}

static int parse_explicit_links(const cJSON *arr, sp_cluster *c, sp_err *err) {
  if (!arr) return SP_OK;
  if (!cJSON_IsArray(arr)) return sp_err_set(err, SP_EINVAL, "links: expected an array");
  c->nlinks = cJSON_GetArraySize(arr);
  if (c->nlinks == 0) return SP_OK;
  c->links = calloc((size_t)c->nlinks, sizeof *c->links);
  if (!c->links) return sp_err_set(err, SP_ENOMEM, "out of memory");
  const cJSON *l;
  int i = 0, rc;
  cJSON_ArrayForEach(l, arr) {
    char where[48];
    snprintf(where, sizeof where, "links[%d]", i);
    if ((rc = parse_link(l, where, &c->links[i].link, err))) return rc;
    double src = 0, dst = 0;
    if ((rc = get_number(l, "src", where, true, 0, &src, err))) return rc;
    if ((rc = get_number(l, "dst", where, true, 0, &dst, err))) return rc;
    if (src >= c->ndevices || dst >= c->ndevices || src == dst)
      return sp_err_set(err, SP_EINVAL, "%s: src/dst must be two distinct devices below %d",
                        where, c->ndevices);
    c->links[i].src = (int)src;
    c->links[i].dst = (int)dst;
    i++;
  }
  return SP_OK;
}

int sp_cluster_parse(const char *json, sp_cluster **out, sp_err *err) {
  *out = NULL;
  cJSON *root = cJSON_Parse(json);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    long off = at ? (long)(at - json) : -1;
    return sp_err_set(err, SP_EINVAL, "cluster file is not valid JSON (near byte %ld)", off);
  }
  int rc = SP_OK;
  sp_cluster *c = calloc(1, sizeof *c);
  if (!c) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto fail;
  }
  const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "device_types");
  if (!cJSON_IsObject(types) || cJSON_GetArraySize(types) == 0) {
    rc = sp_err_set(err, SP_EINVAL, "device_types: expected a non-empty object");
    goto fail;
  }
  c->ntypes = cJSON_GetArraySize(types);
  c->types = calloc((size_t)c->ntypes, sizeof *c->types);
  if (!c->types) {
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
    goto fail;
  }
  const cJSON *t;
  int i = 0;
  cJSON_ArrayForEach(t, types) {
    if ((rc = parse_device_type(t, &c->types[i++], err))) goto fail;
  }
  if ((rc = parse_machines(cJSON_GetObjectItemCaseSensitive(root, "machines"), c, err))) goto fail;
  const cJSON *net = cJSON_GetObjectItemCaseSensitive(root, "network");
  if (net) {
    if ((rc = parse_link(net, "network", &c->network, err))) goto fail;
  } else if (c->nmachines > 1) {
    rc = sp_err_set(err, SP_EINVAL, "network: required when there is more than one machine");
    goto fail;
  }
  if ((rc = parse_explicit_links(cJSON_GetObjectItemCaseSensitive(root, "links"), c, err)))
    goto fail;
  const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "reduce_scatter");
  if (rs && !cJSON_IsBool(rs)) {
    rc = sp_err_set(err, SP_EINVAL, "reduce_scatter: expected true or false");
    goto fail;
  }
  c->no_reduce_scatter = rs && cJSON_IsFalse(rs);
  cJSON_Delete(root);
  *out = c;
  return SP_OK;
fail:
  cJSON_Delete(root);
  sp_cluster_free(c);
  return rc;
}

int sp_cluster_load(const char *path, sp_cluster **out, sp_err *err) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return sp_err_set(err, SP_EIO, "%s: %s", path, strerror(errno));
  char *buf;
  int rc = sp_file_read_stream(f, MAX_CLUSTER_JSON_BYTES, &buf, NULL);
  fclose(f);
  if (rc == SP_ELIMIT)
    return sp_err_set(err, SP_ELIMIT, "%s: larger than %ld bytes", path, MAX_CLUSTER_JSON_BYTES);
  if (rc == SP_ENOMEM) return sp_err_set(err, SP_ENOMEM, "out of memory");
  if (rc) return sp_err_set(err, SP_EIO, "%s: read error", path);
  rc = sp_cluster_parse(buf, out, err);
  if (rc) sp_err_prefix(err, "%s", path);
  free(buf);
  return rc;
}

/* ------------------------------------------------------------------ queries */

const sp_link *sp_cluster_link(const sp_cluster *c, int a, int b) {
  for (int i = 0; i < c->nlinks; i++) {
    const sp_explicit_link *l = &c->links[i];
    if ((l->src == a && l->dst == b) || (l->src == b && l->dst == a)) return &l->link;
  }
  if (c->devices[a].machine == c->devices[b].machine)
    return &c->machines[c->devices[a].machine].link;
  return &c->network;
}

double sp_cluster_device_flops(const sp_cluster *c, int device, const char *dtype) {
  const sp_device_type *t = &c->types[c->devices[device].type];
  double slowest = 0;
  for (int i = 0; i < t->nflops; i++) {
    if (dtype && strcmp(t->flops_dtype[i], dtype) == 0) return t->flops[i];
    if (slowest == 0 || t->flops[i] < slowest) slowest = t->flops[i];
  }
  return slowest;
}

double sp_cluster_device_memory(const sp_cluster *c, int device) {
  return c->types[c->devices[device].type].memory_bytes;
}

/* ------------------------------------------------------------------ mesh placement */

static int64_t device_at(const sp_mesh *mesh, const int64_t *device_of, int64_t linear) {
  if (device_of) return device_of[linear];
  if (mesh->ndevice_ids) return mesh->device_ids[linear];
  return linear;
}

int sp_cluster_axis_costs(const sp_cluster *c, const sp_mesh *mesh, const int64_t *device_of,
                          sp_axis_cost *costs, sp_err *err) {
  int64_t n = sp_mesh_num_devices(mesh);
  for (int64_t i = 0; i < n; i++) {
    int64_t d = device_at(mesh, device_of, i);
    if (d < 0 || d >= c->ndevices)
      return sp_err_set(err, SP_EINVAL, "mesh coordinate %lld is placed on device %lld, but the "
                        "cluster has %d devices", (long long)i, (long long)d, c->ndevices);
  }
  int64_t stride = n;
  for (int k = 0; k < mesh->naxes; k++) {
    int64_t size = mesh->axes[k].size;
    stride /= size; /* row-major: stride of axis k */
    sp_axis_cost worst = {0, 0, ""};
    /* Each group: the coordinates that differ only along axis k. */
    for (int64_t base = 0; base < n; base++) {
      if ((base / stride) % size != 0) continue;
      for (int64_t a = 0; a < size; a++)
        for (int64_t b = a + 1; b < size; b++) {
          int da = (int)device_at(mesh, device_of, base + a * stride);
          int db = (int)device_at(mesh, device_of, base + b * stride);
          const sp_link *l = sp_cluster_link(c, da, db);
          if (worst.bandwidth == 0 || l->bandwidth < worst.bandwidth) {
            worst.bandwidth = l->bandwidth;
            snprintf(worst.kind, sizeof worst.kind, "%s", l->kind);
          }
          if (l->latency > worst.alpha) worst.alpha = l->latency;
        }
    }
    if (worst.bandwidth == 0) { /* size-1 axis: nothing moves */
      worst.bandwidth = 1e30;
      snprintf(worst.kind, sizeof worst.kind, "none");
    }
    costs[k] = worst;
  }
  return SP_OK;
}

int sp_cluster_map_ranks(const sp_cluster *c, const sp_mesh *mesh, const double *traffic,
                         int first_device, int64_t *device_of, sp_err *err) {
  int64_t n = sp_mesh_num_devices(mesh);
  if (first_device < 0 || first_device + n > c->ndevices)
    return sp_err_set(err, SP_EINVAL, "a mesh of %lld devices starting at device %d does not fit "
                      "a cluster of %d devices", (long long)n, first_device, c->ndevices);
  /* Order axes by traffic, heaviest first (ties: the more minor mesh axis first, which keeps
   * the default layout when traffic does not discriminate). */
  int order[SP_MAX_MESH_AXES_CLUSTER];
  int k = mesh->naxes;
  if (k > SP_MAX_MESH_AXES_CLUSTER)
    return sp_err_set(err, SP_ELIMIT, "mesh has more than %d axes", SP_MAX_MESH_AXES_CLUSTER);
  for (int i = 0; i < k; i++) order[i] = k - 1 - i;
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && traffic[order[j]] > traffic[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  /* The heaviest axis gets physical stride 1, the next the product of the ones before. */
  int64_t phys_stride[SP_MAX_MESH_AXES_CLUSTER], s = 1;
  for (int i = 0; i < k; i++) {
    phys_stride[order[i]] = s;
    s *= mesh->axes[order[i]].size;
  }
  for (int64_t lin = 0; lin < n; lin++) {
    int64_t rem = lin, phys = 0;
    for (int a = k - 1; a >= 0; a--) {
      int64_t coord = rem % mesh->axes[a].size;
      rem /= mesh->axes[a].size;
      phys += coord * phys_stride[a];
    }
    device_of[lin] = first_device + phys;
  }
  return SP_OK;
}

static int shapes_rec(int64_t n, int left, int64_t min_factor, int64_t *cur, int depth,
                      int naxes, int64_t *shapes, int max, int count) {
  if (left == 1) {
    if (n < min_factor) return count;
    cur[depth] = n;
    if (count < max)
      for (int i = 0; i < naxes; i++) shapes[(int64_t)count * naxes + i] = cur[i];
    return count + 1;
  }
  for (int64_t f = min_factor; f <= n; f++) {
    if (n % f) continue;
    cur[depth] = f;
    count = shapes_rec(n / f, left - 1, min_factor, cur, depth + 1, naxes, shapes, max, count);
  }
  return count;
}

int sp_cluster_mesh_shapes(int64_t n, int naxes, bool allow_one, int64_t *shapes, int max) {
  if (naxes < 1 || naxes > SP_MAX_MESH_AXES_CLUSTER || n < 1 || (n < 2 && !allow_one)) return 0;
  int64_t cur[SP_MAX_MESH_AXES_CLUSTER];
  return shapes_rec(n, naxes, allow_one ? 1 : 2, cur, 0, naxes, shapes, max, 0);
}
