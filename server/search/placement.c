/*
 * placement.c - the outer loop of the search: mesh shapes and device placements, each
 * planned by sp_plan_search_module, the cheapest kept (see placement.h).
 *
 * Each configuration starts from the module as propagation left it: the shardings the search
 * writes are saved before the first and put back between them (saved_shardings.h); a plan
 * worth keeping is kept as the shardings it wrote, its summary and its configuration.
 *
 * Snapshots (sp_placement_opts.on_snapshot): while a configuration is searched, its solver
 * offers its best plan so far (sp_plan_search_opts.on_best); between configurations the
 * search checks the time itself. What is handed out is the cheapest plan priced with the
 * cluster's links - the offer, or the best configuration already planned - else, before any
 * such plan exists, the cheapest probe's plan priced with the cluster's links (a probe prices
 * every axis alike to measure traffic; its plan is valid all the same). Its gap is known only
 * when the search has a single configuration; otherwise it is reported unknown (gap 1, no
 * bound): the configurations not planned yet may hold a cheaper plan.
 */
#include "search/placement.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"
#include "ir/run_ctl.h"
#include "ir/strbuf.h"
#include "search/saved_shardings.h"

#define DEFAULT_MAX_ROUNDS 3
#define MAX_ROUNDS_CAP 8
#define MAX_SHAPES 256
/* A trial never gets less than this (seconds), however many are left. */
#define MIN_TRIAL_SECONDS 0.05

/* A plan kept as it was found: the shardings it wrote, its summary and configuration. */
typedef struct kept {
  bool have;
  sp_plan_summary s;
  sp_saved_shardings snap;
  const sp_mesh *mesh;
  int64_t *dev;               /* NULL: the mesh's own ids or the caller's */
  int trial;
} kept;

typedef struct ctx {
  sp_module *m;
  const sp_plan_search_opts *o;
  const sp_placement_opts *po;
  sp_op *func, *mesh_op;
  sp_attr *mesh_attr;
  const sp_mesh *orig_mesh;
  int ntrials, captrials;
  sp_plan_trial *trials;
  double deadline;            /* monotonic seconds; 0: none */
  int trials_left;            /* planned, for splitting the time */
  bool cut;                   /* trials left out: the caller's deadline had passed */
  int nlimit;                 /* trials refused with SP_ELIMIT (a value too large to count) */
  bool map_ranks, shape_auto;
  bool single;                /* one configuration in all: its search's bound bounds the plan */
  kept best;                  /* the cheapest plan priced with the cluster's links */
  kept fallback;              /* the cheapest probe's plan, until there is a `best` */
  const sp_mesh *trial_mesh;  /* the configuration being planned */
  int64_t *trial_dev;
  long long served;           /* the last snapshot time served between configurations */
  sp_saved_shardings orig;    /* the shardings propagation left */
} ctx;

/* ------------------------------------------------------------------ meshes */

/* A copy of `base` with the given sizes (NULL: base's) and device ids (NULL: none), in `a`. */
static sp_mesh *mesh_variant(sp_arena *a, const sp_mesh *base, const int64_t *sizes,
                             const int64_t *device_ids) {
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

/* Keeps the plan just written into the module (trial t, on `mesh` placed by `dev`) in k. */
static void keep(ctx *c, kept *k, const sp_plan_summary *s, const sp_mesh *mesh, int64_t *dev) {
  k->have = true;
  k->s = *s;
  sp_saved_shardings_take(&k->snap);
  k->mesh = mesh;
  k->dev = dev;
  k->trial = c->ntrials - 1;
}

/* The bound a plan of this search can claim over every configuration, when it is known: the
 * least bound among the configurations planned with the cluster's links (a configuration that
 * admits no plan bounds nothing). Unknown when configurations were left out or one of them
 * ended without a plan and without proof that it has none. */
static bool overall_bound(const ctx *c, int64_t *bound) {
  if (c->cut) return false;
  *bound = INT64_MAX;
  for (int i = 0; i < c->ntrials; i++) {
    const sp_plan_trial *t = &c->trials[i];
    if (t->probe) continue;
    if (t->error) {
      if (t->status != SP_SG_INFEASIBLE) return false;
      continue;
    }
    if (t->bound == INT64_MIN) return false;
    if (t->bound < *bound) *bound = t->bound;
  }
  return *bound != INT64_MAX;
}

/* Bound, gap and status of the plan in `s` from the whole search's point of view (above). */
static void settle_gap(const ctx *c, sp_plan_summary *s, bool known, int64_t bound) {
  if (!known) {
    s->bound = INT64_MIN;
    s->gap = 1;
    if (s->status == SP_SG_OPTIMAL) s->status = c->cut ? SP_SG_TIMEOUT : SP_SG_FEASIBLE;
    return;
  }
  s->bound = bound;
  s->gap = bound >= s->cost ? 0 : (double)(s->cost - bound) / (double)(s->cost > 1 ? s->cost : 1);
  if (s->gap > 0 && s->status == SP_SG_OPTIMAL) s->status = SP_SG_FEASIBLE;
}

/* ------------------------------------------------------------------ snapshots */

/* A copy of the module planned with the kept plan k (the module is left as it is). */
static int kept_plan(ctx *c, const kept *k, sp_search_snapshot *out, sp_err *err) {
  sp_arena *scratch = sp_arena_new(0);
  sp_saved_shardings now;
  if (!scratch || sp_saved_shardings_init(scratch, c->func, &now)) {
    sp_arena_free(scratch);
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  sp_saved_shardings_take(&now);
  const sp_mesh *mesh = c->mesh_attr->u.mesh;
  sp_saved_shardings_restore(&k->snap);
  c->mesh_attr->u.mesh = (sp_mesh *)k->mesh;
  int rc = sp_search_copy_planned(c->m, &k->s, NULL, out, err);
  c->mesh_attr->u.mesh = (sp_mesh *)mesh;
  sp_saved_shardings_restore(&now);
  sp_arena_free(scratch);
  return rc;
}

/* Hands snapshot `snap` (the plan of trial `trial`, on `mesh` placed by `dev`) to the caller
 * as the search's answer would be: the mesh with its placement in the copy, the trials so far
 * with that one chosen, cut short, its gap as far as it is known; then frees it. */
static void hand_out(ctx *c, sp_search_snapshot *snap, const sp_mesh *mesh, const int64_t *dev,
                     int trial, bool probe) {
  sp_plan_summary *s = &snap->summary;
  sp_arena *a = snap->copy.module->arena;
  int64_t n = sp_mesh_num_devices(mesh);
  const sp_mesh *placed = dev && !is_identity(dev, n) ? mesh_variant(a, mesh, NULL, dev) : mesh;
  sp_plan_trial *trials = sp_arena_alloc(a, (size_t)c->ntrials * sizeof *trials + 1);
  sp_op *mesh_op = sp_module_copy_op(&snap->copy, c->mesh_op);
  if (!placed || !trials || !mesh_op) {
    sp_err err;
    sp_err_set(&err, SP_ENOMEM, "out of memory handing out the best plan so far");
    c->po->on_snapshot(c->po->snapshot_ctx, NULL, &err);
    sp_module_copy_free(&snap->copy);
    return;
  }
  sp_op_attr(mesh_op, "mesh")->u.mesh = (sp_mesh *)placed;
  memcpy(trials, c->trials, (size_t)c->ntrials * sizeof *trials);
  trials[trial].chosen = true;
  s->mesh = placed;
  s->placement_auto = c->map_ranks;
  s->shape_auto = c->shape_auto;
  s->ntrials = c->ntrials;
  s->trials = trials;
  s->status = SP_SG_TIMEOUT;
  settle_gap(c, s, c->single && !probe, s->bound);
  c->po->on_snapshot(c->po->snapshot_ctx, snap, NULL);
  sp_module_copy_free(&snap->copy);
}

/* Hands out a kept plan (the best, else the fallback); false when there is none. */
static bool hand_out_kept(ctx *c) {
  const kept *k = c->best.have ? &c->best : c->fallback.have ? &c->fallback : NULL;
  if (!k) return false;
  sp_search_snapshot snap;
  sp_err err;
  if (kept_plan(c, k, &snap, &err)) c->po->on_snapshot(c->po->snapshot_ctx, NULL, &err);
  else hand_out(c, &snap, k->mesh, k->dev, k->trial, k == &c->fallback);
  return true;
}

/* The solver of the configuration being planned offers its best plan so far (on_best): the
 * caller gets the cheapest plan priced with the cluster's links, else the cheapest probe's. */
static void serve_between(ctx *c);

static void offered(void *arg, const sp_search_incumbent *inc) {
  ctx *c = arg;
  if (!inc) {   /* the graph is being built: the configurations planned so far may serve */
    serve_between(c);
    return;
  }
  bool probe = inc->uniform_links;
  bool take = probe ? !c->best.have && (!c->fallback.have || inc->cost < c->fallback.s.cost)
                    : !c->best.have || inc->cost < c->best.s.cost;
  if (!take) {
    hand_out_kept(c);
    return;
  }
  /* A probe's plan is priced with the links it would really cross. */
  sp_axis_cost real[SP_MAX_MESH_AXES_CLUSTER];
  sp_search_snapshot snap;
  sp_err err;
  int rc = probe ? sp_cluster_axis_costs(c->o->cluster, c->trial_mesh, c->trial_dev, real, &err)
                 : SP_OK;
  if (!rc) rc = sp_search_incumbent_plan(inc, probe ? real : NULL, &snap, &err);
  if (rc) c->po->on_snapshot(c->po->snapshot_ctx, NULL, &err);
  else hand_out(c, &snap, c->trial_mesh, c->trial_dev, c->ntrials - 1, probe);
}

/* Between configurations, or while one's graph is built: a snapshot whose time has come gets
 * the best plan kept (if any). */
static void serve_between(ctx *c) {
  long long at = c->po->on_snapshot ? sp_run_ctl_snapshot_due(c->m->ctl) : 0;
  if (at && at != c->served && hand_out_kept(c)) c->served = at;
}

/* ------------------------------------------------------------------ planning */

/* Plans the module on `mesh` placed by `dev` (NULL: as the options say); keeps it when it is
 * the cheapest so far (a probe, with uniform links, see sp_plan_search_opts.uniform_links,
 * only as the fallback until a plan with the cluster's links exists). *s gets its summary,
 * *planned whether a plan came out. */
static int plan_one(ctx *c, const sp_mesh *mesh, int64_t *dev, bool probe, sp_plan_summary *s,
                    bool *planned, sp_err *err) {
  *planned = false;
  /* A cancelled request plans no further configuration (the solver only checks inside). */
  if (sp_run_ctl_cancelled(c->m->ctl))
    return sp_err_set(err, SP_ETIMEOUT, "cancelled between placement trials");
  /* Past the caller's deadline with a plan in hand: no further configuration (each would
   * still build its graph and a first plan); the plan is then cut short. */
  if ((c->best.have || c->fallback.have) && sp_run_ctl_stopped(c->m->ctl)) {
    c->cut = true;
    return SP_OK;
  }
  serve_between(c);
  sp_saved_shardings_restore(&c->orig);
  c->mesh_attr->u.mesh = (sp_mesh *)mesh;
  sp_plan_search_opts oc = *c->o;
  if (dev) oc.device_of = dev;
  oc.uniform_links = probe;
  oc.time_limit = trial_time(c);
  if (c->po->on_snapshot) {
    oc.on_best = offered;
    oc.best_ctx = c;
  }
  oc.cut_short = c->best.have || c->fallback.have;
  c->trials_left--;
  sp_plan_trial *t = new_trial(c, mesh, dev ? dev : c->o->device_of);
  if (!t) return sp_err_set(err, SP_ENOMEM, "out of memory");
  t->probe = probe;
  c->trial_mesh = mesh;
  c->trial_dev = dev ? dev : (int64_t *)c->o->device_of;
  sp_err terr;
  int rc = sp_plan_search_module(c->m, &oc, s, &terr);
  if (rc == SP_ETIMEOUT && oc.cut_short && !sp_run_ctl_cancelled(c->m->ctl)) {
    c->cut = true;   /* the deadline came while its graph was built: the plan in hand stands */
    t->status = SP_SG_TIMEOUT;
    t->bound = INT64_MIN;
    t->error = sp_arena_strdup(c->m->arena, terr.msg);
    return t->error ? SP_OK : sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  if (rc) {
    if (!trial_error(rc)) {
      if (err) *err = terr;
      return rc;
    }
    if (rc == SP_ELIMIT) c->nlimit++;
    /* What the configuration's failure says about it: proven without a plan, or not known
     * (the solver found none in its limits). */
    t->status = rc == SP_ENOTFOUND ? s->status : SP_SG_INFEASIBLE;
    t->bound = INT64_MIN;
    if (!(t->error = sp_arena_strdup(c->m->arena, terr.msg)))
      return sp_err_set(err, SP_ENOMEM, "out of memory");
    return SP_OK;
  }
  *planned = true;
  t->total_s = s->total_s;
  t->cost = s->cost;
  t->bound = s->bound;
  t->status = s->status;
  if (probe) {
    /* The fallback, priced with the links it would really cross (its placement's). */
    if (!c->best.have && (!c->fallback.have || s->cost < c->fallback.s.cost)) {
      sp_axis_cost real[SP_MAX_MESH_AXES_CLUSTER];
      if ((rc = sp_cluster_axis_costs(c->o->cluster, mesh, c->trial_dev, real, err))) return rc;
      keep(c, &c->fallback, s, mesh, dev);
      memcpy(c->fallback.s.axis, real, sizeof real);
    }
    return SP_OK;
  }
  /* Among equal plans the mesh as the module gave it wins: no change without a gain. */
  kept *b = &c->best;
  bool better = !b->have || s->cost < b->s.cost ||
                (s->cost == b->s.cost && same_sizes(mesh, c->orig_mesh) &&
                 !same_sizes(b->mesh, c->orig_mesh));
  if (better) keep(c, b, s, mesh, dev);
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
static int plan_mapped(ctx *c, const sp_mesh *mesh, int max_rounds, sp_err *err) {
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
  rc = plan_one(c, mesh, ident, !uniform, &s, &planned, err);
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
    rc = plan_one(c, mesh, next, false, &s, &planned, err);
    plans++;
    if (rc || !planned) goto done;
  }
  if (!was_tried(&t, ident, ident_costs, n, mesh->naxes)) {
    if (plans >= budgeted) c->trials_left++;
    rc = plan_one(c, mesh, ident, false, &s, &planned, err);
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
static int plan_shape(ctx *c, const sp_mesh *mesh, int max_rounds, sp_err *err) {
  if (c->map_ranks && sp_mesh_num_devices(mesh) <= c->o->cluster->ndevices)
    return plan_mapped(c, mesh, max_rounds, err);
  /* A mesh larger than the cluster is reported by the search itself. */
  sp_plan_summary s;
  bool planned;
  return plan_one(c, mesh, NULL, false, &s, &planned, err);
}

/* The error when no configuration could be planned: every trial's reason. */
static int no_plan(ctx *c, sp_err *err) {
  /* Every configuration had a value too large to count: that is the error, not "no plan". */
  int code = c->nlimit == c->ntrials ? SP_ELIMIT : SP_ENOTFOUND;
  if (c->ntrials == 1) return sp_err_set(err, code, "%s", c->trials[0].error);
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_printf(&sb, "no mesh shape admits a plan:");
  for (int i = 0; i < c->ntrials; i++)
    sp_strbuf_printf(&sb, " [%s] %s;", c->trials[i].shape,
                     c->trials[i].error ? c->trials[i].error : "probe only");
  int rc = sp_err_set(err, code, "%s", sp_strbuf_ok(&sb) ? sp_strbuf_str(&sb)
                                                          : "out of memory");
  sp_strbuf_free(&sb);
  return rc;
}

/* The meshes to plan (one, or every factorisation under shape search) into *out, *n. */
static int list_shapes(ctx *c, const sp_placement_opts *po, const sp_mesh ***out, int *n,
                       sp_err *err) {
  const sp_mesh *orig_mesh = c->orig_mesh;
  int nshapes = 1;
  int64_t *shapes = NULL;
  if (po->auto_shape && orig_mesh->naxes > 0) {
    if (orig_mesh->naxes > SP_MAX_MESH_AXES_CLUSTER)
      return sp_err_set(err, SP_ELIMIT, "mesh has more than %d axes", SP_MAX_MESH_AXES_CLUSTER);
    shapes = sp_arena_alloc(c->m->arena, (size_t)MAX_SHAPES * (size_t)orig_mesh->naxes * sizeof *shapes);
    if (!shapes) return sp_err_set(err, SP_ENOMEM, "out of memory");
    int64_t count = po->num_devices > 0 ? po->num_devices : sp_mesh_num_devices(orig_mesh);
    if (count > c->o->cluster->ndevices)
      return sp_err_set(err, SP_EINVAL, "%lld devices asked for, the cluster has %d",
                        (long long)count, c->o->cluster->ndevices);
    nshapes = sp_cluster_mesh_shapes(count, orig_mesh->naxes, true, shapes, MAX_SHAPES);
    if (nshapes > MAX_SHAPES)
      return sp_err_set(err, SP_ELIMIT, "%d mesh shapes to try (the limit is %d); give the "
                        "mesh fewer axes or a fixed shape", nshapes, MAX_SHAPES);
  }
  const sp_mesh **meshes = sp_arena_alloc(c->m->arena, (size_t)nshapes * sizeof *meshes);
  if (!meshes) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int i = 0; i < nshapes; i++) {
    meshes[i] = shapes ? mesh_variant(c->m->arena, orig_mesh,
                                      &shapes[(size_t)i * (size_t)orig_mesh->naxes], NULL)
                       : orig_mesh;
    if (!meshes[i]) return sp_err_set(err, SP_ENOMEM, "out of memory");
  }
  c->shape_auto = shapes != NULL;
  *out = meshes;
  *n = nshapes;
  return SP_OK;
}

/* ------------------------------------------------------------------ API */

void sp_placement_opts_init(sp_placement_opts *po) {
  memset(po, 0, sizeof *po);
  po->auto_devices = true;
  po->max_rounds = DEFAULT_MAX_ROUNDS;
}

/* Puts the module back as propagation left it and returns rc. */
static int undo(ctx *c, int rc) {
  sp_saved_shardings_restore(&c->orig);
  c->mesh_attr->u.mesh = (sp_mesh *)c->orig_mesh;
  return rc;
}

int sp_placement_search(sp_module *m, const sp_plan_search_opts *o, const sp_placement_opts *po,
                        sp_plan_summary *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  if (!o || !o->cluster) return sp_err_set(err, SP_EINVAL, "the search needs a cluster");
  ctx c;
  memset(&c, 0, sizeof c);
  c.m = m;
  c.o = o;
  c.po = po;
  c.func = sp_plan_main_func(m);
  if (!c.func)
    return sp_err_set(err, SP_EINVAL, "%s: no main function with a body to plan", m->filename);
  c.mesh_op = sp_plan_mesh_op(m, o->mesh_name, err);
  if (!c.mesh_op) return err ? err->code : SP_EINVAL;
  c.mesh_attr = sp_op_attr(c.mesh_op, "mesh");
  c.orig_mesh = c.mesh_attr->u.mesh;
  c.map_ranks = po->auto_devices && !o->device_of && c.orig_mesh->ndevice_ids == 0;
  int max_rounds = po->max_rounds > 0 ? po->max_rounds : DEFAULT_MAX_ROUNDS;
  if (max_rounds > MAX_ROUNDS_CAP - 2) max_rounds = MAX_ROUNDS_CAP - 2;
  const sp_mesh **meshes = NULL;
  int nshapes = 0;
  int rc = list_shapes(&c, po, &meshes, &nshapes, err);
  if (rc) return rc;
  if (sp_saved_shardings_init(m->arena, c.func, &c.orig) ||
      sp_saved_shardings_init(m->arena, c.func, &c.best.snap) ||
      sp_saved_shardings_init(m->arena, c.func, &c.fallback.snap))
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  sp_saved_shardings_take(&c.orig);
  for (int i = 0; i < nshapes; i++) c.trials_left += shape_budget(&c, meshes[i], c.map_ranks);
  c.single = c.trials_left == 1;
  if (o->time_limit > 0) c.deadline = sp_clock_now() + o->time_limit;
  for (int i = 0; i < nshapes && !rc; i++) rc = plan_shape(&c, meshes[i], max_rounds, err);
  /* Without a plan priced with the cluster's links (the deadline cut the search), the
   * cheapest probe's plan is the answer, with its links' prices. */
  bool fallback = !c.best.have && c.fallback.have;
  const kept *b = fallback ? &c.fallback : &c.best;
  if (!rc && !b->have) rc = no_plan(&c, err);
  if (rc) return undo(&c, rc);

  /* Install the winner; a placement other than the mesh order becomes the mesh's ids. */
  sp_saved_shardings_restore(&b->snap);
  const sp_mesh *final_mesh = b->mesh;
  int64_t n = sp_mesh_num_devices(b->mesh);
  if (b->dev && !is_identity(b->dev, n) &&
      !(final_mesh = mesh_variant(m->arena, b->mesh, NULL, b->dev)))
    return undo(&c, sp_err_set(err, SP_ENOMEM, "out of memory"));
  c.mesh_attr->u.mesh = (sp_mesh *)final_mesh;
  *out = b->s;
  if (c.cut && (out->status == SP_SG_OPTIMAL || out->status == SP_SG_FEASIBLE))
    out->status = SP_SG_TIMEOUT;   /* not every configuration was planned */
  if (fallback) out->status = SP_SG_TIMEOUT;
  int64_t bound = INT64_MIN;
  bool known = !fallback && overall_bound(&c, &bound);
  settle_gap(&c, out, known, bound);
  /* The winner's operand layouts, as reshards (once: the trials share the module). */
  rc = sp_plan_insert_operand_reshards(m, out, err);
  if (rc) return rc;
  out->mesh = final_mesh;
  out->placement_auto = c.map_ranks;
  out->shape_auto = c.shape_auto;
  c.trials[b->trial].chosen = true;
  out->ntrials = c.ntrials;
  out->trials = c.trials;
  return SP_OK;
}
