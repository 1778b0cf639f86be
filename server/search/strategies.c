/*
 * strategies.c - enumeration of an op's (or a value's) sharding strategies (see strategies.h).
 *
 * An odometer runs over the choices of the mesh axes of size > 1 (none, or one of the
 * shardable factors / dims); each complete assignment is checked and, if kept, turned into
 * layouts. Scratch space for one assignment is taken once per call; only kept strategies
 * allocate their layouts.
 */
#include "search/strategies.h"

#include <stdio.h>
#include <string.h>

#include "ir/sp_limits.h"

/* ------------------------------------------------------------------ agreement */

/* The given axes of dim d of `s`, resolved against `mesh`; false if an axis is unknown. */
static bool given_axis(const sp_mesh *mesh, const sp_sharding *s, int d, int i, sp_ft_axis *out) {
  return sp_ft_axis_from_ref(mesh, &s->dims[d].axes[i], out) == SP_OK;
}

bool sp_layout_agrees(const sp_layout *l, const sp_sharding *s, const sp_mesh *mesh, bool fixed) {
  if (!s) return true;
  if (s->rank != l->rank) return false;
  for (int d = 0; d < l->rank; d++) {
    const sp_dim_sharding *ds = &s->dims[d];
    int n = sp_layout_dim_naxes(l, d);
    if (n < ds->naxes) return false;
    if ((ds->closed || fixed) && n != ds->naxes) return false;
    for (int i = 0; i < ds->naxes; i++) {
      sp_ft_axis g;
      if (!given_axis(mesh, s, d, i, &g)) return false;
      if (!sp_ft_axis_equal(g, l->axes[l->start[d] + i])) return false;
    }
  }
  for (int i = 0; i < s->nreplicated; i++) {
    int ax = sp_mesh_axis_index(mesh, s->replicated[i].name);
    if (ax >= 0 && sp_layout_uses_axis(l, ax)) return false;
  }
  return true;
}

/* ------------------------------------------------------------------ set helpers */

static int set_init(sp_strategy_set *set, int noperands, int nresults) {
  memset(set, 0, sizeof *set);
  set->noperands = noperands;
  set->nresults = nresults;
  return SP_OK;
}

static sp_strategy *set_push(sp_arena *a, sp_strategy_set *set) {
  if (sp_arena_grow(a, (void **)&set->v, &set->cap, set->n, sizeof *set->v)) return NULL;
  sp_strategy *st = &set->v[set->n++];
  memset(st, 0, sizeof *st);
  st->scatter_dim = -1;
  st->devices = 1;
  return st;
}

static int8_t *copy_choice(sp_arena *a, const sp_mesh *mesh, const int *ax, const int *choice,
                           int nax, const int *target) {
  int8_t *af = sp_arena_alloc(a, (size_t)(mesh->naxes ? mesh->naxes : 1));
  if (!af) return NULL;
  memset(af, -1, (size_t)mesh->naxes);
  for (int i = 0; i < nax; i++) af[ax[i]] = (int8_t)(choice[i] ? target[choice[i] - 1] : -1);
  return af;
}

/* ------------------------------------------------------------------ ops */

typedef struct op_enum {
  sp_arena *a;
  const sp_op *op;
  const sp_rule *rule;
  const sp_mesh *mesh;
  bool fixed, reduce_scatter, partial;
  int nax;
  int ax[SP_MAX_MESH_AXES];          /* mesh axes of size > 1, mesh order */
  int nfs;
  int *fs;                           /* shardable factors, index order */
  int *choice;                       /* [nax]: 0 none, k = fs[k-1] */
  int *factor_of;                    /* [nfactors] -> position in fs + 1, 0 if not shardable */
  sp_ft_axis *scratch_axes;          /* [SP_MAX_MESH_AXES] per layout being built */
  int *scratch_start;                /* [SP_MAX_RANK + 1] */
  sp_strategy_set *out;
} op_enum;

/* Whether mesh axis position i (in ax) shards factor f under the current choice. */
static bool axis_on_factor(const op_enum *e, int i, int f) {
  return e->choice[i] && e->fs[e->choice[i] - 1] == f;
}

static int64_t factor_product(const op_enum *e, int f) {
  int64_t p = 1;
  for (int i = 0; i < e->nax; i++)
    if (axis_on_factor(e, i, f)) p *= e->mesh->axes[e->ax[i]].size;
  return p;
}

/* Builds the layout of rule tensor `t` into the scratch arrays; false when a dimension would
 * not be a plain blocked split. */
static bool build_scratch(op_enum *e, const sp_rule_tensor *t, int *naxes) {
  int k = 0;
  for (int d = 0; d < t->rank; d++) {
    e->scratch_start[d] = k;
    bool open_tail = true;   /* every factor so far is split completely */
    for (int j = 0; j < t->dims[d].nfactors; j++) {
      int f = t->dims[d].factors[j];
      int64_t p = factor_product(e, f);
      if (p > 1 && !open_tail) return false;
      for (int i = 0; i < e->nax; i++)
        if (axis_on_factor(e, i, f)) e->scratch_axes[k++] = sp_ft_axis_make(e->mesh, e->ax[i], 0, 0);
      if (p != e->rule->factors[f].size) open_tail = false;
    }
  }
  e->scratch_start[t->rank] = k;
  *naxes = k;
  return true;
}

static sp_layout *layout_copy(sp_arena *a, const sp_layout *src) {
  sp_layout *l = sp_layout_new_unsharded(a, src->rank);
  if (!l) return NULL;
  int naxes = src->start[src->rank];
  memcpy(l->start, src->start, ((size_t)src->rank + 1) * sizeof *l->start);
  if (naxes) {
    l->axes = sp_arena_alloc(a, (size_t)naxes * sizeof *l->axes);
    if (!l->axes) return NULL;
    memcpy(l->axes, src->axes, (size_t)naxes * sizeof *l->axes);
  }
  return l;
}

/* `l` with `axes` appended to dim d (a new layout), or NULL on out-of-memory. */
static sp_layout *layout_append(sp_arena *a, const sp_layout *l, int d, const sp_ft_axis *axes,
                                int n) {
  sp_layout *r = sp_layout_new_unsharded(a, l->rank);
  if (!r) return NULL;
  int total = l->start[l->rank] + n;
  r->axes = sp_arena_alloc(a, (size_t)total * sizeof *r->axes);
  if (!r->axes) return NULL;
  int k = 0;
  for (int dd = 0; dd < l->rank; dd++) {
    r->start[dd] = k;
    for (int i = l->start[dd]; i < l->start[dd + 1]; i++) r->axes[k++] = l->axes[i];
    if (dd == d)
      for (int i = 0; i < n; i++) r->axes[k++] = axes[i];
  }
  r->start[l->rank] = k;
  return r;
}

/* Builds the layout of tensor t (operands first, then results) into the scratch arrays and
 * returns it as a view of them; false when a dimension would not be a plain blocked split. */
static bool scratch_layout(op_enum *e, int t, sp_layout *view) {
  const sp_rule *rule = e->rule;
  const sp_rule_tensor *rt = t < rule->noperands ? &rule->operands[t]
                                                 : &rule->results[t - rule->noperands];
  int naxes;
  if (!build_scratch(e, rt, &naxes)) return false;
  view->rank = rt->rank;
  view->unreduced = 0;
  view->hash = 0;
  view->start = e->scratch_start;
  view->axes = e->scratch_axes;
  return true;
}

/* Whether axis `a` is in the explicitly replicated axes of `s` (NULL: none). */
static bool replicated_in(const sp_sharding *s, const sp_mesh *mesh, int a) {
  for (int i = 0; s && i < s->nreplicated; i++)
    if (strcmp(s->replicated[i].name, mesh->axes[a].name) == 0) return true;
  return false;
}

/* The keep-partial variant of an assignment whose plain layouts are `lay`: the results carry
 * the reduction axes as unreduced; none may be explicitly replicated in the result. */
static int push_partial(op_enum *e, const sp_layout *lay, int8_t *af, int64_t devices,
                        sp_ft_axis *red, int nred, sp_err *err) {
  const sp_rule *rule = e->rule;
  int nt = rule->noperands + rule->nresults;
  uint32_t mask = 0;
  for (int i = 0; i < nred; i++) {
    if (red[i].axis < 0 || red[i].axis >= 32) return SP_OK;
    mask |= 1u << red[i].axis;
  }
  for (int r = 0; r < rule->nresults; r++)
    for (int i = 0; i < nred; i++)
      if (replicated_in(e->op->results[r].sharding, e->mesh, red[i].axis)) return SP_OK;
  sp_layout *ops = sp_arena_alloc(e->a, (size_t)nt * sizeof *ops);
  sp_strategy *st = ops ? set_push(e->a, e->out) : NULL;
  if (!st) return sp_err_set(err, SP_ENOMEM, "out of memory");
  memcpy(ops, lay, (size_t)nt * sizeof *ops);
  for (int r = 0; r < rule->nresults; r++) ops[rule->noperands + r].unreduced = mask;
  st->axis_factor = af;
  st->operands = ops;
  st->results = ops + rule->noperands;
  st->reduced = (sp_layout *)lay + rule->noperands;
  st->devices = devices;
  st->nreduce = nred;
  st->reduce_axes = red;
  st->partial = true;
  return SP_OK;
}

/* Handles one complete assignment: checks it and pushes its strategies. */
static int visit_assignment(op_enum *e, sp_err *err) {
  const sp_rule *rule = e->rule;
  int nt = rule->noperands + rule->nresults;
  for (int k = 0; k < e->nfs; k++) {
    int64_t p = factor_product(e, e->fs[k]);
    if (p > 1 && rule->factors[e->fs[k]].size % p != 0) return SP_OK;
  }
  /* Reduction axes (mesh order) and the devices sharing the work. */
  sp_ft_axis red[SP_MAX_MESH_AXES];
  int nred = 0;
  int64_t devices = 1, redprod = 1;
  for (int i = 0; i < e->nax; i++) {
    if (!e->choice[i]) continue;
    int f = e->fs[e->choice[i] - 1];
    devices *= e->mesh->axes[e->ax[i]].size;
    if (rule->factors[f].kind == SP_FACTOR_REDUCTION) {
      red[nred++] = sp_ft_axis_make(e->mesh, e->ax[i], 0, 0);
      redprod *= e->mesh->axes[e->ax[i]].size;
    }
  }
  bool scatter = nred && e->reduce_scatter && rule->nresults == 1;
  /* Cheap rejection on the scratch arrays before anything is allocated. */
  bool plain_agrees = true;
  for (int t = 0; t < nt; t++) {
    sp_layout view;
    if (!scratch_layout(e, t, &view)) return SP_OK;
    if (t >= rule->noperands && plain_agrees)
      plain_agrees = sp_layout_agrees(&view, e->op->results[t - rule->noperands].sharding,
                                      e->mesh, e->fixed);
  }
  if (!plain_agrees && !scatter) return SP_OK;

  sp_layout *lay = sp_arena_alloc(e->a, (size_t)(nt ? nt : 1) * sizeof *lay);
  sp_ft_axis *redcopy = nred ? sp_arena_alloc(e->a, (size_t)nred * sizeof *redcopy) : NULL;
  int8_t *af = copy_choice(e->a, e->mesh, e->ax, e->choice, e->nax, e->fs);
  if (!lay || (nred && !redcopy) || !af) return sp_err_set(err, SP_ENOMEM, "out of memory");
  if (nred) memcpy(redcopy, red, (size_t)nred * sizeof *redcopy);
  for (int t = 0; t < nt; t++) {
    sp_layout view, *l;
    scratch_layout(e, t, &view);
    l = layout_copy(e->a, &view);
    if (!l) return sp_err_set(err, SP_ENOMEM, "out of memory");
    lay[t] = *l;
  }
  if (plain_agrees) {
    sp_strategy *st = set_push(e->a, e->out);
    if (!st) return sp_err_set(err, SP_ENOMEM, "out of memory");
    st->axis_factor = af;
    st->operands = lay;
    st->results = lay + rule->noperands;
    st->devices = devices;
    st->nreduce = nred;
    st->reduce_axes = redcopy;
  }
  if (plain_agrees && e->partial && nred) {
    int rc = push_partial(e, lay, af, devices, redcopy, nred, err);
    if (rc) return rc;
  }
  if (!scatter) return SP_OK;
  /* Reduce-scatter variants: the partial result scattered onto one of its dimensions. */
  const sp_layout *res = &lay[rule->noperands];
  const sp_type *ty = e->op->results[0].type;
  for (int d = 0; d < res->rank; d++) {
    int64_t have = sp_layout_dim_shards(res, e->mesh, d);
    if (ty->dims[d] % (have * redprod) != 0) continue;
    sp_layout *rl = layout_append(e->a, res, d, red, nred);
    if (!rl) return sp_err_set(err, SP_ENOMEM, "out of memory");
    if (!sp_layout_agrees(rl, e->op->results[0].sharding, e->mesh, e->fixed)) continue;
    sp_layout *ops = sp_arena_alloc(e->a, (size_t)nt * sizeof *ops);
    sp_strategy *st = ops ? set_push(e->a, e->out) : NULL;
    if (!st) return sp_err_set(err, SP_ENOMEM, "out of memory");
    memcpy(ops, lay, (size_t)rule->noperands * sizeof *ops);
    ops[rule->noperands] = *rl;
    st->axis_factor = af;
    st->operands = ops;
    st->results = ops + rule->noperands;
    st->devices = devices;
    st->nreduce = nred;
    st->reduce_axes = redcopy;
    st->scatter_dim = d;
    st->plain = res;
  }
  return SP_OK;
}

/* Checks that the rule fits the op's tensors (ranks) so layouts line up with the types. */
static int check_rule_matches(const sp_op *op, const sp_rule *rule, sp_err *err) {
  if (rule->noperands != op->noperands || rule->nresults != op->nresults)
    return sp_err_set(err, SP_EINVAL, "'%s': sharding rule has %d operands and %d results, the op "
                      "%d and %d", op->name, rule->noperands, rule->nresults, op->noperands,
                      op->nresults);
  for (int r = 0; r < op->nresults; r++) {
    const sp_type *t = op->results[r].type;
    if (!sp_type_is_static_tensor(t) || t->rank != rule->results[r].rank)
      return sp_err_set(err, SP_EINVAL, "'%s': result %d is not a static tensor of rank %d",
                        op->name, r, rule->results[r].rank);
  }
  for (int i = 0; i < op->noperands; i++) {
    const sp_value *v = op->operands[i].value;
    if (!v || !sp_type_is_static_tensor(v->type) || v->type->rank != rule->operands[i].rank)
      return sp_err_set(err, SP_EINVAL, "'%s': operand %d is not a static tensor of rank %d",
                        op->name, i, rule->operands[i].rank);
  }
  /* A factor of size 0 (a zero-size dimension: valid, no elements) takes no free axes (only
   * factors larger than 1 do) and costs nothing; only a negative size is wrong. */
  for (int f = 0; f < rule->nfactors; f++)
    if (rule->factors[f].size < 0)
      return sp_err_set(err, SP_EINVAL, "'%s': factor %d has size %lld", op->name, f,
                        (long long)rule->factors[f].size);
  return SP_OK;
}

int sp_strategies_for_op(sp_arena *a, const sp_op *op, const sp_rule *rule, const sp_mesh *mesh,
                         const sp_strategy_opts *o, sp_strategy_set *out, sp_err *err) {
  set_init(out, op->noperands, op->nresults);
  int rc = check_rule_matches(op, rule, err);
  if (rc) return rc;
  for (int r = 0; r < op->nresults; r++) {
    const sp_sharding *s = op->results[r].sharding;
    for (int d = 0; s && d < s->rank; d++)
      for (int i = 0; i < s->dims[d].naxes; i++) {
        sp_ft_axis x;
        if (!given_axis(mesh, s, d, i, &x))
          return sp_err_set(err, SP_EINVAL, "'%s' result %d: axis \"%s\" is not in the mesh",
                            op->name, r, s->dims[d].axes[i].name);
      }
  }
  op_enum e;
  memset(&e, 0, sizeof e);
  e.a = a;
  e.op = op;
  e.rule = rule;
  e.mesh = mesh;
  e.fixed = o && o->fixed;
  e.reduce_scatter = !(o && o->no_reduce_scatter);
  e.partial = o && o->partial;
  e.out = out;
  for (int i = 0; i < mesh->naxes && i < SP_MAX_MESH_AXES; i++)
    if (mesh->axes[i].size > 1) e.ax[e.nax++] = i;
  e.fs = sp_arena_alloc(a, (size_t)(rule->nfactors + 1) * sizeof *e.fs);
  e.choice = sp_arena_calloc(a, (size_t)e.nax + 1, sizeof *e.choice);
  e.scratch_axes = sp_arena_alloc(a, SP_MAX_MESH_AXES * sizeof *e.scratch_axes);
  e.scratch_start = sp_arena_alloc(a, (SP_MAX_RANK + 1) * sizeof *e.scratch_start);
  if (!e.fs || !e.choice || !e.scratch_axes || !e.scratch_start)
    return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int f = 0; f < rule->nfactors; f++) {
    sp_factor_kind k = rule->factors[f].kind;
    if ((k == SP_FACTOR_PASS_THROUGH || k == SP_FACTOR_REDUCTION) && rule->factors[f].size > 1)
      e.fs[e.nfs++] = f;
  }
  double count = 1;
  for (int i = 0; i < e.nax; i++) count *= (double)(e.nfs + 1);
  if (count > SP_STRATEGY_MAX_ENUM)
    return sp_err_set(err, SP_ELIMIT, "'%s': %d mesh axes over %d factors give %.0f assignments, "
                      "more than the %d the search enumerates", op->name, e.nax, e.nfs, count,
                      SP_STRATEGY_MAX_ENUM);
  for (;;) {
    rc = visit_assignment(&e, err);
    if (rc) return rc;
    int i = e.nax - 1;
    while (i >= 0 && e.choice[i] == e.nfs) e.choice[i--] = 0;
    if (i < 0) break;
    e.choice[i]++;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ values */

int sp_strategies_for_value(sp_arena *a, const sp_value *v, const sp_mesh *mesh,
                            const sp_strategy_opts *o, sp_strategy_set *out, sp_err *err) {
  set_init(out, 0, 1);
  const sp_type *t = v->type;
  if (!sp_type_is_static_tensor(t))
    return sp_err_set(err, SP_EINVAL, "value is not a static tensor");
  if (t->rank > SP_MAX_RANK) return sp_err_set(err, SP_ELIMIT, "rank %d over SP_MAX_RANK", t->rank);
  const sp_sharding *s = v->sharding;
  bool fixed = o && o->fixed;
  sp_layout *given;
  int rc = sp_layout_from_sharding(a, s, t->rank, mesh, &given, err);
  if (rc) return rc;
  /* Free axes: size > 1, not used by the given sharding, not replicated. */
  int ax[SP_MAX_MESH_AXES], nax = 0;
  for (int i = 0; i < mesh->naxes && i < SP_MAX_MESH_AXES; i++) {
    if (mesh->axes[i].size <= 1 || sp_layout_uses_axis(given, i)) continue;
    bool repl = false;
    for (int r = 0; s && r < s->nreplicated; r++)
      if (strcmp(s->replicated[r].name, mesh->axes[i].name) == 0) repl = true;
    if (!repl) ax[nax++] = i;
  }
  /* Open dims (targets of the free axes). */
  int dims[SP_MAX_RANK], ndims = 0;
  for (int d = 0; d < t->rank; d++)
    if (!fixed && !(s && s->dims[d].closed)) dims[ndims++] = d;
  double count = 1;
  for (int i = 0; i < nax; i++) count *= (double)(ndims + 1);
  if (count > SP_STRATEGY_MAX_ENUM)
    return sp_err_set(err, SP_ELIMIT, "%d mesh axes over %d dimensions give %.0f layouts, more "
                      "than the %d the search enumerates", nax, ndims, count,
                      SP_STRATEGY_MAX_ENUM);
  int choice[SP_MAX_MESH_AXES] = {0};
  sp_ft_axes *per = sp_arena_calloc(a, (size_t)t->rank + 1, sizeof *per);
  if (!per) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (;;) {
    bool ok = true;
    for (int d = 0; d < t->rank; d++) per[d].n = 0;
    for (int d = 0; d < t->rank && ok; d++) {
      for (int i = given->start[d]; i < given->start[d + 1]; i++)
        if (sp_ft_axes_push(a, &per[d], given->axes[i])) return sp_err_set(err, SP_ENOMEM, "oom");
      int64_t added = 1;
      for (int i = 0; i < nax; i++)
        if (choice[i] && dims[choice[i] - 1] == d) {
          if (sp_ft_axes_push(a, &per[d], sp_ft_axis_make(mesh, ax[i], 0, 0)))
            return sp_err_set(err, SP_ENOMEM, "out of memory");
          added *= mesh->axes[ax[i]].size;
        }
      if (added > 1 && t->dims[d] % (sp_layout_dim_shards(given, mesh, d) * added) != 0) ok = false;
    }
    if (ok) {
      sp_strategy *st = set_push(a, out);
      sp_layout *l = st ? sp_layout_from_dims(a, t->rank, per) : NULL;
      int8_t *af = l ? copy_choice(a, mesh, ax, choice, nax, dims) : NULL;
      if (!af) return sp_err_set(err, SP_ENOMEM, "out of memory");
      st->axis_factor = af;
      st->results = l;
      st->devices = 1;
    }
    int i = nax - 1;
    while (i >= 0 && choice[i] == ndims) choice[i--] = 0;
    if (i < 0) break;
    choice[i]++;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ fixed */

int sp_strategies_fixed(sp_arena *a, const sp_op *op, const sp_mesh *mesh, sp_strategy_set *out,
                        sp_err *err) {
  set_init(out, op->noperands, op->nresults);
  int nt = op->noperands + op->nresults;
  sp_layout *lay = sp_arena_calloc(a, (size_t)(nt ? nt : 1), sizeof *lay);
  if (!lay) return sp_err_set(err, SP_ENOMEM, "out of memory");
  for (int t = 0; t < nt; t++) {
    const sp_value *v = t < op->noperands ? op->operands[t].value : &op->results[t - op->noperands];
    int rank = (v && v->type && v->type->kind == SP_TYPE_TENSOR && v->type->rank > 0)
                   ? v->type->rank : 0;
    const sp_sharding *s = (v && rank > 0) ? v->sharding : NULL;
    if (s && s->rank != rank) s = NULL;
    sp_layout *l;
    int rc = sp_layout_from_sharding(a, s, rank, mesh, &l, err);
    if (rc) return sp_err_prefix(err, "'%s' %s %d", op->name,
                                 t < op->noperands ? "operand" : "result",
                                 t < op->noperands ? t : t - op->noperands);
    lay[t] = *l;
  }
  sp_strategy *st = set_push(a, out);
  if (!st) return sp_err_set(err, SP_ENOMEM, "out of memory");
  st->operands = lay;
  st->results = lay + op->noperands;
  st->devices = op->nresults ? sp_layout_shards(&st->results[0], mesh) : 1;
  return SP_OK;
}

/* ------------------------------------------------------------------ printing */

void sp_strategy_print(sp_strbuf *sb, const sp_strategy *st, const sp_mesh *mesh,
                       const sp_rule *rule) {
  if (!st->axis_factor) {
    sp_strbuf_puts(sb, "fixed");
    return;
  }
  bool any = false;
  for (int i = 0; i < mesh->naxes; i++) {
    if (st->axis_factor[i] < 0) continue;
    char name[16];
    if (rule) sp_rule_factor_name(st->axis_factor[i], name);
    else snprintf(name, sizeof name, "dim%d", st->axis_factor[i]);
    sp_strbuf_printf(sb, "%s%s->%s", any ? " " : "", mesh->axes[i].name, name);
    any = true;
  }
  if (!any) sp_strbuf_puts(sb, "replicated");
  if (st->nreduce) {
    sp_strbuf_puts(sb, st->partial ? ", partial {" : st->scatter_dim < 0 ? ", all-reduce {"
                                                                        : ", reduce-scatter {");
    for (int i = 0; i < st->nreduce; i++) {
      if (i) sp_strbuf_puts(sb, ", ");
      sp_ft_axis_print(sb, mesh, st->reduce_axes[i], true);
    }
    sp_strbuf_putc(sb, '}');
    if (st->scatter_dim >= 0) sp_strbuf_printf(sb, " onto dim %d", st->scatter_dim);
  }
}
