/*
 * search_pass.c - the pass -shardplan-search="cluster=FILE ...": its options, the cluster
 * file, and the placement search that plans the module (placement.h).
 */
#include "search/search_pass.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/pass_options.h"
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

/* ------------------------------------------------------------------ the options */

/* What the option text sets: the search's and the placement's options, and the values that
 * need more than a field (files, the mesh, malloc'd lists freed by pass_options_free). */
typedef struct pass_options {
  sp_plan_search_opts o;
  sp_placement_opts po;
  const char *cluster_path, *mesh, *report, *mesh_axes;
  int64_t *devices;
  int ndevices;
  sp_plan_state_pair *states;
  int nstates;
  bool time_limit_given;      /* time-limit= was in the text */
} pass_options;

static void pass_options_free(pass_options *p) {
  free(p->devices);
  free(p->states);
}

/* Options whose value needs more than a field. */
typedef int (*option_fn)(pass_options *p, const char *val, sp_err *err);

static int opt_time_limit(pass_options *p, const char *val, sp_err *err) {
  p->time_limit_given = true;
  return parse_number("time-limit", val, &p->o.time_limit, err);
}

static int opt_devices(pass_options *p, const char *val, sp_err *err) {
  free(p->devices);
  p->devices = NULL;
  return parse_devices(val, &p->devices, &p->ndevices, err);
}

static int opt_state(pass_options *p, const char *val, sp_err *err) {
  free(p->states);
  p->states = NULL;
  return parse_states(val, &p->states, &p->nstates, err);
}

static int opt_max_strategies(pass_options *p, const char *val, sp_err *err) {
  double d = 0;
  int rc = parse_number("max-strategies", val, &d, err);
  if (!rc) p->o.max_strategies = d > 1e6 ? 1000000 : (int)d;
  return rc;
}

static int opt_num_devices(pass_options *p, const char *val, sp_err *err) {
  double d = 0;
  int rc = parse_number("num-devices", val, &d, err);
  if (rc) return rc;
  if (d < 1 || d > 1e9 || d != (double)(int64_t)d)
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: num-devices=%s is not a device count",
                      val);
  p->po.num_devices = (int64_t)d;
  return SP_OK;
}

/* How an option's value is stored: in the field at `off` of pass_options, as text (the value
 * itself), a number >= 0 (double, or converted to int64_t / uint64_t), the negation of a
 * true/false (the fields say no_...), or auto/given as true/false; or by its handler. */
typedef enum {
  OPT_TEXT, OPT_NUMBER, OPT_INT64, OPT_UINT64, OPT_NOT_BOOL, OPT_AUTO, OPT_FN
} opt_kind;

/* The options, in the order the "unknown option" message lists them. */
static const struct {
  const char *key;
  opt_kind kind;
  size_t off;
  option_fn set;
} known_options[] = {
    {"cluster", OPT_TEXT, offsetof(pass_options, cluster_path), NULL},
    {"mesh", OPT_TEXT, offsetof(pass_options, mesh), NULL},
    {"time-limit", OPT_FN, 0, opt_time_limit},
    {"gap", OPT_NUMBER, offsetof(pass_options, o.gap), NULL},
    {"work-limit", OPT_INT64, offsetof(pass_options, o.work_limit), NULL},
    {"seed", OPT_UINT64, offsetof(pass_options, o.seed), NULL},
    {"devices", OPT_FN, 0, opt_devices},
    {"state", OPT_FN, 0, opt_state},
    {"max-strategies", OPT_FN, 0, opt_max_strategies},
    {"mem-weight", OPT_NUMBER, offsetof(pass_options, o.mem_weight), NULL},
    {"memory-limit", OPT_NUMBER, offsetof(pass_options, o.memory_limit), NULL},
    {"coarsen", OPT_NOT_BOOL, offsetof(pass_options, o.no_coarsen), NULL},
    {"reduce-scatter", OPT_NOT_BOOL, offsetof(pass_options, o.no_reduce_scatter), NULL},
    {"partial-sums", OPT_NOT_BOOL, offsetof(pass_options, o.no_partial), NULL},
    {"share-layers", OPT_NOT_BOOL, offsetof(pass_options, o.no_share_layers), NULL},
    {"placement", OPT_AUTO, offsetof(pass_options, po.auto_devices), NULL},
    {"mesh-shape", OPT_AUTO, offsetof(pass_options, po.auto_shape), NULL},
    {"num-devices", OPT_FN, 0, opt_num_devices},
    {"mesh-axes", OPT_TEXT, offsetof(pass_options, mesh_axes), NULL},
    {"report", OPT_TEXT, offsetof(pass_options, report), NULL},
    {"dump-graph", OPT_TEXT, offsetof(pass_options, o.dump_graph), NULL},
};
enum { NKNOWN_OPTIONS = (int)(sizeof known_options / sizeof known_options[0]) };

/* Stores option k's value `val` (see opt_kind). */
static int set_option(pass_options *p, int k, const char *val, sp_err *err) {
  const char *key = known_options[k].key;
  void *field = (char *)p + known_options[k].off;
  double d = 0;
  bool b = false;
  int rc = SP_OK;
  switch (known_options[k].kind) {
    case OPT_TEXT: *(const char **)field = val; break;
    case OPT_NUMBER: rc = parse_number(key, val, (double *)field, err); break;
    case OPT_INT64:
      if (!(rc = parse_number(key, val, &d, err))) *(int64_t *)field = (int64_t)d;
      break;
    case OPT_UINT64:
      if (!(rc = parse_number(key, val, &d, err))) *(uint64_t *)field = (uint64_t)d;
      break;
    case OPT_NOT_BOOL:
      if (!(rc = parse_bool(key, val, &b, err))) *(bool *)field = !b;
      break;
    case OPT_AUTO: rc = parse_auto(key, val, (bool *)field, err); break;
    case OPT_FN: rc = known_options[k].set(p, val, err); break;
  }
  return rc;
}

static int unknown_option(const char *key, sp_err *err) {
  char known[512];
  size_t len = 0;
  known[0] = '\0';
  for (int i = 0; i < NKNOWN_OPTIONS && len < sizeof known; i++)
    len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                            known_options[i].key);
  return sp_err_set(err, SP_EINVAL, "-shardplan-search: unknown option '%s' (known: %s)", key,
                    known);
}

/* Parses the option text `text` (ir/pass_options.h's word form; edited in place: keys and
 * values are cut out of it with NULs, so that they point into it). */
static int parse_options(char *text, pass_options *p, sp_err *err) {
  const char *cursor = text;
  sp_option_item it;
  while (sp_options_next_word(&cursor, &it)) {
    char *key = text + (it.key - text), *val = text + (it.value - text);
    if (*cursor) cursor++;       /* past the separator, which becomes the value's end */
    key[it.key_len] = '\0';
    if (!it.has_value)
      return sp_err_set(err, SP_EINVAL, "-shardplan-search: option '%s' has no '=VALUE'", key);
    val[it.value_len] = '\0';
    int k = 0;
    while (k < NKNOWN_OPTIONS && strcmp(key, known_options[k].key) != 0) k++;
    if (k == NKNOWN_OPTIONS) return unknown_option(key, err);
    int rc = set_option(p, k, val, err);
    if (rc) return rc;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ after parsing */

/* The caller's structured choices over the text's. */
static void apply_overrides(pass_options *p, const sp_search_overrides *ov) {
  if (!ov) return;
  if (!p->time_limit_given && ov->default_time_limit >= 0)
    p->o.time_limit = ov->default_time_limit;
  if (ov->time_limit >= 0) p->o.time_limit = ov->time_limit;
  p->o.nincumbent = ov->nincumbent;
  p->o.incumbent = ov->incumbent;
  if (ov->gap >= 0) p->o.gap = ov->gap;
  if (ov->placement >= 0) p->po.auto_devices = ov->placement != 0;
  if (ov->mesh_shape >= 0) p->po.auto_shape = ov->mesh_shape != 0;
  p->po.on_snapshot = ov->on_snapshot;
  p->po.snapshot_ctx = ov->snapshot_ctx;
}

/* The cluster: the caller's, else loaded from cluster=FILE into *loaded (freed by the caller). */
static int take_cluster(pass_options *p, const sp_search_overrides *ov, sp_cluster **loaded,
                        sp_err *err) {
  if (ov && ov->cluster) {
    p->o.cluster = ov->cluster;
    return SP_OK;
  }
  if (!p->cluster_path)
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: cluster=FILE is required");
  int rc = sp_cluster_load(p->cluster_path, loaded, err);
  if (rc) {
    sp_err_prefix(err, "-shardplan-search");
    return rc;
  }
  p->o.cluster = *loaded;
  return SP_OK;
}

/* mesh-axes=: only a device count and the axis names, the search picks the shape; adds the
 * mesh to the module (*added). */
static int add_mesh_of_axes(sp_module *m, pass_options *p, sp_op **added, sp_err *err) {
  sp_op *existing = NULL;
  for (sp_op *op = sp_module_body(m)->first; op && !existing; op = op->next)
    if (op->kind == SP_OP_SDY_MESH) existing = op;
  if (existing)
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: mesh-axes= is for a module without an "
                      "sdy.mesh; this one has @%s (use mesh-shape=auto to search its shape)",
                      sp_op_get_str(existing, "sym_name"));
  if (p->devices)
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: devices= needs a mesh of known shape; "
                      "it cannot be combined with mesh-axes=");
  int64_t count = p->po.num_devices > 0 ? p->po.num_devices : p->o.cluster->ndevices;
  if (count > p->o.cluster->ndevices)
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: num-devices=%lld, the cluster has %d",
                      (long long)count, p->o.cluster->ndevices);
  int rc = add_mesh(m, p->mesh_axes, count, added, err);
  if (rc) return rc;
  p->po.auto_shape = true;
  p->o.mesh_name = "mesh";
  return SP_OK;
}

/* devices=: as many ids as the mesh has devices, each in the cluster, one mesh shape. */
static int check_devices(sp_module *m, const pass_options *p, sp_err *err) {
  if (!p->devices) return SP_OK;
  /* The count must match the mesh; checked against the mesh the search picks. */
  sp_op *mesh_op = sp_plan_mesh_op(m, p->mesh, NULL);
  const sp_mesh *pm = mesh_op ? sp_op_attr(mesh_op, "mesh")->u.mesh : NULL;
  if (pm && sp_mesh_num_devices(pm) != p->ndevices)
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: devices= lists %d ids, the mesh has "
                      "%lld devices", p->ndevices, (long long)sp_mesh_num_devices(pm));
  if (p->po.auto_shape)
    return sp_err_set(err, SP_EINVAL, "-shardplan-search: devices= fixes the placement of one "
                      "mesh shape; it cannot be combined with mesh-shape=auto");
  for (int i = 0; i < p->ndevices; i++)
    if (p->devices[i] >= p->o.cluster->ndevices)
      return sp_err_set(err, SP_EINVAL, "-shardplan-search: device %lld is not in the cluster "
                        "(%d devices)", (long long)p->devices[i], p->o.cluster->ndevices);
  return SP_OK;
}

/* ------------------------------------------------------------------ the pass */

void sp_search_overrides_init(sp_search_overrides *ov) {
  ov->cluster = NULL;
  ov->time_limit = -1;
  ov->gap = -1;
  ov->placement = -1;
  ov->mesh_shape = -1;
  ov->default_time_limit = -1;
  ov->nincumbent = 0;
  ov->incumbent = NULL;
  ov->on_snapshot = NULL;
  ov->snapshot_ctx = NULL;
}

int sp_search_pass(sp_module *m, const char *options, sp_plan_summary *out, sp_err *err) {
  return sp_search_pass_with(m, options, NULL, out, err);
}

int sp_search_pass_with(sp_module *m, const char *options, const sp_search_overrides *ov,
                        sp_plan_summary *out, sp_err *err) {
  pass_options p;
  memset(&p, 0, sizeof p);
  sp_plan_search_opts_init(&p.o);
  sp_placement_opts_init(&p.po);
  sp_cluster *cluster = NULL;
  sp_op *added_mesh = NULL;  /* by mesh-axes=; taken out again if the pass fails */
  char *text = strdup(options ? options : "");
  if (!text) return sp_err_set(err, SP_ENOMEM, "out of memory");
  int rc = parse_options(text, &p, err);
  if (rc) goto fail;
  apply_overrides(&p, ov);
  if ((rc = take_cluster(&p, ov, &cluster, err))) goto fail;
  p.o.mesh_name = p.mesh;
  if (p.mesh_axes && (rc = add_mesh_of_axes(m, &p, &added_mesh, err))) goto fail;
  if (p.po.num_devices > 0) p.po.auto_shape = true;
  p.o.device_of = p.devices;
  p.o.state = p.states;
  p.o.nstate = p.nstates;
  if ((rc = check_devices(m, &p, err))) goto fail;
  rc = sp_placement_search(m, &p.o, &p.po, out, err);
  if (!rc && p.report && !(out->report_path = sp_arena_strdup(m->arena, p.report)))
    rc = sp_err_set(err, SP_ENOMEM, "out of memory");
fail:
  if (rc && added_mesh) sp_op_unlink(added_mesh);
  sp_cluster_free(cluster);
  pass_options_free(&p);
  free(text);
  return rc;
}
