/*
 * plan_request.c - decoding, reading and keying a PlanRequest (see plan_request.h).
 *
 * Cluster messages are turned into the JSON of docs/cluster-format.md and read by the one
 * cluster reader (search/cluster.h), so a message and a file are checked alike. Options that
 * go to the search as pass options text are checked to be plain names first, so a request
 * cannot smuggle other options in.
 */
#include "rpc/plan_request.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "ir/hash.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "rpc/planner_version.h"

extern const char *const sp_rpc_example_names[];
extern const char *const sp_rpc_example_json[];

const char *sp_rpc_planner_version(void) { return SP_PLANNER_VERSION; }

const char *sp_rpc_example_cluster(const char *name) {
  for (int i = 0; sp_rpc_example_names[i]; i++)
    if (strcmp(sp_rpc_example_names[i], name) == 0) return sp_rpc_example_json[i];
  return NULL;
}

void sp_rpc_request_raw_hash(const uint8_t *buf, size_t len, char out[SP_RPC_HEX]) {
  sp_hasher h;
  uint8_t d[SP_HASH_BYTES];
  sp_hasher_init(&h);
  sp_hasher_update_str(&h, "raw-request");
  sp_hasher_update_str(&h, SP_PLANNER_VERSION);
  sp_hasher_update_bytes(&h, buf, len);
  if (sp_hasher_final(&h, d, NULL)) memset(d, 0, sizeof d);
  sp_hash_hex(d, out);
}

int sp_rpc_request_decode(const uint8_t *buf, size_t len, const char *raw, sp_rpc_request *r,
                          sp_err *err) {
  memset(r, 0, sizeof *r);
  r->msg = shardplan__v1__plan_request__unpack(NULL, len, buf);
  if (!r->msg)
    return sp_err_set(err, SP_EINVAL, "request: not a shardplan.v1.PlanRequest (truncated or "
                      "malformed protobuf, %zu bytes)", len);
  if (raw) snprintf(r->raw, sizeof r->raw, "%s", raw);
  else sp_rpc_request_raw_hash(buf, len, r->raw);
  return SP_OK;
}

void sp_rpc_request_free(sp_rpc_request *r) {
  if (r->msg) shardplan__v1__plan_request__free_unpacked(r->msg, NULL);
  sp_module_free(r->module);
  sp_cluster_free(r->cluster);
  memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ cluster */

static cJSON *link_json(const Shardplan__V1__Link *l) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "kind", l && l->kind ? l->kind : "");
  cJSON_AddNumberToObject(o, "bandwidth", l ? l->bandwidth : 0);
  cJSON_AddNumberToObject(o, "latency", l ? l->latency : 0);
  return o;
}

/* The JSON text of a ClusterSpec (malloc'd), NULL on out-of-memory. */
static char *spec_json(const Shardplan__V1__ClusterSpec *s) {
  cJSON *root = cJSON_CreateObject(), *types = cJSON_CreateObject(),
        *machines = cJSON_CreateArray(), *links = cJSON_CreateArray();
  char *text = NULL;
  if (!root || !types || !machines || !links) goto done;
  for (size_t i = 0; i < s->n_device_types; i++) {
    const Shardplan__V1__DeviceType *t = s->device_types[i];
    cJSON *o = cJSON_CreateObject(), *fl = cJSON_CreateObject();
    if (!o || !fl) {
      cJSON_Delete(o);
      cJSON_Delete(fl);
      goto done;
    }
    cJSON_AddNumberToObject(o, "memory_bytes", t->memory_bytes);
    for (size_t k = 0; k < t->n_flops; k++)
      cJSON_AddNumberToObject(fl, t->flops[k]->element_type ? t->flops[k]->element_type : "",
                              t->flops[k]->flops);
    cJSON_AddItemToObject(o, "flops", fl);
    /* A repeated name would be silently merged by JSON: make it visible to the reader. */
    cJSON_AddItemToObject(types, t->name ? t->name : "", o);
  }
  for (size_t i = 0; i < s->n_machines; i++) {
    const Shardplan__V1__Machine *m = s->machines[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) goto done;
    cJSON_AddStringToObject(o, "name", m->name ? m->name : "");
    cJSON_AddStringToObject(o, "device_type", m->device_type ? m->device_type : "");
    cJSON_AddNumberToObject(o, "num_devices", m->num_devices);
    if (m->link) cJSON_AddItemToObject(o, "link", link_json(m->link));
    cJSON_AddItemToArray(machines, o);
  }
  for (size_t i = 0; i < s->n_links; i++) {
    const Shardplan__V1__ExplicitLink *l = s->links[i];
    cJSON *o = link_json(l->link);
    if (!o) goto done;
    cJSON_AddNumberToObject(o, "src", l->src);
    cJSON_AddNumberToObject(o, "dst", l->dst);
    cJSON_AddItemToArray(links, o);
  }
  cJSON_AddItemToObject(root, "device_types", types);
  types = NULL;
  cJSON_AddItemToObject(root, "machines", machines);
  machines = NULL;
  if (s->has_network) cJSON_AddItemToObject(root, "network", link_json(s->network));
  if (s->n_links) {
    cJSON_AddItemToObject(root, "links", links);
    links = NULL;
  }
  text = cJSON_PrintUnformatted(root);
done:
  cJSON_Delete(root);
  cJSON_Delete(types);
  cJSON_Delete(machines);
  cJSON_Delete(links);
  return text;
}

static int load_cluster(sp_rpc_request *r, sp_err *err) {
  const Shardplan__V1__Cluster *c = r->msg->cluster;
  const char *json = NULL;
  char *owned = NULL;
  int rc;
  if (!c || c->source_case == SHARDPLAN__V1__CLUSTER__SOURCE__NOT_SET) {
    json = sp_rpc_example_cluster("one_machine_8gpu");
  } else if (c->source_case == SHARDPLAN__V1__CLUSTER__SOURCE_EXAMPLE) {
    json = sp_rpc_example_cluster(c->example);
    if (!json) {
      char names[256] = "";
      for (int i = 0; sp_rpc_example_names[i]; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 sp_rpc_example_names[i]);
      return sp_err_set(err, SP_EINVAL, "cluster: no bundled example named \"%.100s\" (there "
                        "are: %s)", c->example, names);
    }
  } else if (c->source_case == SHARDPLAN__V1__CLUSTER__SOURCE_JSON) {
    json = c->json;
  } else {
    owned = spec_json(c->spec);
    if (!owned) return sp_err_set(err, SP_ENOMEM, "out of memory");
    json = owned;
  }
  rc = sp_cluster_parse(json, &r->cluster, err);
  free(owned);
  if (rc) sp_err_prefix(err, "cluster");
  return rc;
}

static void hash_link(sp_hasher *h, const sp_link *l) {
  sp_hasher_update_str(h, l->kind);
  sp_hasher_update_f64(h, l->bandwidth);
  sp_hasher_update_f64(h, l->latency);
}

static void hash_cluster(sp_hasher *h, const sp_cluster *c) {
  sp_hasher_update_str(h, "cluster");
  sp_hasher_update_i64(h, c->ntypes);
  for (int i = 0; i < c->ntypes; i++) {
    const sp_device_type *t = &c->types[i];
    sp_hasher_update_str(h, t->name);
    sp_hasher_update_f64(h, t->memory_bytes);
    sp_hasher_update_i64(h, t->nflops);
    for (int k = 0; k < t->nflops; k++) {
      sp_hasher_update_str(h, t->flops_dtype[k]);
      sp_hasher_update_f64(h, t->flops[k]);
    }
  }
  sp_hasher_update_i64(h, c->nmachines);
  for (int i = 0; i < c->nmachines; i++) {
    const sp_machine *m = &c->machines[i];
    sp_hasher_update_i64(h, m->num_devices);
    sp_hasher_update_i64(h, m->num_devices ? c->devices[m->first_device].type : -1);
    hash_link(h, &m->link);
  }
  hash_link(h, &c->network);
  sp_hasher_update_i64(h, c->nlinks);
  for (int i = 0; i < c->nlinks; i++) {
    sp_hasher_update_i64(h, c->links[i].src);
    sp_hasher_update_i64(h, c->links[i].dst);
    hash_link(h, &c->links[i].link);
  }
}

/* ------------------------------------------------------------------ options */

static bool plain_name(const char *s) {
  if (!s || !*s || strlen(s) > 256) return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          *p == '_' || *p == '-' || *p == '.'))
      return false;
  return true;
}

static int check_options(sp_rpc_request *r, sp_err *err) {
  const Shardplan__V1__PlanOptions *o = r->msg->options;
  sp_plan_options *p = &r->popts;
  sp_plan_options_init(p);
  r->search = o && o->mode == SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH;
  if (o && (int)o->mode != 0 && !r->search)
    return sp_err_set(err, SP_EINVAL, "options: unknown mode %d", (int)o->mode);
  p->mode = r->search ? SP_PLAN_PROPAGATE_SEARCH : SP_PLAN_PROPAGATE;
  int strategy = o ? (int)o->strategy : 0;
  if (strategy < 0 || strategy > 3)
    return sp_err_set(err, SP_EINVAL, "options: unknown propagation strategy %d", strategy);
  /* Every strategy is the pipeline's propagation step: the import comes first (plan.h). */
  p->strategy = (sp_plan_strategy)strategy;
  r->detail = (int)r->msg->detail;
  if (r->detail != SHARDPLAN__V1__DETAIL__DETAIL_SUMMARY &&
      r->detail != SHARDPLAN__V1__DETAIL__DETAIL_FULL)
    return sp_err_set(err, SP_EINVAL, "request: unknown detail %d", r->detail);
  if (!o) return SP_OK;
  if (!isfinite(o->time_limit_seconds) || o->time_limit_seconds < 0 ||
      o->time_limit_seconds > 86400)
    return sp_err_set(err, SP_EINVAL, "options: time_limit_seconds must be in [0, 86400], got "
                      "%g", o->time_limit_seconds);
  r->time_limit = o->time_limit_seconds;
  if (!isfinite(o->gap) || o->gap < 0 || o->gap >= 1)
    return sp_err_set(err, SP_EINVAL, "options: gap must be in [0, 1), got %g", o->gap);
  p->gap = o->gap;
  if ((int)o->placement < 0 || (int)o->placement > 1)
    return sp_err_set(err, SP_EINVAL, "options: unknown placement %d", (int)o->placement);
  if ((int)o->mesh_shape < 0 || (int)o->mesh_shape > 1)
    return sp_err_set(err, SP_EINVAL, "options: unknown mesh_shape %d", (int)o->mesh_shape);
  p->placement = o->placement == SHARDPLAN__V1__PLACEMENT_SEARCH__PLACEMENT_GIVEN ? SP_PLAN_GIVEN
                                                                                 : SP_PLAN_AUTO;
  p->mesh_shape = o->mesh_shape == SHARDPLAN__V1__MESH_SHAPE_SEARCH__MESH_SHAPE_AUTO
                      ? SP_PLAN_AUTO : SP_PLAN_GIVEN;
  if (!isfinite(o->memory_limit_bytes) || o->memory_limit_bytes < 0)
    return sp_err_set(err, SP_EINVAL, "options: memory_limit_bytes must be >= 0, got %g",
                      o->memory_limit_bytes);
  if (o->num_devices < 0 || o->num_devices > (1 << 20))
    return sp_err_set(err, SP_EINVAL, "options: num_devices must be in [0, 2^20], got %lld",
                      (long long)o->num_devices);
  if (o->work_limit < 0)
    return sp_err_set(err, SP_EINVAL, "options: work_limit must be >= 0, got %lld",
                      (long long)o->work_limit);
  /* The rest goes to the search as pass options text. */
  char *s = r->search_options;
  size_t cap = sizeof r->search_options, n = 0;
#define ADD(...) (n += (size_t)snprintf(s + n, n < cap ? cap - n : 0, __VA_ARGS__))
  if (o->mesh && *o->mesh) {
    if (!plain_name(o->mesh))
      return sp_err_set(err, SP_EINVAL, "options: mesh \"%.100s\" is not a plain name", o->mesh);
    ADD("mesh=%s ", o->mesh);
  }
  if (o->num_devices) ADD("num-devices=%lld ", (long long)o->num_devices);
  if (o->n_mesh_axes) {
    ADD("mesh-axes=");
    for (size_t i = 0; i < o->n_mesh_axes; i++) {
      if (!plain_name(o->mesh_axes[i]))
        return sp_err_set(err, SP_EINVAL, "options: mesh axis \"%.100s\" is not a plain name",
                          o->mesh_axes[i]);
      ADD("%s%s", i ? "," : "", o->mesh_axes[i]);
    }
    ADD(" ");
  }
  if (o->memory_limit_bytes > 0) ADD("memory-limit=%.17g ", o->memory_limit_bytes);
  if (o->no_share_layers) ADD("share-layers=false ");
  if (o->work_limit) ADD("work-limit=%lld ", (long long)o->work_limit);
  if (o->seed) ADD("seed=%llu ", (unsigned long long)o->seed);
#undef ADD
  if (n >= cap) return sp_err_set(err, SP_EINVAL, "options: too long");
  p->search_options = r->search_options;
  return SP_OK;
}

static void hash_options(sp_hasher *h, const sp_rpc_request *r) {
  const sp_plan_options *p = &r->popts;
  sp_hasher_update_str(h, "options");
  sp_hasher_update_i64(h, r->search);
  sp_hasher_update_str(h, p->propagation);
  if (!r->search) return;
  sp_hasher_update_f64(h, p->gap);
  sp_hasher_update_i64(h, p->placement);
  sp_hasher_update_i64(h, p->mesh_shape);
  sp_hasher_update_str(h, r->search_options);
}

/* ------------------------------------------------------------------ prepare */

static int over_memory(const sp_rpc_request *r, const char *what, double bytes, sp_err *err) {
  return sp_err_set(err, SP_ELIMIT, "request: %s would need about %.0f MiB, more than the "
                    "request memory limit of %lld MiB (--max-request-memory-mb)", what,
                    bytes / (1 << 20), (long long)(r->max_memory_bytes >> 20));
}

int sp_rpc_request_prepare(sp_rpc_request *r, sp_err *err) {
  const Shardplan__V1__PlanRequest *m = r->msg;
  const char *fname = m->filename && *m->filename ? m->filename : NULL;
  int rc;
  if ((rc = check_options(r, err))) return rc;
  double input = m->graph_case == SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR ? (double)strlen(m->mlir)
                 : m->graph_case == SHARDPLAN__V1__PLAN_REQUEST__GRAPH_STRUCTURED
                     ? (double)protobuf_c_message_get_packed_size(&m->structured->base)
                     : 0.0;
  r->memory_estimate = (int64_t)(input * SP_RPC_READ_BYTES_PER_INPUT_BYTE);
  if (r->max_memory_bytes > 0 && input * SP_RPC_READ_BYTES_PER_INPUT_BYTE > (double)r->max_memory_bytes)
    return over_memory(r, "reading the graph", input * SP_RPC_READ_BYTES_PER_INPUT_BYTE, err);
  switch (m->graph_case) {
    case SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR:
      rc = sp_mlir_parse(m->mlir, strlen(m->mlir), fname ? fname : "request.mlir", 1, &r->module,
                         err);
      break;
    case SHARDPLAN__V1__PLAN_REQUEST__GRAPH_STRUCTURED:
      rc = sp_graph_to_module(m->structured, fname ? fname : "graph", &r->module, err);
      break;
    default:
      return sp_err_set(err, SP_EINVAL, "request: no graph (set mlir or structured)");
  }
  if (rc) return rc;
  if (!sp_module_body(r->module)->first)
    return sp_err_set(err, SP_EINVAL, "request: the module is empty");
  double ir = (double)sp_arena_bytes(r->module->arena);
  double plan = ir * (r->search ? SP_RPC_SEARCH_BYTES_PER_IR_BYTE
                                : SP_RPC_PROPAGATE_BYTES_PER_IR_BYTE);
  r->memory_estimate = (int64_t)(ir + plan);
  if (r->max_memory_bytes > 0 && ir + plan > (double)r->max_memory_bytes)
    return over_memory(r, r->search ? "planning this graph with the search"
                                    : "propagating this graph", ir + plan, err);
  if ((rc = sp_verify_module(r->module, err))) return rc;
  if (r->search && (rc = load_cluster(r, err))) return rc;

  sp_hasher h;
  uint8_t d[SP_HASH_BYTES];
  if (sp_hasher_init(&h)) return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_hasher_update_str(&h, "shardplan-plan-key");
  sp_hasher_update_str(&h, SP_PLANNER_VERSION);
  sp_hasher_update_module(&h, r->module);
  hash_options(&h, r);
  if (r->search) hash_cluster(&h, r->cluster);
  if ((rc = sp_hasher_final(&h, d, err))) return rc;
  sp_hash_hex(d, r->key);
  return SP_OK;
}
