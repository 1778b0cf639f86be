/*
 * provenance.c - axis origins and paths from a plan's factor tables (see provenance.h).
 *
 * The graph: nodes are values; an op contributes, per factor and axis, an edge between every
 * two of its tensors whose cells at that factor hold the axis after propagation. Tensors of an
 * op are its rows: operands first ("operand_values"), then results (the values whose position
 * is that op's result i).
 */
#include "plan/provenance.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/grow.h"

typedef struct op_rows {
  const cJSON *table;   /* the op's table: "before", "after", "operand_values" */
  int op;               /* op number */
  const char *name;
  int nrows;
  int *value;           /* [nrows] value index of each row, -1 unknown */
  int nf;               /* factors of the after table (0: none) */
  uint64_t *after;      /* [nrows * nf] axes (bit = axis id) each row holds per factor after */
  uint64_t *before_any; /* [nrows] axes each row held on any factor before propagation */
} op_rows;

typedef struct graph {
  const sp_plan *p;
  int naxes;            /* axis ids: index in `axes` (at most 64 are traced) */
  const char **axes;
  int nops;
  op_rows *ops;
  /* value -> ops touching it (adjacency as a CSR over op indices) */
  int *adj_start, *adj;
} graph;

static const cJSON *item(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

static int nfactors(const cJSON *table) { return cJSON_GetArraySize(item(table, "factors")); }

static int axis_id(const graph *g, const char *name) {
  for (int i = 0; i < g->naxes; i++)
    if (strcmp(g->axes[i], name) == 0) return i;
  return -1;
}

/* The axes of a cell as a mask of axis ids. */
static uint64_t cell_mask(const graph *g, const cJSON *c) {
  uint64_t m = 0;
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(c, "axes")) {
    int id = cJSON_IsString(a) ? axis_id(g, a->valuestring) : -1;
    if (id >= 0) m |= (uint64_t)1 << id;
  }
  return m;
}

/* Reads an op's before and after tables into masks, walking each table's lists once. */
static int fill_masks(const graph *g, op_rows *o) {
  const cJSON *after = item(o->table, "after"), *before = item(o->table, "before");
  o->nf = cJSON_IsObject(after) ? nfactors(after) : 0;
  o->after = calloc((size_t)(o->nrows * o->nf + 1), sizeof *o->after);
  o->before_any = calloc((size_t)(o->nrows + 1), sizeof *o->before_any);
  if (!o->after || !o->before_any) return SP_ENOMEM;
  int r = 0;
  const cJSON *row, *c;
  if (o->nf)
    cJSON_ArrayForEach(row, item(after, "tensors")) {
      if (r >= o->nrows) break;
      int f = 0;
      cJSON_ArrayForEach(c, item(row, "cells")) {
        if (f >= o->nf) break;
        if (cJSON_IsObject(c)) o->after[r * o->nf + f] = cell_mask(g, c);
        f++;
      }
      r++;
    }
  r = 0;
  if (cJSON_IsObject(before))
    cJSON_ArrayForEach(row, item(before, "tensors")) {
      if (r >= o->nrows) break;
      cJSON_ArrayForEach(c, item(row, "cells"))
        if (cJSON_IsObject(c)) o->before_any[r] |= cell_mask(g, c);
      r++;
    }
  return SP_OK;
}


/* Operand rows of an op with `nout` result rows. */
static int o_nin(const op_rows *o, int nout) { return o->nrows - nout; }

static int build(graph *g, const sp_plan *p, const char **axes, int naxes) {
  memset(g, 0, sizeof *g);
  g->p = p;
  g->axes = axes;
  g->naxes = naxes > 64 ? 64 : naxes;
  g->nops = p->nops;
  g->ops = calloc((size_t)(p->nops ? p->nops : 1), sizeof *g->ops);
  g->adj_start = calloc((size_t)p->nvalues + 1, sizeof *g->adj_start);
  if (!g->ops || !g->adj_start) return SP_ENOMEM;
  /* op number -> index in p->ops, to place each op result in its op's rows */
  int max_op = -1;
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i].op > max_op) max_op = p->ops[i].op;
  int *index_of = malloc(sizeof *index_of * (size_t)(max_op + 2));
  int *nout = calloc((size_t)(p->nops ? p->nops : 1), sizeof *nout);
  if (!index_of || !nout) {
    free(index_of);
    free(nout);
    return SP_ENOMEM;
  }
  for (int k = 0; k <= max_op; k++) index_of[k] = -1;
  for (int i = 0; i < p->nops; i++)
    if (p->ops[i].op >= 0) index_of[p->ops[i].op] = i;
  for (int v = 0; v < p->nvalues; v++) {
    const sp_plan_pos *pos = &p->values[v].pos;
    if (pos->kind == SP_PLAN_OP_RESULT && pos->op >= 0 && pos->op <= max_op &&
        index_of[pos->op] >= 0 && pos->index + 1 > nout[index_of[pos->op]])
      nout[index_of[pos->op]] = pos->index + 1;
  }
  int rc = SP_OK;
  for (int i = 0; i < p->nops && !rc; i++) {
    op_rows *o = &g->ops[i];
    o->table = p->ops[i].table;
    o->op = p->ops[i].op;
    o->name = p->ops[i].name;
    const cJSON *ov = item(o->table, "operand_values");
    int nin = cJSON_GetArraySize(ov);
    o->nrows = nin + nout[i];
    o->value = malloc(sizeof *o->value * (size_t)(o->nrows ? o->nrows : 1));
    if (!o->value) {
      rc = SP_ENOMEM;
      break;
    }
    for (int r = 0; r < o->nrows; r++) o->value[r] = -1;
    int r = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, ov) o->value[r++] = x->valueint < p->nvalues ? x->valueint : -1;
  }
  for (int v = 0; v < p->nvalues && !rc; v++) {
    const sp_plan_pos *pos = &p->values[v].pos;
    if (pos->kind != SP_PLAN_OP_RESULT || pos->op < 0 || pos->op > max_op) continue;
    int i = index_of[pos->op];
    if (i < 0) continue;
    int nin = o_nin(&g->ops[i], nout[i]);
    g->ops[i].value[nin + pos->index] = v;
  }
  free(index_of);
  free(nout);
  for (int i = 0; i < p->nops && !rc; i++) rc = fill_masks(g, &g->ops[i]);
  if (rc) return rc;
  for (int i = 0; i < p->nops; i++)
    for (int r = 0; r < g->ops[i].nrows; r++)
      if (g->ops[i].value[r] >= 0) g->adj_start[g->ops[i].value[r] + 1]++;
  for (int v = 0; v < p->nvalues; v++) g->adj_start[v + 1] += g->adj_start[v];
  g->adj = malloc(sizeof *g->adj * (size_t)(g->adj_start[p->nvalues] + 1));
  int *fill = calloc((size_t)p->nvalues + 1, sizeof *fill);
  if (!g->adj || !fill) {
    free(fill);
    return SP_ENOMEM;
  }
  for (int i = 0; i < p->nops; i++)
    for (int r = 0; r < g->ops[i].nrows; r++) {
      int v = g->ops[i].value[r];
      if (v >= 0) g->adj[g->adj_start[v] + fill[v]++] = i;
    }
  free(fill);
  return SP_OK;
}

static void graph_free(graph *g) {
  for (int i = 0; g->ops && i < g->nops; i++) {
    free(g->ops[i].value);
    free(g->ops[i].after);
    free(g->ops[i].before_any);
  }
  free(g->ops);
  free(g->adj_start);
  free(g->adj);
}

/* Search state for one axis. */
typedef struct walk {
  int *origin;     /* [nvalues] source value, -1 unreached */
  int *parent;     /* [nvalues] previous value on the path, -1 at a source */
  int *via;        /* [nvalues] op index crossed to get here */
  int *hops;       /* [nvalues] ops crossed from the source */
  int *queue;
} walk;

/* Whether value v held axis `id` before propagation in some op's table. */
static bool annotated(const graph *g, int v, int id) {
  uint64_t bit = (uint64_t)1 << id;
  for (int k = g->adj_start[v]; k < g->adj_start[v + 1]; k++) {
    const op_rows *o = &g->ops[g->adj[k]];
    for (int r = 0; r < o->nrows; r++)
      if (o->value[r] == v && (o->before_any[r] & bit)) return true;
  }
  return false;
}

static void search(const graph *g, int id, walk *w) {
  int n = g->p->nvalues, head = 0, tail = 0;
  uint64_t bit = (uint64_t)1 << id;
  for (int v = 0; v < n; v++) {
    w->origin[v] = w->parent[v] = w->via[v] = -1;
    w->hops[v] = 0;
    if (annotated(g, v, id)) {
      w->origin[v] = v;
      w->queue[tail++] = v;
    }
  }
  while (head < tail) {
    int u = w->queue[head++];
    for (int k = g->adj_start[u]; k < g->adj_start[u + 1]; k++) {
      const op_rows *o = &g->ops[g->adj[k]];
      for (int r = 0; r < o->nrows; r++) {
        if (o->value[r] != u) continue;
        for (int f = 0; f < o->nf; f++) {
          if (!(o->after[r * o->nf + f] & bit)) continue;
          for (int s = 0; s < o->nrows; s++) {
            int v = o->value[s];
            if (v < 0 || w->origin[v] >= 0 || !(o->after[s * o->nf + f] & bit)) continue;
            w->origin[v] = w->origin[u];
            w->parent[v] = u;
            w->via[v] = g->adj[k];
            w->hops[v] = w->hops[u] + 1;
            w->queue[tail++] = v;
          }
        }
      }
    }
  }
}

static cJSON *step_json(const graph *g, int v, int opi) {
  cJSON *s = cJSON_CreateObject();
  if (!s) return NULL;
  if (opi >= 0) {
    cJSON_AddNumberToObject(s, "op", g->ops[opi].op);
    cJSON_AddStringToObject(s, "op_name", g->ops[opi].name ? g->ops[opi].name : "");
  }
  cJSON_AddNumberToObject(s, "value", v);
  cJSON_AddStringToObject(s, "name", g->p->values[v].name ? g->p->values[v].name : "");
  return s;
}

/* Shardy's origin of `axis` on value `v` (sp_plan_value.origins): the entry of that axis, else
 * of the same axis cut differently ("x" against an older "x:(1)2"); NULL if none. */
static const char *shardy_origin(const sp_plan_value *v, const char *axis) {
  size_t base = strcspn(axis, ":");
  for (int i = 0; i < v->norigins; i++)
    if (strcmp(v->origins[i].axis, axis) == 0) return v->origins[i].origin;
  for (int i = 0; i < v->norigins; i++)
    if (strncmp(v->origins[i].axis, axis, base) == 0 && strcspn(v->origins[i].axis, ":") == base)
      return v->origins[i].origin;
  return NULL;
}

/* Whether Shardy's origin names the same annotation as the derived source `src` of value `v`:
 * 1 or 0 where the two can be compared ("self", "input: N", "output: N"), -1 otherwise (a
 * constraint or manual computation, whose number the plan's values do not carry, or no
 * derived source). "input: N" names argument N of the function that introduced it, which for
 * a callee's values is its caller's: the argument number and kind are compared. */
static int shardy_agrees(const sp_plan *p, int v, int src, const char *shardy) {
  if (src < 0) return -1;
  if (strcmp(shardy, "self") == 0) return src == v;
  const sp_plan_pos *pos = &p->values[src].pos;
  int n;
  if (sscanf(shardy, "input: %d", &n) == 1) return pos->kind == SP_PLAN_ARG && pos->op < 0 && pos->index == n;
  if (sscanf(shardy, "output: %d", &n) == 1) return pos->kind == SP_PLAN_FUNC_RESULT && pos->index == n;
  return -1;
}

static cJSON *origin_json(const graph *g, const walk *w, int v, int dim, const char *axis) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "dim", dim);
  cJSON_AddStringToObject(o, "axis", axis);
  int src = w->origin[v];
  const char *shardy = shardy_origin(&g->p->values[v], axis);
  if (shardy) {
    cJSON_AddStringToObject(o, "shardy", shardy);
    int agrees = shardy_agrees(g->p, v, src, shardy);
    if (agrees >= 0) cJSON_AddBoolToObject(o, "agrees", agrees);
  }
  if (src < 0) {
    /* no annotation reaches it along the factors: after a search, the search put it there */
    cJSON_AddStringToObject(o, "origin", g->p->searched ? "chosen by the cost search"
                                                          : "not traced");
    return o;
  }
  const char *sname = g->p->values[src].name ? g->p->values[src].name : "?";
  if (src == v) {
    cJSON_AddStringToObject(o, "origin", "this value's own annotation");
  } else {
    size_t n = strlen(sname) + 32;
    char *text = malloc(n);
    if (text) {
      snprintf(text, n, "user annotation on %s", sname);
      cJSON_AddStringToObject(o, "origin", text);
      free(text);
    }
  }
  cJSON_AddItemToObject(o, "source", step_json(g, src, -1));
  cJSON_AddNumberToObject(o, "hops", w->hops[v]);
  if (w->parent[v] >= 0) cJSON_AddItemToObject(o, "prev", step_json(g, w->parent[v], w->via[v]));
  return o;
}

/* The distinct axis names of the plan's shardings, in first-seen order. */
static int axes_of(const sp_plan *p, const char ***out) {
  int n = 0, cap = 0;
  const char **v = NULL;
  for (int i = 0; i < p->nvalues; i++)
    for (int d = 0; p->values[i].sharded && d < p->values[i].rank; d++)
      for (int a = 0; a < p->values[i].dims[d].naxes; a++) {
        const char *name = p->values[i].dims[d].axes[a];
        int k = 0;
        while (k < n && strcmp(v[k], name) != 0) k++;
        if (k < n) continue;
        if (sp_grow((void **)&v, &cap, n, sizeof *v)) {
          free(v);
          return -1;
        }
        v[n++] = name;
      }
  *out = v;
  return n;
}

int sp_plan_provenance(const sp_plan *p, cJSON **out, sp_err *err) {
  *out = NULL;
  graph g;
  const char **axes = NULL;
  walk *walks = NULL;
  cJSON *res = cJSON_CreateArray();
  int naxes = axes_of(p, &axes);
  int rc = build(&g, p, axes, naxes < 0 ? 0 : naxes);
  if (naxes > 64) naxes = 64;  /* more distinct axis names than anyone has: trace 64 */
  size_t n = (size_t)p->nvalues + 1;
  if (rc || naxes < 0 || !res) goto oom;
  walks = calloc((size_t)(naxes ? naxes : 1), sizeof *walks);
  if (!walks) goto oom;
  for (int a = 0; a < naxes; a++) {
    walk *w = &walks[a];
    w->origin = malloc(sizeof(int) * n);
    w->parent = malloc(sizeof(int) * n);
    w->via = malloc(sizeof(int) * n);
    w->queue = malloc(sizeof(int) * n);
    w->hops = malloc(sizeof(int) * n);
    if (!w->origin || !w->parent || !w->via || !w->queue || !w->hops) goto oom;
    search(&g, a, w);
  }
  for (int i = 0; i < p->nvalues; i++) {
    cJSON *arr = cJSON_CreateArray();
    if (!arr || !cJSON_AddItemToArray(res, arr)) goto oom;
    const sp_plan_value *v = &p->values[i];
    for (int d = 0; v->sharded && d < v->rank; d++)
      for (int k = 0; k < v->dims[d].naxes; k++) {
        int a = 0;
        while (a < naxes && strcmp(axes[a], v->dims[d].axes[k]) != 0) a++;
        if (a == naxes) continue;
        cJSON *o = origin_json(&g, &walks[a], i, d, axes[a]);
        if (!o || !cJSON_AddItemToArray(arr, o)) goto oom;
      }
  }
  *out = res;
  res = NULL;
  rc = SP_OK;
  goto done;
oom:
  rc = sp_err_set(err, SP_ENOMEM, "provenance: out of memory");
done:
  cJSON_Delete(res);
  for (int a = 0; walks && a < naxes; a++) {
    free(walks[a].origin);
    free(walks[a].parent);
    free(walks[a].via);
    free(walks[a].queue);
    free(walks[a].hops);
  }
  free(walks);
  free(axes);
  graph_free(&g);
  return rc;
}
