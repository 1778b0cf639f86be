/*
 * sg_ilp.c - the one-hot integer program with GLPK (see sg_ilp_int.h).
 *
 * Columns: x[i][k] is column xcol[i][k]; pair (a, b) of edge e is ycol[e][a * kb + b]
 * (0 when forbidden). Columns with a nonzero cost come first: GLPK's initial basis depends
 * on the column order, and with zero-cost columns first the root dual simplex on IOPDDL B
 * took 64,780 iterations (57 s) instead of about 7,800 (7 s). Rows: node rows, linking
 * rows, usage rows. GLPK is silenced (msg_lev off, terminal output off while it runs), except
 * when the caller polls (sg_ilp_run.poll): then the root simplex's progress display, whose
 * rhythm is wall-clock, is routed to the poll and printed nowhere, the one way to be called
 * back during a long LP. Its time limits are in milliseconds and are clamped to the caller's
 * deadlines.
 *
 * Threads and GLPK errors: GLPK keeps its environment per thread (thread-local storage), so
 * solves on different threads do not meet. Every public entry point here runs GLPK under an
 * error hook that jumps back to it (glp_error would otherwise abort the process): the
 * thread's GLPK environment is then freed, as GLPK requires, and the call returns
 * SP_EINTERNAL naming GLPK; memory the interrupted GLPK call held in our own arrays may be
 * lost (it cannot happen on valid input). sp_sg_ilp_release_env() frees the thread's
 * environment when no program is alive (the solver calls it at the end of its ILP phase).
 */
#include "solver/sg_ilp_int.h"

#include <float.h>
#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "ir/grow.h"
#include "solver/sg_heuristic_int.h"
#include "solver/sg_rows_int.h"

struct sg_ilp {
  const sg_prob *p;
  glp_prob *lp;
  int nn;
  int *nodes;          /* [nn] compact nodes of this part */
  int **xcol;          /* [p->n][k] column of each strategy (NULL: not in the part) */
  int ne;
  int *edges;          /* [ne] compact edges of this part */
  int **ycol;          /* [p->m] pair columns (NULL if the edge is not in the part) */
  int64_t slack;        /* variables dearer than their cheapest sibling by more are left out */
  const sg_excess *ex;  /* reduced costs (or NULL) and the room they must fit in */
  double room;
  sg_ilp_size size;
};

/* A growable triplet list for glp_load_matrix (1-based). */
typedef struct triplets {
  int *ia, *ja;
  double *ar;
  int64_t n, cap;
  bool oom;
} triplets;

static void trip_add(triplets *t, int i, int j, double v) {
  if (t->oom) return;
  if (t->n + 1 >= t->cap) {
    /* Three arrays of one capacity, each grown from it to the same size (GLPK's are 1-based:
     * room for index n + 1). */
    size_t last = t->n + 1, ci = t->cap, cj = t->cap, ca = t->cap;
    if (sp_grow_z((void **)&t->ia, &ci, last, sizeof *t->ia) ||
        sp_grow_z((void **)&t->ja, &cj, last, sizeof *t->ja) ||
        sp_grow_z((void **)&t->ar, &ca, last, sizeof *t->ar)) {
      t->oom = true;
      return;
    }
    t->cap = ci;
  }
  t->n++;
  t->ia[t->n] = i;
  t->ja[t->n] = j;
  t->ar[t->n] = v;
}

static void trip_free(triplets *t) {
  free(t->ia);
  free(t->ja);
  free(t->ar);
}

/* ------------------------------------------------------------------ usage rows */

/* The usage rows of the part (see sg_rows_int.h), with or without their lists. */
static int part_rows(const sg_ilp *q, bool plain, bool lists, sg_rows *rows) {
  const sg_prob *p = q->p;
  uint8_t *in = calloc((size_t)p->n + 1, 1);
  if (!in) return SP_ENOMEM;
  for (int a = 0; a < q->nn; a++) in[q->nodes[a]] = 1;
  int rc = sp_sg_rows_build(p, in, plain, lists, rows);
  free(in);
  return rc;
}

/* Adds the usage rows. */
static void add_usage_rows(sg_ilp *q, const sg_rows *rows, triplets *tr) {
  const sg_prob *p = q->p;
  for (int r = 0; r < rows->n; r++) {
    int row = glp_add_rows(q->lp, 1);
    char name[48];
    snprintf(name, sizeof name, "mem_t%d", rows->t[r]);
    glp_set_row_name(q->lp, row, name);
    glp_set_row_bnds(q->lp, row, GLP_UP, 0.0, (double)rows->cap[r]);
    for (int a = rows->off[r]; a < rows->off[r + 1]; a++) {
      int g = rows->seg[a], i = p->seg_node[g];
      for (int k = 0; k < p->k[i]; k++)
        if (p->seg[g].use[k] && q->xcol[i][k])
          trip_add(tr, row, q->xcol[i][k], (double)p->seg[g].use[k]);
    }
  }
}

/* ------------------------------------------------------------------ GLPK errors */

typedef struct glpk_guard {
  jmp_buf jb;
} glpk_guard;

static void on_glpk_error(void *info) { longjmp(((glpk_guard *)info)->jb, 1); }

/* After a GLPK error: the thread's environment (and every GLPK object in it) is gone. */
static int glpk_failed(sg_ilp *q, const char *what, sp_err *err) {
  glp_error_hook(NULL, NULL);
  glp_free_env();
  if (q) q->lp = NULL;
  return sp_err_set(err, SP_EINTERNAL, "GLPK failed while %s (internal error)", what);
}

void sp_sg_ilp_release_env(void) { glp_free_env(); }

/* ------------------------------------------------------------------ building */

void sp_sg_ilp_free(sg_ilp *q) {
  if (!q) return;
  if (q->lp) glp_delete_prob(q->lp);
  if (q->ycol)
    for (int e = 0; e < q->p->m; e++) free(q->ycol[e]);
  free(q->ycol);
  if (q->xcol)
    for (int i = 0; i < q->p->n; i++) free(q->xcol[i]);
  free(q->nodes);
  free(q->xcol);
  free(q->edges);
  free(q);
}

sg_ilp_size sp_sg_ilp_size(const sg_ilp *q) { return q->size; }

static int64_t estimate_nonzeros(const sg_prob *p, const sg_ilp *q) {
  int64_t nz = 0;
  for (int a = 0; a < q->nn; a++) nz += 2 * p->k[q->nodes[a]];
  for (int b = 0; b < q->ne; b++) {
    int e = q->edges[b];
    nz += 2 * (int64_t)p->k[p->ea[e]] * p->k[p->eb[e]];
  }
  return nz;
}

/* Cheapest node cost of node i and cheapest entry of edge e. */
static int64_t node_min(const sg_prob *p, int i) {
  int64_t mn = INT64_MAX;
  for (int k = 0; k < p->k[i]; k++) if (p->cost[i][k] < mn) mn = p->cost[i][k];
  return mn;
}

static int64_t edge_min(const sg_prob *p, int e) {
  int64_t mn = INT64_MAX, n = (int64_t)p->k[p->ea[e]] * p->k[p->eb[e]];
  for (int64_t v = 0; v < n; v++) if (p->c[e][v] < mn) mn = p->c[e][v];
  return mn;
}

/* Gives every variable its column: nonzero costs first (pass 0), then zero costs (pass 1).
 * A variable whose cost exceeds its cheapest sibling's by more than the slack cannot be in
 * a plan cheaper than the incumbent (every other choice costs at least its cheapest) and
 * gets no column; neither do pairs whose strategies have none. */
static int number_columns(sg_ilp *q) {
  const sg_prob *p = q->p;
  /* Which node variables exist (-1 marks them until they are numbered). */
  for (int a = 0; a < q->nn; a++) {
    int i = q->nodes[a];
    int64_t mn = node_min(p, i);
    for (int k = 0; k < p->k[i]; k++) {
      bool ok = p->cost[i][k] - mn <= q->slack;
      if (q->ex && q->ex->node[q->ex->noff[i] + k] > q->room) ok = false;
      q->xcol[i][k] = ok ? -1 : 0;
    }
  }
  for (int b = 0; b < q->ne; b++) {
    int e = q->edges[b], kj = p->k[p->eb[e]];
    int64_t n = (int64_t)p->k[p->ea[e]] * kj, mn = edge_min(p, e);
    const int *xa = q->xcol[p->ea[e]], *xb = q->xcol[p->eb[e]];
    for (int64_t v = 0; v < n; v++) {
      int64_t c = p->c[e][v];
      bool ok = c < SP_SG_FORBIDDEN && c - mn <= q->slack && xa[v / kj] && xb[v % kj];
      if (ok && q->ex && q->ex->pair[q->ex->poff[e] + v] > q->room) ok = false;
      q->ycol[e][v] = ok ? -1 : 0;
    }
  }
  int col = 1;
  for (int pass = 0; pass < 2; pass++) {
    for (int a = 0; a < q->nn; a++) {
      int i = q->nodes[a];
      for (int k = 0; k < p->k[i]; k++)
        if (q->xcol[i][k] < 0 && (p->cost[i][k] == 0) == (pass == 1)) q->xcol[i][k] = col++;
    }
    for (int b = 0; b < q->ne; b++) {
      int e = q->edges[b];
      int64_t n = (int64_t)p->k[p->ea[e]] * p->k[p->eb[e]];
      for (int64_t v = 0; v < n; v++)
        if (q->ycol[e][v] < 0 && (p->c[e][v] == 0) == (pass == 1)) q->ycol[e][v] = col++;
    }
  }
  return col - 1;
}

/* How much dearer than the trivial bound the incumbent `ub` is. */
static int64_t compute_slack(const sg_ilp *q, int64_t ub) {
  const sg_prob *p = q->p;
  if (ub == INT64_MAX) return INT64_MAX;
  int64_t tb = 0;
  for (int a = 0; a < q->nn; a++) tb += node_min(p, q->nodes[a]);
  for (int b = 0; b < q->ne; b++) tb += edge_min(p, q->edges[b]);
  return ub - tb > 0 ? ub - tb : 0;
}

static void name_columns(sg_ilp *q) {
  const sg_prob *p = q->p;
  char name[64];
  for (int a = 0; a < q->nn; a++) {
    int i = q->nodes[a];
    for (int k = 0; k < p->k[i]; k++) {
      int c = q->xcol[i][k];
      if (!c) continue;
      snprintf(name, sizeof name, "x%d_%d", i, k);
      glp_set_col_name(q->lp, c, name);
      glp_set_col_kind(q->lp, c, GLP_BV);
      glp_set_obj_coef(q->lp, c, (double)p->cost[i][k]);
    }
  }
  for (int b = 0; b < q->ne; b++) {
    int e = q->edges[b], kj = p->k[p->eb[e]];
    int64_t n = (int64_t)p->k[p->ea[e]] * kj;
    for (int64_t v = 0; v < n; v++) {
      int c = q->ycol[e][v];
      if (!c) continue;
      snprintf(name, sizeof name, "y%d_%d_%d", e, (int)(v / kj), (int)(v % kj));
      glp_set_col_name(q->lp, c, name);
      glp_set_col_bnds(q->lp, c, GLP_DB, 0.0, 1.0);
      glp_set_obj_coef(q->lp, c, (double)p->c[e][v]);
    }
  }
}

static int build(const sg_prob *p, const int *nodes, int nn, bool plain, int64_t max_nonzeros,
                 int64_t ub, const sg_excess *ex, sg_ilp **out, sp_err *err);

int sp_sg_ilp_build(const sg_prob *p, const int *nodes, int nn, bool plain,
                    int64_t max_nonzeros, int64_t ub, const sg_excess *ex, sg_ilp **out,
                    sp_err *err) {
  glpk_guard g;
  *out = NULL;
  glp_error_hook(on_glpk_error, &g);
  if (setjmp(g.jb)) return glpk_failed(NULL, "building the ILP", err);
  int rc = build(p, nodes, nn, plain, max_nonzeros, ub, ex, out, err);
  glp_error_hook(NULL, NULL);
  return rc;
}

/* The part's nodes (all of them when `nodes` is NULL), a strategy-column array per node and
 * the edges between two of its nodes. SP_ENOMEM, or SP_OK. */
static int select_part(sg_ilp *q, const int *nodes, int nn) {
  const sg_prob *p = q->p;
  q->nn = nodes ? nn : p->n;
  q->nodes = malloc(sizeof(int) * ((size_t)q->nn + 1));
  q->xcol = calloc((size_t)p->n + 1, sizeof(int *));
  q->edges = malloc(sizeof(int) * ((size_t)p->m + 1));
  q->ycol = calloc((size_t)p->m + 1, sizeof(int *));
  if (!q->nodes || !q->xcol || !q->edges || !q->ycol) return SP_ENOMEM;
  for (int a = 0; a < q->nn; a++) {
    int i = nodes ? nodes[a] : a;
    q->nodes[a] = i;
    q->xcol[i] = calloc((size_t)p->k[i], sizeof(int));
    if (!q->xcol[i]) return SP_ENOMEM;
  }
  for (int e = 0; e < p->m; e++)
    if (q->xcol[p->ea[e]] && q->xcol[p->eb[e]]) q->edges[q->ne++] = e;
  return SP_OK;
}

/* SP_ELIMIT when the program would have more than max_nonzeros (> 0) nonzeros, counted
 * before anything large is built: the rows' lists alone can be huge. */
static int check_nonzeros(const sg_ilp *q, bool plain, int64_t max_nonzeros, sp_err *err) {
  if (max_nonzeros <= 0) return SP_OK;
  sg_rows rows;
  if (part_rows(q, plain, false, &rows) != SP_OK)
    return sp_err_set(err, SP_ENOMEM, "out of memory building the ILP");
  int64_t nz = estimate_nonzeros(q->p, q) + rows.entries;
  sp_sg_rows_free(&rows);
  if (nz > max_nonzeros)
    return sp_err_set(err, SP_ELIMIT, "the ILP would have %lld nonzeros, more than %lld",
                      (long long)nz, (long long)max_nonzeros);
  return SP_OK;
}

/* A pair-column array per edge of the part. SP_ENOMEM, or SP_OK. */
static int alloc_pair_columns(sg_ilp *q) {
  const sg_prob *p = q->p;
  for (int b = 0; b < q->ne; b++) {
    int e = q->edges[b];
    q->ycol[e] = calloc((size_t)p->k[p->ea[e]] * (size_t)p->k[p->eb[e]], sizeof(int));
    if (!q->ycol[e]) return SP_ENOMEM;
  }
  return SP_OK;
}

/* With reduced costs and an incumbent: this part's share of the dual bound. Plans of it
 * cheaper than ub use no variable whose excess is above ub - share (a hair more, for
 * rounding). */
static void set_room(sg_ilp *q, int64_t ub, const sg_excess *ex) {
  if (!ex || ub == INT64_MAX) return;
  double share = 0;
  for (int a = 0; a < q->nn; a++) share += ex->nshare[q->nodes[a]];
  for (int b = 0; b < q->ne; b++) share += ex->eshare[q->edges[b]];
  q->ex = ex;
  q->room = (double)ub - share + 1e-7 * fabs((double)ub) + 1e-6;
}

/* A row named `name` whose value is fixed to `value`; returns its index. */
static int add_fixed_row(glp_prob *lp, const char *name, double value) {
  int row = glp_add_rows(lp, 1);
  glp_set_row_name(lp, row, name);
  glp_set_row_bnds(lp, row, GLP_FX, value, value);
  return row;
}

/* Node rows: each node of the part takes exactly one of its strategies. */
static void add_node_rows(sg_ilp *q, triplets *tr) {
  const sg_prob *p = q->p;
  char name[64];
  for (int a = 0; a < q->nn; a++) {
    int i = q->nodes[a];
    snprintf(name, sizeof name, "one_%d", i);
    int row = add_fixed_row(q->lp, name, 1.0);
    for (int k = 0; k < p->k[i]; k++)
      if (q->xcol[i][k]) trip_add(tr, row, q->xcol[i][k], 1.0);
  }
}

/* The linking rows of one side of edge e, node i (`side` "la" or "lb"): a row per strategy
 * of i that has a column, fixed at 0 with -x[i][x] in it (the pairs are added after);
 * rows[x] gets its index, 0 without a column. */
static void add_side_rows(sg_ilp *q, const char *side, int e, int i, int *rows, triplets *tr) {
  char name[64];
  for (int x = 0; x < q->p->k[i]; x++) {
    rows[x] = 0;
    if (!q->xcol[i][x]) continue;
    snprintf(name, sizeof name, "%s%d_%d", side, e, x);
    rows[x] = add_fixed_row(q->lp, name, 0.0);
    trip_add(tr, rows[x], q->xcol[i][x], -1.0);
  }
}

/* Linking rows of edge e: for each strategy with a column on either side, the pairs that use
 * it sum to it. One row per strategy that has a column (the others are 0, and so are their
 * pairs). `ra`, `rb`: scratch for the rows of each side. */
static void add_edge_rows(sg_ilp *q, int e, int *ra, int *rb, triplets *tr) {
  const sg_prob *p = q->p;
  int ki = p->k[p->ea[e]], kj = p->k[p->eb[e]];
  add_side_rows(q, "la", e, p->ea[e], ra, tr);
  add_side_rows(q, "lb", e, p->eb[e], rb, tr);
  for (int x = 0; x < ki; x++)
    for (int y = 0; y < kj; y++) {
      int cc = q->ycol[e][(int64_t)x * kj + y];
      if (!cc) continue;
      trip_add(tr, ra[x], cc, 1.0);
      trip_add(tr, rb[y], cc, 1.0);
    }
}

/* The linking rows of every edge of the part. SP_ENOMEM, or SP_OK. */
static int add_linking_rows(sg_ilp *q, triplets *tr) {
  const sg_prob *p = q->p;
  int maxk = 1;
  for (int a = 0; a < q->nn; a++)
    if (p->k[q->nodes[a]] > maxk) maxk = p->k[q->nodes[a]];
  int *rowbuf = malloc(sizeof(int) * 2 * (size_t)maxk);
  if (!rowbuf) return SP_ENOMEM;
  for (int b = 0; b < q->ne; b++) {
    int e = q->edges[b];
    add_edge_rows(q, e, rowbuf, rowbuf + p->k[p->ea[e]], tr);
  }
  free(rowbuf);
  return SP_OK;
}

/* The program of one part: columns (number_columns), node, linking and usage rows, loaded
 * into GLPK. */
static int build(const sg_prob *p, const int *nodes, int nn, bool plain, int64_t max_nonzeros,
                 int64_t ub, const sg_excess *ex, sg_ilp **out, sp_err *err) {
  *out = NULL;
  sg_ilp *q = calloc(1, sizeof *q);
  triplets tr = {0};
  sg_rows rows;
  bool have_rows = false;
  int rc = SP_OK;
  if (!q) return sp_err_set(err, SP_ENOMEM, "out of memory building the ILP");
  q->p = p;
  if (select_part(q, nodes, nn)) goto oom;
  if ((rc = check_nonzeros(q, plain, max_nonzeros, err))) goto fail;
  if (part_rows(q, plain, true, &rows) != SP_OK) goto oom;
  have_rows = true;
  if (alloc_pair_columns(q)) goto oom;
  q->slack = compute_slack(q, ub);
  set_room(q, ub, ex);
  q->lp = glp_create_prob();
  glp_set_obj_dir(q->lp, GLP_MIN);
  int ncols = number_columns(q);
  if (ncols > 0) glp_add_cols(q->lp, ncols);
  name_columns(q);
  add_node_rows(q, &tr);
  if (add_linking_rows(q, &tr)) goto oom;
  add_usage_rows(q, &rows, &tr);
  int nmem = rows.n;
  if (tr.oom) goto oom;
  if (tr.n > INT32_MAX - 1) {
    rc = sp_err_set(err, SP_ELIMIT, "the ILP has more than 2^31 nonzeros");
    goto fail;
  }
  glp_load_matrix(q->lp, (int)tr.n, tr.ia, tr.ja, tr.ar);
  q->size = (sg_ilp_size){glp_get_num_cols(q->lp), glp_get_num_rows(q->lp), nmem, tr.n};
  trip_free(&tr);
  sp_sg_rows_free(&rows);
  *out = q;
  return SP_OK;
oom:
  rc = sp_err_set(err, SP_ENOMEM, "out of memory building the ILP");
fail:
  trip_free(&tr);
  if (have_rows) sp_sg_rows_free(&rows);
  sp_sg_ilp_free(q);
  return rc;
}

static int write_lp(sg_ilp *q, int64_t offset, const char *path, sp_err *err);

int sp_sg_ilp_write_lp(sg_ilp *q, int64_t offset, const char *path, sp_err *err) {
  glpk_guard g;
  glp_error_hook(on_glpk_error, &g);
  if (setjmp(g.jb)) return glpk_failed(q, "writing the LP file", err);
  int rc = write_lp(q, offset, path, err);
  glp_error_hook(NULL, NULL);
  return rc;
}

static int write_lp(sg_ilp *q, int64_t offset, const char *path, sp_err *err) {
  /* The constant goes in as a column fixed at 1 (GLPK would write it only as a comment,
   * and an empty problem not at all): any LP reader then reports the full cost. */
  int col = glp_add_cols(q->lp, 1), row = glp_add_rows(q->lp, 1);
  glp_set_col_name(q->lp, col, "offset");
  glp_set_col_bnds(q->lp, col, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(q->lp, col, (double)offset);
  glp_set_row_name(q->lp, row, "fix_offset");
  glp_set_row_bnds(q->lp, row, GLP_FX, 1.0, 1.0);
  int ind[2] = {0, col};
  double val[2] = {0, 1.0};
  glp_set_mat_row(q->lp, row, 1, ind, val);
  int was = glp_term_out(GLP_OFF);
  int rc = glp_write_lp(q->lp, NULL, path);
  glp_term_out(was);
  glp_del_rows(q->lp, 1, (int[]){0, row});
  glp_del_cols(q->lp, 1, (int[]){0, col});
  if (rc != 0) return sp_err_set(err, SP_EIO, "%s: cannot write the LP file", path);
  return SP_OK;
}

/* ------------------------------------------------------------------ solving */

typedef struct cb_state {
  sg_ilp *q;
  sg_ilp_run *r;
  double *x;        /* [cols + 1] the start plan as column values, or NULL */
  bool offered;
  int *plan;        /* whole compact plan being reported */
  double bound;
} cb_state;

/* Column values of a plan (node and pair indicators). */
static void plan_to_x(const sg_ilp *q, const int *plan, double *x) {
  const sg_prob *p = q->p;
  int ncols = glp_get_num_cols(q->lp);
  memset(x, 0, sizeof(double) * ((size_t)ncols + 1));
  for (int a = 0; a < q->nn; a++) {
    int i = q->nodes[a];
    x[q->xcol[i][plan[i]]] = 1.0;
  }
  for (int b = 0; b < q->ne; b++) {
    int e = q->edges[b];
    int c = q->ycol[e][(int64_t)plan[p->ea[e]] * p->k[p->eb[e]] + plan[p->eb[e]]];
    if (c) x[c] = 1.0;
  }
}

/* The part's plan from GLPK's MIP solution (argmax per node). */
static void mip_to_plan(const sg_ilp *q, int *plan) {
  const sg_prob *p = q->p;
  for (int a = 0; a < q->nn; a++) {
    int i = q->nodes[a], best = 0;
    double bv = -1;
    for (int k = 0; k < p->k[i]; k++) {
      if (!q->xcol[i][k]) continue;
      double v = glp_mip_col_val(q->lp, q->xcol[i][k]);
      if (v > bv) { bv = v; best = k; }
    }
    plan[i] = best;
  }
}

static void callback(glp_tree *tree, void *info) {
  cb_state *s = info;
  /* GLPK's own time limit is checked between nodes but not always honoured (node LPs
   * and cut rounds can run past it): stop explicitly at the deadline. */
  if ((s->r->deadline > 0 && sp_clock_now() >= s->r->deadline) || sp_run_ctl_stopped(s->r->ctl)) {
    glp_ios_terminate(tree);
    return;
  }
  if (s->r->poll) s->r->poll(s->r->poll_ctx);
  if (s->r->node_limit > 0) {
    int active, nodes, total;
    glp_ios_tree_size(tree, &active, &nodes, &total);
    if (total > s->r->node_limit) {
      glp_ios_terminate(tree);
      return;
    }
  }
  switch (glp_ios_reason(tree)) {
    case GLP_IHEUR:
      if (s->x && !s->offered) {
        s->offered = true;
        glp_ios_heur_sol(tree, s->x);
      }
      break;
    case GLP_IBINGO:
      if (s->r->on_plan) {
        mip_to_plan(s->q, s->plan);
        s->r->on_plan(s->r->ctx, s->plan, (int64_t)llround(glp_mip_obj_val(s->q->lp)));
      }
      break;
    case GLP_ISELECT: {
      int best = glp_ios_best_node(tree);
      if (best) {
        double b = glp_ios_node_bound(tree, best);
        if (b > s->bound) s->bound = b;
      }
      break;
    }
    default:
      break;
  }
}

/* A lower bound that holds whatever GLPK's tolerances did: any duals give the bound
 * pi.b + sum_j min(0, d_j) * u_j (columns are in [0, u_j]) once the duals of <= rows are
 * clipped to <= 0; computed in long double from the duals of the last LP. Fills dj with
 * the reduced costs. */
static double safe_bound(glp_prob *lp, double *dj) {
  int m = glp_get_num_rows(lp), n = glp_get_num_cols(lp);
  double *pi = malloc(sizeof(double) * ((size_t)m + 1));
  int *ind = malloc(sizeof(int) * ((size_t)m + 1));
  double *val = malloc(sizeof(double) * ((size_t)m + 1));
  if (!pi || !ind || !val) {
    free(pi); free(ind); free(val);
    return -HUGE_VAL;
  }
  long double lb = 0;
  for (int i = 1; i <= m; i++) {
    pi[i] = glp_get_row_dual(lp, i);
    int t = glp_get_row_type(lp, i);
    if (t == GLP_UP && pi[i] > 0) pi[i] = 0;
    lb += (long double)pi[i] * (t == GLP_UP ? glp_get_row_ub(lp, i) : glp_get_row_lb(lp, i));
  }
  for (int j = 1; j <= n; j++) {
    int len = glp_get_mat_col(lp, j, ind, val);
    long double d = glp_get_obj_coef(lp, j);
    for (int k = 1; k <= len; k++) d -= (long double)pi[ind[k]] * val[k];
    dj[j] = (double)d;
    if (d < 0) lb += d * glp_get_col_ub(lp, j);
  }
  free(pi);
  free(ind);
  free(val);
  return (double)(lb - 1e-9L * (1.0L + fabsl(lb)));
}

/* Fixes at 0 the columns whose reduced cost alone exceeds `room` (the incumbent minus one
 * minus the bound): with them at 1, no plan beats the incumbent. */
static int fix_by_reduced_cost(glp_prob *lp, const double *dj, double room) {
  int n = glp_get_num_cols(lp), fixed = 0;
  for (int j = 1; j <= n; j++)
    if (dj[j] > room + 1e-6 && glp_get_col_stat(lp, j) != GLP_BS && glp_get_col_ub(lp, j) > 0) {
      glp_set_col_bnds(lp, j, GLP_FX, 0.0, 0.0);
      fixed++;
    }
  return fixed;
}

static int ms_until(double deadline) {
  if (deadline <= 0) return INT32_MAX;
  double ms = (deadline - sp_clock_now()) * 1000.0;
  if (ms < 1) return 1;
  return ms > INT32_MAX ? INT32_MAX : (int)ms;
}

static int solve(sg_ilp *q, sg_ilp_run *r, int *plan, sp_err *err);

/* The snapshot check while GLPK works without calling back (the root LP's simplex): its
 * progress display, every POLL_MS, comes here and goes no further. */
#define POLL_MS 100

static int poll_on_output(void *info, const char *text) {
  (void)text;
  const sg_ilp_run *r = info;
  r->poll(r->poll_ctx);
  return 1;   /* nothing is printed */
}

int sp_sg_ilp_solve(sg_ilp *q, sg_ilp_run *r, int *plan, sp_err *err) {
  glpk_guard g;
  glp_error_hook(on_glpk_error, &g);
  if (setjmp(g.jb)) return glpk_failed(q, "solving the ILP", err);   /* frees the env, hook too */
  /* Scaling and basis construction print regardless: output goes nowhere, or, with a poll,
   * to it (the display changes nothing in what GLPK computes). */
  int was = glp_term_out(r->poll ? GLP_ON : GLP_OFF);
  if (r->poll) glp_term_hook(poll_on_output, r);
  int rc = solve(q, r, plan, err);
  if (r->poll) glp_term_hook(NULL, NULL);
  glp_term_out(was);
  glp_error_hook(NULL, NULL);
  return rc;
}

/* The warm start: s->plan and `plan` start as r->start (s->plan as zeros without one); with
 * a start, s->x gets it as column values and *start_cost its cost (HUGE_VAL without). The
 * caller frees s->plan and s->x. */
static int take_start(const sg_ilp *q, const sg_ilp_run *r, cb_state *s, int *plan,
                      double *start_cost, sp_err *err) {
  const sg_prob *p = q->p;
  int ncols = glp_get_num_cols(q->lp);
  *start_cost = HUGE_VAL;
  s->plan = malloc(sizeof(int) * ((size_t)p->n + 1));
  if (!s->plan) return sp_err_set(err, SP_ENOMEM, "out of memory solving the ILP");
  if (r->start) memcpy(s->plan, r->start, sizeof(int) * (size_t)p->n);
  else memset(s->plan, 0, sizeof(int) * (size_t)p->n);
  if (!r->start) return SP_OK;
  memcpy(plan, r->start, sizeof(int) * (size_t)p->n);
  s->x = malloc(sizeof(double) * ((size_t)ncols + 1));
  if (!s->x) return sp_err_set(err, SP_ENOMEM, "out of memory");
  plan_to_x(q, r->start, s->x);
  *start_cost = 0;
  for (int j = 1; j <= ncols; j++) *start_cost += s->x[j] * glp_get_obj_coef(q->lp, j);
  return SP_OK;
}

/* The dual simplex's options for the root relaxation (the time limit is set later). */
static void root_lp_options(glp_smcp *sm, const sg_ilp_run *r, double start_cost) {
  glp_init_smcp(sm);
  sm->msg_lev = r->poll ? GLP_MSG_ON : GLP_MSG_OFF;   /* a poll reads the progress display */
  sm->out_frq = POLL_MS;
  sm->meth = GLP_DUALP;
  sm->presolve = GLP_OFF;
  /* The long-step ratio test: the root LPs are highly degenerate 0/1 problems, where it
   * needs far fewer iterations than Harris' test. Root LP iterations, Harris -> long-step:
   * 8-layer GPT under a 15 GB limit 18,361 -> 6,884; with the pruning of a one-round
   * Lagrangian bound: 8-layer GPT > 22,338 (unsolved) -> 10,010, 1-layer GPT 11,511 ->
   * 5,129, IOPDDL G 3,419 -> 2,684, B 4,171 -> 3,618. A standard or incumbent-based
   * starting basis, primal simplex or Dantzig pricing did no better. */
  sm->r_test = GLP_RT_FLIP;
  if (r->lp_iter_limit > 0) sm->it_lim = r->lp_iter_limit;
  if (r->start) sm->obj_ul = start_cost - 0.5;
}

/* Root relaxation: dual simplex with a time limit; reaching the incumbent's cost
 * (`start_cost`) proves the incumbent optimal. Sets r's LP outcome (lp_solved, bound,
 * optimal, infeasible, timed_out, t_lp) and s->bound; *branch tells whether branch and bound
 * should follow (an optimal LP basis that did not settle the question). */
static int root_relaxation(sg_ilp *q, sg_ilp_run *r, cb_state *s, double start_cost,
                           bool *branch, sp_err *err) {
  int ncols = glp_get_num_cols(q->lp);
  *branch = false;
  double t0 = sp_clock_now();
  glp_smcp sm;
  root_lp_options(&sm, r, start_cost);
  glp_scale_prob(q->lp, GLP_SF_AUTO);
  glp_adv_basis(q->lp, 0);
  sm.tm_lim = ms_until(r->lp_deadline); /* what is left after scaling and the basis */
  if (r->lp_deadline > 0 && sp_clock_now() >= r->lp_deadline) {
    r->t_lp = sp_clock_now() - t0;
    r->timed_out = true;
    return SP_OK;
  }
  int ret = glp_simplex(q->lp, &sm);
  r->t_lp = sp_clock_now() - t0;
  int st = glp_get_status(q->lp);
  if (ret == GLP_EOBJUL) {
    /* The dual objective passed the incumbent's cost. Check it with the safe bound of the
     * current duals: if it holds, nothing better exists; if rounding fooled GLPK, finish
     * the LP normally. */
    double *dj = malloc(sizeof(double) * ((size_t)ncols + 1));
    double sb = dj ? safe_bound(q->lp, dj) : -HUGE_VAL;
    free(dj);
    if (sb > start_cost - 1) {
      r->bound = start_cost;
      r->optimal = true;
      return SP_OK;
    }
    sm.obj_ul = DBL_MAX;
    sm.tm_lim = ms_until(r->lp_deadline);
    ret = glp_simplex(q->lp, &sm);
    r->t_lp = sp_clock_now() - t0;
    st = glp_get_status(q->lp);
  }
  if (ret == 0 && st == GLP_NOFEAS) {
    r->infeasible = true;
    return SP_OK;
  }
  if (ret != 0 || st != GLP_OPT) {
    r->timed_out = ret == GLP_ETMLIM;
    return SP_OK;
  }
  r->lp_solved = true;
  double *dj = malloc(sizeof(double) * ((size_t)ncols + 1));
  if (!dj) return sp_err_set(err, SP_ENOMEM, "out of memory");
  r->bound = safe_bound(q->lp, dj);
  s->bound = r->bound;
  if (r->has_plan && r->bound > start_cost - 1) {
    free(dj);
    r->optimal = true;
    return SP_OK;
  }
  if (r->has_plan) {
    int fixed = fix_by_reduced_cost(q->lp, dj, start_cost - 1 - r->bound);
    if (fixed > 0) { /* re-establish the optimal basis GLPK wants before branching */
      sm.tm_lim = ms_until(r->deadline);
      sm.obj_ul = DBL_MAX;
      glp_simplex(q->lp, &sm);
    }
  }
  free(dj);
  if (glp_get_status(q->lp) != GLP_OPT) {
    r->timed_out = true;
    return SP_OK;
  }
  *branch = true;
  return SP_OK;
}

/* Branch and bound from the root's optimal basis, under r->deadline and r->gap; a plan it
 * finds no dearer than r's goes to `plan`. */
static void branch_and_bound(sg_ilp *q, sg_ilp_run *r, cb_state *s, int *plan) {
  double t0 = sp_clock_now();
  glp_iocp io;
  glp_init_iocp(&io);
  io.msg_lev = GLP_MSG_OFF;
  io.presolve = GLP_OFF;
  io.tm_lim = ms_until(r->deadline);
  io.mip_gap = r->gap;
  io.cb_func = callback;
  io.cb_info = s;
  /* Pseudocost branching initialises its costs by solving an LP per candidate inside
   * glp_intopt, without calling back: when one LP takes a large share of the time left (IOPDDL
   * V: a 164 s root LP, then 201 s of branching against a 135 s budget), that overruns the
   * deadline. Then branch with the Driebeck-Tomlin heuristic, which needs no extra LPs. */
  double left = r->deadline > 0 ? r->deadline - sp_clock_now() : HUGE_VAL;
  io.br_tech = r->t_lp * 10 < left ? GLP_BR_PCH : GLP_BR_DTH;
  io.bt_tech = GLP_BT_BLB;
  int ret = glp_intopt(q->lp, &io);
  r->t_ilp = sp_clock_now() - t0;
  int mst = glp_mip_status(q->lp);
  if (mst == GLP_OPT || mst == GLP_FEAS) {
    int64_t c = (int64_t)llround(glp_mip_obj_val(q->lp));
    if (!r->has_plan || c <= r->cost) {
      mip_to_plan(q, plan);
      r->cost = c;
      r->has_plan = true;
    }
  }
  if (mst == GLP_NOFEAS) r->infeasible = true;
  if (ret == 0 && mst == GLP_OPT) {
    r->optimal = true;
    /* optimal within mip_gap: the bound is the best node bound GLPK saw, or the cost */
    r->bound = r->gap > 0 ? (s->bound > r->bound ? s->bound : r->bound) : (double)r->cost;
  } else {
    r->timed_out = ret == GLP_ETMLIM;
    if (s->bound > r->bound) r->bound = s->bound;
  }
}

static int solve(sg_ilp *q, sg_ilp_run *r, int *plan, sp_err *err) {
  r->lp_solved = r->infeasible = r->optimal = r->timed_out = r->has_plan = false;
  r->bound = -HUGE_VAL;
  r->t_lp = r->t_ilp = 0;
  cb_state s = {.q = q, .r = r, .bound = -HUGE_VAL};
  double start_cost;
  bool branch = false;
  int rc = take_start(q, r, &s, plan, &start_cost, err);
  if (!rc && r->start) {
    r->has_plan = true;
    r->cost = (int64_t)llround(start_cost);
  }
  if (!rc) rc = root_relaxation(q, r, &s, start_cost, &branch, err);
  if (!rc && branch) branch_and_bound(q, r, &s, plan);
  if (!rc && r->optimal && r->has_plan && r->gap == 0) r->bound = (double)r->cost;
  free(s.x);
  free(s.plan);
  return rc;
}
