/*
 * placement.c - the outer loop of the search: mesh shapes and device placements, each
 * planned by sp_plan_search_module, the cheapest kept (see placement.h).
 *
 * A snapshot holds the sharding pointer of every value the search may write (the main
 * function's block arguments and top-level op results) and of every function result; since
 * shardings are never changed in place, restoring one is exact.
 */
#include "search/placement.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"
#include "ir/run_ctl.h"
#include "ir/strbuf.h"

#define DEFAULT_MAX_ROUNDS 3
#define MAX_ROUNDS_CAP 8
#define MAX_SHAPES 256
/* A trial never gets less than this (seconds), however many are left. */
#define MIN_TRIAL_SECONDS 0.05

typedef struct snapshot {
  int nvals, nres;
  sp_sharding **vals;
  sp_sharding **res;
} snapshot;

typedef struct ctx {
  sp_module *m;
  const sp_plan_search_opts *o;
  sp_block *body;
  sp_func_info *fi;
  sp_attr *mesh_attr;
  const sp_mesh *orig_mesh;
  int ntrials, captrials;
  sp_plan_trial *trials;
  double deadline;            /* monotonic seconds; 0: none */
  int trials_left;            /* planned, for splitting the time */
  bool cut;                   /* trials left out: the caller's deadline had passed */
  int nlimit;                 /* trials refused with SP_ELIMIT (a value too large to count) */
} ctx;

/* ------------------------------------------------------------------ snapshots */

static int snapshot_init(ctx *c, snapshot *s) {
  s->nvals = c->body->nargs;
  for (sp_op *op = c->body->first; op; op = op->next) s->nvals += op->nresults;
  s->nres = c->fi && c->fi->result_shardings ? c->fi->nresults : 0;
  s->vals = sp_arena_calloc(c->m->arena, (size_t)s->nvals + 1, sizeof *s->vals);
  s->res = sp_arena_calloc(c->m->arena, (size_t)s->nres + 1, sizeof *s->res);
  return s->vals && s->res ? SP_OK : SP_ENOMEM;
}

static void snapshot_take(ctx *c, snapshot *s) {
  int k = 0;
  for (int i = 0; i < c->body->nargs; i++) s->vals[k++] = c->body->args[i]->sharding;
  for (sp_op *op = c->body->first; op; op = op->next)
    for (int r = 0; r < op->nresults; r++) s->vals[k++] = op->results[r].sharding;
  for (int r = 0; r < s->nres; r++) s->res[r] = c->fi->result_shardings[r];
}

static void snapshot_restore(ctx *c, const snapshot *s) {
  int k = 0;
  for (int i = 0; i < c->body->nargs; i++) c->body->args[i]->sharding = s->vals[k++];
  for (sp_op *op = c->body->first; op; op = op->next)
    for (int r = 0; r < op->nresults; r++) op->results[r].sharding = s->vals[k++];
  for (int r = 0; r < s->nres; r++) c->fi->result_shardings[r] = s->res[r];
}

/* ------------------------------------------------------------------ meshes */

/* A copy of `base` with the given sizes (NULL: base's) and device ids (NULL: none). */
static sp_mesh *mesh_variant(ctx *c, const sp_mesh *base, const int64_t *sizes,
                             const int64_t *device_ids) {
  sp_arena *a = c->m->arena;
  sp_mesh *m = sp_arena_calloc(a, 1, sizeof *m);
  if (!m) return NULL;
  m->naxes = base->naxes;
  m->axes = sp_arena_alloc(a, (size_t)base->naxes * sizeof *m->axes + 1);
  if (!m->axes) return NULL;
  for (int i = 0; i < base->naxes; i++) {
    m->axes[i] = base->axes[i];
    if (sizes) m->axes[i].size = sizes[i];
  }
  if (device_ids) {
    int64_t n = sp_mesh_num_devices(m);
    m->device_ids = sp_arena_alloc(a, (size_t)n * sizeof *m->device_ids);
    if (!m->device_ids) return NULL;
    memcpy(m->device_ids, device_ids, (size_t)n * sizeof *m->device_ids);
    m->ndevice_ids = (int)n;
  }
  return m;
}

static void mesh_shape_text(sp_strbuf *sb, const sp_mesh *m) {
  for (int i = 0; i < m->naxes; i++)
    sp_strbuf_printf(sb, "%s%s=%lld", i ? ", " : "", m->axes[i].name, (long long)m->axes[i].size);
}

static bool is_identity(const int64_t *dev, int64_t n) {
  for (int64_t i = 0; dev && i < n; i++)
    if (dev[i] != i) return false;
  return true;
}

static void devices_text(sp_strbuf *sb, const int64_t *dev, int64_t n) {
  if (is_identity(dev, n)) {
    sp_strbuf_printf(sb, "0..%lld in mesh order", (long long)(n - 1));
    return;
  }
  for (int64_t i = 0; i < n; i++) sp_strbuf_printf(sb, "%s%lld", i ? "," : "", (long long)dev[i]);
}

static bool same_sizes(const sp_mesh *x, const sp_mesh *y) {
  for (int i = 0; i < x->naxes; i++)
    if (x->axes[i].size != y->axes[i].size) return false;
  return true;
}

/* ------------------------------------------------------------------ trials */

static sp_plan_trial *new_trial(ctx *c, const sp_mesh *mesh, const int64_t *dev) {
  if (sp_arena_grow(c->m->arena, (void **)&c->trials, &c->captrials, c->ntrials, sizeof *c->trials))
    return NULL;
  sp_plan_trial *t = &c->trials[c->ntrials++];
  memset(t, 0, sizeof *t);
  sp_strbuf sb = SP_STRBUF_INIT;
  mesh_shape_text(&sb, mesh);
  t->shape = sp_strbuf_ok(&sb) ? sp_arena_strdup(c->m->arena, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_reset(&sb);
  devices_text(&sb, dev, sp_mesh_num_devices(mesh));
  t->devices = sp_strbuf_ok(&sb) ? sp_arena_strdup(c->m->arena, sp_strbuf_str(&sb)) : NULL;
  sp_strbuf_free(&sb);
  return t->shape && t->devices ? t : NULL;
}

/* The time one more trial gets: what is left, shared by the trials still planned. */
static double trial_time(ctx *c) {
  if (c->deadline <= 0) return c->o->time_limit;
  double left = c->deadline - sp_clock_now();
  double share = left / (c->trials_left > 0 ? c->trials_left : 1);
  return share > MIN_TRIAL_SECONDS ? share : MIN_TRIAL_SECONDS;
}

/* Errors that belong to one configuration (it cannot be planned) rather than to the run. */
static bool trial_error(int rc) {
  return rc == SP_EINVAL || rc == SP_ENOTFOUND || rc == SP_ELIMIT;
}

typedef struct best {
  bool have;
  sp_plan_summary s;
  snapshot snap;
  const sp_mesh *mesh;
  int64_t *dev;               /* NULL: the mesh's own ids or the caller's */
  int trial;
} best;

/* Plans the module on `mesh` placed by `dev` (NULL: as the options say); keeps it in `b`
 * when it is the cheapest so far, unless it is a probe (uniform links, see
 * sp_plan_search_opts.uniform_links). *planned tells whether a plan came out. */
static int plan_one(ctx *c, const sp_mesh *mesh, int64_t *dev, bool probe, const snapshot *orig,
                    best *b, sp_plan_summary *s, bool *planned, sp_err *err) {
  *planned = false;
  /* A cancelled request plans no further configuration (the solver only checks inside). */
  if (sp_run_ctl_cancelled(c->m->ctl))
    return sp_err_set(err, SP_ETIMEOUT, "cancelled between placement trials");
  /* Past the caller's deadline with a plan in hand: no further configuration (each would
   * still build its graph and a first plan); the plan is then cut short. */
  if (b->have && sp_run_ctl_stopped(c->m->ctl)) {
    c->cut = true;
    return SP_OK;
  }
  snapshot_restore(c, orig);
  c->mesh_attr->u.mesh = (sp_mesh *)mesh;
  sp_plan_search_opts oc = *c->o;
  if (dev) oc.device_of = dev;
  oc.uniform_links = probe;
  oc.time_limit = trial_time(c);
  c->trials_left--;
  sp_plan_trial *t = new_trial(c, mesh, dev ? dev : c->o->device_of);
  if (!t) return sp_err_set(err, SP_ENOMEM, "out of memory");
  t->probe = probe;
  sp_err terr;
  int rc = sp_plan_search_module(c->m, &oc, s, &terr);
  if (rc) {
    if (!trial_error(rc)) {
      if (err) *err = terr;
      return rc;
    }
    if (rc == SP_ELIMIT) c->nlimit++;
    if (!(t->error = sp_arena_strdup(c->m->arena, terr.msg)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    return SP_OK;
  }
  *planned = true;
  t->total_s = s->total_s;
  t->cost = s->cost;
  t->status = s->status;
  /* Among equal plans the mesh as the module gave it wins: no change without a gain. */
  bool better = !b->have || s->cost < b->s.cost ||
                (s->cost == b->s.cost && same_sizes(mesh, c->orig_mesh) &&
                 !same_sizes(b->mesh, c->orig_mesh));
  if (!probe && better) {
    b->have = true;
    b->s = *s;
    snapshot_take(c, &b->snap);
    b->mesh = mesh;
    b->dev = dev;
    b->trial = c->ntrials - 1;
  }
  return SP_OK;
}

static bool same_axis_costs(const sp_axis_cost *x, const sp_axis_cost *y, int n) {
  for (int i = 0; i < n; i++)
    if (x[i].alpha != y[i].alpha || x[i].bandwidth != y[i].bandwidth) return false;
  return true;
}

/* Whether the axes with more than one device all cross the same kind of link. */
static bool uniform_costs(const sp_axis_cost *x, const sp_mesh *mesh) {
  int first = -1;
  for (int i = 0; i < mesh->naxes; i++) {
    if (mesh->axes[i].size <= 1) continue;
    if (first < 0) first = i;
    else if (!same_axis_costs(&x[first], &x[i], 1)) return false;
  }
  return true;
}

/* The placements one shape has been planned on (or ruled out as equivalent). */
typedef struct tried {
  int n;
  int64_t *dev[MAX_ROUNDS_CAP];
  sp_axis_cost costs[MAX_ROUNDS_CAP][SP_MAX_MESH_AXES_CLUSTER];
} tried;

static bool was_tried(const tried *t, const int64_t *dev, const sp_axis_cost *costs, int64_t n,
                      int naxes) {
  for (int k = 0; k < t->n; k++)
    if (memcmp(t->dev[k], dev, (size_t)n * sizeof *dev) == 0 ||
        same_axis_costs(t->costs[k], costs, naxes))
      return true;
  return false;
}

/* Plans one mesh shape with rank mapping. The traffic that orders the axes comes from a plan
 * that does not depend on the placement: the identity placement's own plan when every axis
 * crosses the same link there, else a probe with uniform links. Each mapped placement is
 * planned with the cluster's real links and its traffic maps again, until a placement
 * repeats (or prices the axes like one already planned) or the rounds run out; the identity
 * placement is always among those planned, so rank mapping never loses to it. */
static int plan_mapped(ctx *c, const sp_mesh *mesh, int max_rounds, const snapshot *orig, best *b,
                       sp_err *err) {
  int64_t n = sp_mesh_num_devices(mesh);
  tried t;
  t.n = 0;
  int64_t *ident = sp_arena_alloc(c->m->arena, (size_t)n * sizeof *ident);
  if (!ident) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int64_t i = 0; i < n; i++) ident[i] = i;
  sp_axis_cost ident_costs[SP_MAX_MESH_AXES_CLUSTER];
  int rc = sp_cluster_axis_costs(c->o->cluster, mesh, ident, ident_costs, err);
  if (rc) return rc;
  bool uniform = uniform_costs(ident_costs, mesh);
  /* The caller counted shape_budget() plans: identity, or probe + mapped + identity. */
  int budgeted = uniform ? 1 : 3, plans = 0;
  sp_plan_summary s;
  bool planned;
  rc = plan_one(c, mesh, ident, !uniform, orig, b, &s, &planned, err);
  plans++;
  if (rc || !planned) goto done;
  if (uniform) {
    t.dev[t.n] = ident;
    memcpy(t.costs[t.n++], ident_costs, sizeof ident_costs);
  }
  for (int round = 0; round < max_rounds && t.n < MAX_ROUNDS_CAP - 1; round++) {
    int64_t *next = sp_arena_alloc(c->m->arena, (size_t)n * sizeof *next);
    if (!next) {
      rc = sp_err_set(err, SP_ENOMEM, "out of memory");
      goto done;
    }
    sp_axis_cost costs[SP_MAX_MESH_AXES_CLUSTER];
    rc = sp_cluster_map_ranks(c->o->cluster, mesh, s.axis_traffic, 0, next, err);
    if (!rc) rc = sp_cluster_axis_costs(c->o->cluster, mesh, next, costs, err);
    if (rc) goto done;
    if (was_tried(&t, next, costs, n, mesh->naxes)) break;
    t.dev[t.n] = next;
    memcpy(t.costs[t.n++], costs, sizeof costs);
    if (plans >= budgeted) c->trials_left++;
    rc = plan_one(c, mesh, next, false, orig, b, &s, &planned, err);
    plans++;
    if (rc || !planned) goto done;
  }
  if (!was_tried(&t, ident, ident_costs, n, mesh->naxes)) {
    if (plans >= budgeted) c->trials_left++;
    rc = plan_one(c, mesh, ident, false, orig, b, &s, &planned, err);
    plans++;
  }
done:
  if (plans < budgeted) c->trials_left -= budgeted - plans;
  return rc;
}

/* How many plans a shape is expected to take (for splitting the time). */
static int shape_budget(ctx *c, const sp_mesh *mesh, bool map_ranks) {
  int64_t n = sp_mesh_num_devices(mesh);
  if (!map_ranks || n > c->o->cluster->ndevices) return 1;
  int64_t *ident = malloc((size_t)n * sizeof *ident);
  sp_axis_cost costs[SP_MAX_MESH_AXES_CLUSTER];
  if (!ident) return 1;
  for (int64_t i = 0; i < n; i++) ident[i] = i;
  int rc = sp_cluster_axis_costs(c->o->cluster, mesh, ident, costs, NULL);
  free(ident);
  return rc || uniform_costs(costs, mesh) ? 1 : 3;
}

/* Plans one mesh shape: as placed, or with rank mapping. */
static int plan_shape(ctx *c, const sp_mesh *mesh, bool map_ranks, int max_rounds,
                      const snapshot *orig, best *b, sp_err *err) {
  if (map_ranks && sp_mesh_num_devices(mesh) <= c->o->cluster->ndevices)
    return plan_mapped(c, mesh, max_rounds, orig, b, err);
  /* A mesh larger than the cluster is reported by the search itself. */
  sp_plan_summary s;
  bool planned;
  return plan_one(c, mesh, NULL, false, orig, b, &s, &planned, err);
}

/* The error when no configuration could be planned: every trial's reason. */
static int no_plan(ctx *c, sp_err *err) {
  /* Every configuration had a value too large to count: that is the error, not "no plan". */
  int code = c->nlimit == c->ntrials ? SP_ELIMIT : SP_ENOTFOUND;
  if (c->ntrials == 1) return sp_err_set(err, code, "%s", c->trials[0].error);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_printf(&sb, "no mesh shape admits a plan:");
  for (int i = 0; i < c->ntrials; i++)
    sp_strbuf_printf(&sb, " [%s] %s;", c->trials[i].shape, c->trials[i].error);
  int rc = sp_err_set(err, code, "%s", sp_strbuf_ok(&sb) ? sp_strbuf_str(&sb)
                                                          : "out of memory");
  sp_strbuf_free(&sb);
  return rc;
}

/* ------------------------------------------------------------------ API */

void sp_placement_opts_init(sp_placement_opts *po) {
  memset(po, 0, sizeof *po);
  po->auto_devices = true;
  po->max_rounds = DEFAULT_MAX_ROUNDS;
}

int sp_placement_search(sp_module *m, const sp_plan_search_opts *o, const sp_placement_opts *po,
                        sp_plan_summary *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  if (!o || !o->cluster) return sp_err_set(err, SP_EINVAL, "the search needs a cluster");
  ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.o = o;
  sp_op *f = sp_plan_main_func(m);
  if (!f) return sp_err_set(err, SP_EINVAL, "%s: no main function with a body to plan", m->filename);
  c.body = f->regions[0].blocks[0];
  c.fi = f->func;
  sp_op *mesh_op = sp_plan_mesh_op(m, o->mesh_name, err);
  if (!mesh_op) return err ? err->code : SP_EINVAL;
  c.mesh_attr = sp_op_attr(mesh_op, "mesh");
  c.orig_mesh = c.mesh_attr->u.mesh;
  const sp_mesh *orig_mesh = c.orig_mesh;
  bool map_ranks = po->auto_devices && !o->device_of && orig_mesh->ndevice_ids == 0;
  int max_rounds = po->max_rounds > 0 ? po->max_rounds : DEFAULT_MAX_ROUNDS;
  if (max_rounds > MAX_ROUNDS_CAP - 2) max_rounds = MAX_ROUNDS_CAP - 2;

  int nshapes = 1;
  int64_t *shapes = NULL;
  if (po->auto_shape && orig_mesh->naxes > 0) {
    if (orig_mesh->naxes > SP_MAX_MESH_AXES_CLUSTER)
      return sp_err_set(err, SP_ELIMIT, "mesh has more than %d axes", SP_MAX_MESH_AXES_CLUSTER);
    shapes = sp_arena_alloc(m->arena, (size_t)MAX_SHAPES * (size_t)orig_mesh->naxes * sizeof *shapes);
    if (!shapes) return sp_err_set(err, SP_ENOMEM, "out of memory");
    int64_t count = po->num_devices > 0 ? po->num_devices : sp_mesh_num_devices(orig_mesh);
    if (count > o->cluster->ndevices)
      return sp_err_set(err, SP_EINVAL, "%lld devices asked for, the cluster has %d",
                        (long long)count, o->cluster->ndevices);
    nshapes = sp_cluster_mesh_shapes(count, orig_mesh->naxes, true, shapes, MAX_SHAPES);
    if (nshapes > MAX_SHAPES)
      return sp_err_set(err, SP_ELIMIT, "%d mesh shapes to try (the limit is %d); give the "
                        "mesh fewer axes or a fixed shape", nshapes, MAX_SHAPES);
  }
  snapshot orig, best_snap;
  if (snapshot_init(&c, &orig) || snapshot_init(&c, &best_snap))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  snapshot_take(&c, &orig);
  best b;
  memset(&b, 0, sizeof b);
  b.snap = best_snap;
  const sp_mesh **meshes = sp_arena_alloc(m->arena, (size_t)nshapes * sizeof *meshes);
  if (!meshes) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < nshapes; i++) {
    meshes[i] = shapes ? mesh_variant(&c, orig_mesh, &shapes[(size_t)i * (size_t)orig_mesh->naxes], NULL)
                       : orig_mesh;
    if (!meshes[i]) return sp_err_set(err, SP_ENOMEM, "out of memory");
    c.trials_left += shape_budget(&c, meshes[i], map_ranks);
  }
  if (o->time_limit > 0) c.deadline = sp_clock_now() + o->time_limit;
  int rc = SP_OK;
  for (int i = 0; i < nshapes && !rc; i++)
    rc = plan_shape(&c, meshes[i], map_ranks, max_rounds, &orig, &b, err);
  if (!rc && !b.have) rc = no_plan(&c, err);
  if (rc) {
    snapshot_restore(&c, &orig);
    c.mesh_attr->u.mesh = (sp_mesh *)orig_mesh;
    return rc;
  }

  /* Install the winner; a placement other than the mesh order becomes the mesh's ids. */
  snapshot_restore(&c, &b.snap);
  const sp_mesh *final_mesh = b.mesh;
  int64_t n = sp_mesh_num_devices(b.mesh);
  if (b.dev && !is_identity(b.dev, n) && !(final_mesh = mesh_variant(&c, b.mesh, NULL, b.dev))) {
    snapshot_restore(&c, &orig);
    c.mesh_attr->u.mesh = (sp_mesh *)orig_mesh;
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  c.mesh_attr->u.mesh = (sp_mesh *)final_mesh;
  *out = b.s;
  if (c.cut && (out->status == SP_SG_OPTIMAL || out->status == SP_SG_FEASIBLE))
    out->status = SP_SG_TIMEOUT;   /* not every configuration was planned */
  /* The winner's operand layouts, as reshards (once: the trials share the module). */
  rc = sp_plan_insert_operand_reshards(m, out, err);
  if (rc) return rc;
  out->mesh = final_mesh;
  out->placement_auto = map_ranks;
  out->shape_auto = shapes != NULL;
  c.trials[b.trial].chosen = true;
  out->ntrials = c.ntrials;
  out->trials = c.trials;
  return SP_OK;
}
