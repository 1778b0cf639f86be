/*
 * search_pass.c - the pass -shardplan-search="cluster=FILE ...": its options, the cluster
 * file, and the placement search that plans the module (placement.h).
 */
#include "search/search_pass.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/cluster.h"
#include "search/placement.h"

static int parse_number(const char *key, const char *val, double *out, sp_err *err) {
  char *end;
  errno = 0;
  double d = strtod(val, &end);
  if (errno || end == val || *end || !(d >= 0))
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: %s=%s is not a number >= 0", key, val);
  *out = d;
  return SP_OK;
}

static int parse_bool(const char *key, const char *val, bool *out, sp_err *err) {
  if (strcmp(val, "true") == 0 || strcmp(val, "1") == 0) *out = true;
  else if (strcmp(val, "false") == 0 || strcmp(val, "0") == 0) *out = false;
  else return sp_err_set(err, SP_EINVAL, "-shardplan-search: %s=%s is not true or false", key, val);
  return SP_OK;
}

static int parse_devices(const char *val, int64_t **out, int *n, sp_err *err) {
  int count = 1;
  for (const char *p = val; *p; p++) count += (*p == ',' || *p == ';');
  int64_t *v = malloc((size_t)count * sizeof *v);
  if (!v) return sp_err_set(err, SP_ENOMEM, "out of memory");
  const char *p = val;
  for (int i = 0; i < count; i++) {
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (errno || end == p || x < 0 || (*end && *end != ',' && *end != ';')) {
      free(v);
      return sp_err_set(err, SP_EINVAL, "-shardplan-search: devices=%s: expected device ids "
                        "separated by ','", val);
    }
    v[i] = x;
    p = *end ? end + 1 : end;
  }
  *out = v;
  *n = count;
  return SP_OK;
}

static int parse_states(const char *val, sp_plan_state_pair **out, int *n, sp_err *err) {
  int count = 1;
  for (const char *p = val; *p; p++) count += (*p == ',');
  sp_plan_state_pair *v = malloc((size_t)count * sizeof *v);
  if (!v) return sp_err_set(err, SP_ENOMEM, "out of memory");
  const char *p = val;
  for (int i = 0; i < count; i++) {
    char *end;
    long a = strtol(p, &end, 10), r = -1;
    if (end != p && *end == ':') {
      const char *q = end + 1;
      r = strtol(q, &end, 10);
      if (end == q) r = -1;
    }
    if (a < 0 || r < 0 || a > INT32_MAX || r > INT32_MAX || (*end && *end != ',')) {
      free(v);
      return sp_err_set(err, SP_EINVAL, "-shardplan-search: state=%s: expected ARG:RESULT pairs "
                        "separated by ','", val);
    }
    v[i].arg = (int)a;
    v[i].result = (int)r;
    p = *end ? end + 1 : end;
  }
  *out = v;
  *n = count;
  return SP_OK;
}

/* A module without a mesh, given mesh-axes=A,B,...: adds `sdy.mesh @mesh` with those axes,
 * all `count` devices on the first (the shape search then tries every split). */
static int add_mesh(sp_module *m, const char *axes, int64_t count, sp_op **added, sp_err *err) {
  sp_arena *a = m->arena;
  int n = 1;
  for (const char *p = axes; *p; p++) n += *p == ',';
  sp_mesh *mesh = sp_arena_calloc(a, 1, sizeof *mesh);
  sp_mesh_axis *ax = sp_arena_calloc(a, (size_t)n, sizeof *ax);
  if (!mesh || !ax) return sp_err_set(err, SP_ENOMEM, "out of memory");
  const char *p = axes;
  for (int i = 0; i < n; i++) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    bool ok = len > 0;
    for (size_t k = 0; k < len; k++)
      ok &= (p[k] == '_' || (p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') ||
             (k > 0 && p[k] >= '0' && p[k] <= '9'));
    for (int j = 0; ok && j < i; j++) ok = strlen(ax[j].name) != len || strncmp(ax[j].name, p, len);
    if (!ok)
      return sp_err_set(err, SP_EINVAL, "-shardplan-search: mesh-axes=%s: expected distinct axis "
                        "names (letters, digits, '_') separated by ','", axes);
    if (!(ax[i].name = sp_arena_strndup(a, p, len)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    ax[i].size = i == 0 ? count : 1;
    p = end ? end + 1 : p + len;
  }
  mesh->naxes = n;
  mesh->axes = ax;
  sp_op *op = sp_op_create(a, "sdy.mesh", 0, NULL, 0, NULL, 0);
  if (!op) return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_attr sym = {.name = "sym_name", .kind = SP_ATTR_STR, .u.s = "mesh"};
  sp_attr at = {.name = "mesh", .kind = SP_ATTR_MESH, .u.mesh = mesh};
  if (sp_attrs_set(a, &op->attrs, &sym) || sp_attrs_set(a, &op->attrs, &at))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_block *body = sp_module_body(m);
  if (body->first) sp_op_insert_before(body->first, op);
  else sp_block_append(body, op);
  *added = op;
  return SP_OK;
}

static int parse_auto(const char *key, const char *val, bool *out, sp_err *err) {
  if (strcmp(val, "auto") == 0) *out = true;
  else if (strcmp(val, "given") == 0) *out = false;
  else return sp_err_set(err, SP_EINVAL, "-shardplan-search: %s=%s is not auto or given", key, val);
  return SP_OK;
}

void sp_search_overrides_init(sp_search_overrides *ov) {
  ov->cluster = NULL;
  ov->time_limit = -1;
  ov->gap = -1;
  ov->placement = -1;
  ov->mesh_shape = -1;
  ov->default_time_limit = -1;
  ov->nincumbent = 0;
  ov->incumbent = NULL;
}

int sp_search_pass(sp_module *m, const char *options, sp_plan_summary *out, sp_err *err) {
  return sp_search_pass_with(m, options, NULL, out, err);
}

int sp_search_pass_with(sp_module *m, const char *options, const sp_search_overrides *ov,
                        sp_plan_summary *out, sp_err *err) {
  sp_plan_search_opts o;
  sp_plan_search_opts_init(&o);
  sp_placement_opts po;
  sp_placement_opts_init(&po);
  char *text = strdup(options ? options : "");
  char *cluster_path = NULL, *mesh = NULL, *report = NULL, *mesh_axes = NULL;
  sp_op *added_mesh = NULL;  /* by mesh-axes=; taken out again if the pass fails */
  int64_t *devices = NULL;
  sp_plan_state_pair *states = NULL;
  int ndevices = 0, nstates = 0, rc = SP_OK;
  bool text_time_limit = false;
  sp_cluster *cluster = NULL;
  if (!text) return sp_err_set(err, SP_ENOMEM, "out of memory");
  char *save = NULL;
  for (char *tok = strtok_r(text, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: option '%s' has no '=VALUE'", tok);
      goto fail;
    }
    *eq = '\0';
    const char *key = tok, *val = eq + 1;
    double d = 0;
    bool b = false;
    if (strcmp(key, "cluster") == 0) cluster_path = (char *)val;
    else if (strcmp(key, "mesh") == 0) mesh = (char *)val;
    else if (strcmp(key, "report") == 0) report = (char *)val;
    else if (strcmp(key, "dump-graph") == 0) o.dump_graph = val;
    else if (strcmp(key, "time-limit") == 0) {
      if ((rc = parse_number(key, val, &o.time_limit, err))) goto fail;
      text_time_limit = true;
    } else if (strcmp(key, "gap") == 0) {
      if ((rc = parse_number(key, val, &o.gap, err))) goto fail;
    } else if (strcmp(key, "work-limit") == 0) {
      if ((rc = parse_number(key, val, &d, err))) goto fail;
      o.work_limit = (int64_t)d;
    } else if (strcmp(key, "seed") == 0) {
      if ((rc = parse_number(key, val, &d, err))) goto fail;
      o.seed = (uint64_t)d;
    } else if (strcmp(key, "max-strategies") == 0) {
      if ((rc = parse_number(key, val, &d, err))) goto fail;
      o.max_strategies = d > 1e6 ? 1000000 : (int)d;
    } else if (strcmp(key, "mem-weight") == 0) {
      if ((rc = parse_number(key, val, &o.mem_weight, err))) goto fail;
    } else if (strcmp(key, "memory-limit") == 0) {
      if ((rc = parse_number(key, val, &o.memory_limit, err))) goto fail;
    } else if (strcmp(key, "coarsen") == 0) {
      if ((rc = parse_bool(key, val, &b, err))) goto fail;
      o.no_coarsen = !b;
    } else if (strcmp(key, "reduce-scatter") == 0) {
      if ((rc = parse_bool(key, val, &b, err))) goto fail;
      o.no_reduce_scatter = !b;
    } else if (strcmp(key, "share-layers") == 0) {
      if ((rc = parse_bool(key, val, &b, err))) goto fail;
      o.no_share_layers = !b;
    } else if (strcmp(key, "placement") == 0) {
      if ((rc = parse_auto(key, val, &po.auto_devices, err))) goto fail;
    } else if (strcmp(key, "mesh-shape") == 0) {
      if ((rc = parse_auto(key, val, &po.auto_shape, err))) goto fail;
    } else if (strcmp(key, "num-devices") == 0) {
      if ((rc = parse_number(key, val, &d, err))) goto fail;
      if (d < 1 || d > 1e9 || d != (double)(int64_t)d) {
        rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: num-devices=%s is not a device count", val);
        goto fail;
      }
      po.num_devices = (int64_t)d;
    } else if (strcmp(key, "mesh-axes") == 0) {
      mesh_axes = (char *)val;
    } else if (strcmp(key, "state") == 0) {
      free(states);
      states = NULL;
      if ((rc = parse_states(val, &states, &nstates, err))) goto fail;
    } else if (strcmp(key, "devices") == 0) {
      free(devices);
      devices = NULL;
      if ((rc = parse_devices(val, &devices, &ndevices, err))) goto fail;
    } else {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: unknown option '%s' (known: cluster, "
                      "mesh, time-limit, gap, work-limit, seed, devices, state, max-strategies, "
                      "mem-weight, memory-limit, coarsen, reduce-scatter, share-layers, placement, "
                      "mesh-shape, num-devices, mesh-axes, report, dump-graph)", key);
      goto fail;
    }
  }
  if (ov) {
    if (!text_time_limit && ov->default_time_limit >= 0) o.time_limit = ov->default_time_limit;
    if (ov->time_limit >= 0) o.time_limit = ov->time_limit;
    o.nincumbent = ov->nincumbent;
    o.incumbent = ov->incumbent;
    if (ov->gap >= 0) o.gap = ov->gap;
    if (ov->placement >= 0) po.auto_devices = ov->placement != 0;
    if (ov->mesh_shape >= 0) po.auto_shape = ov->mesh_shape != 0;
  }
  if (ov && ov->cluster) {
    o.cluster = ov->cluster;
  } else {
    if (!cluster_path) {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: cluster=FILE is required");
      goto fail;
    }
    rc = sp_cluster_load(cluster_path, &cluster, err);
    if (rc) {
      sp_err_prefix(err, "-shardplan-search");
      goto fail;
    }
    o.cluster = cluster;
  }
  o.mesh_name = mesh;
  if (mesh_axes) {
    /* Only a device count and the axis names: the search picks the shape. */
    sp_op *existing = NULL;
    for (sp_op *op = sp_module_body(m)->first; op && !existing; op = op->next)
      if (op->kind == SP_OP_SDY_MESH) existing = op;
    if (existing) {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: mesh-axes= is for a module without an "
                      "sdy.mesh; this one has @%s (use mesh-shape=auto to search its shape)",
                      sp_op_get_str(existing, "sym_name"));
      goto fail;
    }
    if (devices) {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: devices= needs a mesh of known shape; "
                      "it cannot be combined with mesh-axes=");
      goto fail;
    }
    int64_t count = po.num_devices > 0 ? po.num_devices : o.cluster->ndevices;
    if (count > o.cluster->ndevices) {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: num-devices=%lld, the cluster has %d",
                      (long long)count, o.cluster->ndevices);
      goto fail;
    }
    if ((rc = add_mesh(m, mesh_axes, count, &added_mesh, err))) goto fail;
    po.auto_shape = true;
    o.mesh_name = "mesh";
  }
  if (po.num_devices > 0) po.auto_shape = true;
  o.device_of = devices;
  o.state = states;
  o.nstate = nstates;
  if (devices) {
    /* The count must match the mesh; checked against the mesh the search picks. */
    sp_op *mesh_op = sp_plan_mesh_op(m, mesh, NULL);
    const sp_mesh *pm = mesh_op ? sp_op_attr(mesh_op, "mesh")->u.mesh : NULL;
    if (pm && sp_mesh_num_devices(pm) != ndevices) {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: devices= lists %d ids, the mesh has "
                      "%lld devices", ndevices, (long long)sp_mesh_num_devices(pm));
      goto fail;
    }
    if (po.auto_shape) {
      rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: devices= fixes the placement of one "
                      "mesh shape; it cannot be combined with mesh-shape=auto");
      goto fail;
    }
    for (int i = 0; i < ndevices; i++)
      if (devices[i] >= o.cluster->ndevices) {
        rc = sp_err_set(err, SP_EINVAL, "-shardplan-search: device %lld is not in the cluster "
                        "(%d devices)", (long long)devices[i], o.cluster->ndevices);
        goto fail;
      }
  }
  rc = sp_placement_search(m, &o, &po, out, err);
  if (!rc && report && !(out->report_path = sp_arena_strdup(m->arena, report)))
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
fail:
  if (rc && added_mesh) sp_op_unlink(added_mesh);
  sp_cluster_free(cluster);
  free(devices);
  free(states);
  free(text);
  return rc;
}
