/*
 * sg_rows.c - the usage rows of a compact model (see sg_rows_int.h).
 *
 * One sweep over time with the segments sorted by start keeps the live set; duplicate rows
 * are found with a hash table keyed on (capacity, live set).
 */
#include "solver/sg_rows_int.h"

#include <stdlib.h>
#include <string.h>

#include "ir/grow.h"

typedef struct seg_ref {
  int t0, t1, seg;
} seg_ref;

static int cmp_seg_t0(const void *x, const void *y) {
  const seg_ref *a = x, *b = y;
  if (a->t0 != b->t0) return (a->t0 > b->t0) - (a->t0 < b->t0);
  return (a->seg > b->seg) - (a->seg < b->seg);
}

static int cmp_int(const void *x, const void *y) {
  int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* Marks the times that get a row (see the header for the rules). */
static int select_times(const sg_prob *p, const seg_ref *s, int ns, bool plain, uint8_t *sel) {
  int T = p->T;
  /* Per time: segments starting, and the largest usage that starts or ends there. */
  int *starts = calloc((size_t)T + 2, sizeof(int));
  int64_t *up = calloc((size_t)T + 2, sizeof(int64_t)), *down = calloc((size_t)T + 2, sizeof(int64_t));
  uint8_t *keep = malloc((size_t)T + 1);
  int rc = SP_OK;
  if (!starts || !up || !down || !keep) { rc = SP_ENOMEM; goto out; }
  for (int k = 0; k < ns; k++) {
    const sg_seg *g = &p->seg[s[k].seg];
    int64_t mx = 0;
    for (int j = 0; j < p->k[p->seg_node[s[k].seg]]; j++) if (g->use[j] > mx) mx = g->use[j];
    starts[g->t0]++;
    up[g->t0] += mx;
    down[g->t1] += mx;
  }
  int64_t run = 0;
  for (int t = 0; t < T; t++) {
    run += up[t] - down[t];
    sel[t] = plain ? starts[t] > 0 : run > p->cap[t];
  }
  if (!plain) {
    /* Row t is implied by row t' when cap(t') plus the largest usage of the segments live
     * at t but not at t' fits in cap(t) (least usages are 0 after normalisation). With t'
     * = t + 1 those are the segments ending at t + 1; with t' = t - 1, those starting at t
     * (strictly, so that two equal rows do not drop each other). */
    for (int t = 0; t < T; t++) {
      keep[t] = sel[t];
      if (!sel[t]) continue;
      if (t + 1 < T && sel[t + 1] && p->cap[t + 1] + down[t + 1] <= p->cap[t]) keep[t] = 0;
      if (t > 0 && sel[t - 1] && p->cap[t - 1] + up[t] < p->cap[t]) keep[t] = 0;
    }
    memcpy(sel, keep, (size_t)T);
  }
out:
  free(starts);
  free(up);
  free(down);
  free(keep);
  return rc;
}

typedef struct builder {
  sg_rows *r;
  int cap_rows, cap_segs, nsegs;
  uint64_t *hash;   /* [cap_rows] per row */
  int *table;       /* open addressing over rows (-1 empty) */
  int tsize;
} builder;

static uint64_t row_hash(int64_t cap, const int *segs, int n) {
  uint64_t h = (uint64_t)cap * 0x9E3779B97F4A7C15ULL ^ (uint64_t)n;
  for (int a = 0; a < n; a++) h = (h ^ (uint64_t)(segs[a] + 1)) * 0x100000001B3ULL;
  return h;
}

static bool same_row(const builder *b, int r, int64_t cap, const int *segs, int n) {
  const sg_rows *x = b->r;
  return x->cap[r] == cap && x->off[r + 1] - x->off[r] == n &&
         memcmp(x->seg + x->off[r], segs, sizeof(int) * (size_t)n) == 0;
}

static int grow_table(builder *b) {
  int ns = b->tsize ? b->tsize * 2 : 1024;
  int *t = malloc(sizeof(int) * (size_t)ns);
  if (!t) return SP_ENOMEM;
  for (int i = 0; i < ns; i++) t[i] = -1;
  for (int r = 0; r < b->r->n; r++) {
    int h = (int)(b->hash[r] & (uint64_t)(ns - 1));
    while (t[h] >= 0) h = (h + 1) & (ns - 1);
    t[h] = r;
  }
  free(b->table);
  b->table = t;
  b->tsize = ns;
  return SP_OK;
}

/* Appends a row unless an identical one exists (when dedupe). */
static int add_row(builder *b, int t, int64_t cap, const int *segs, int n, bool dedupe) {
  sg_rows *r = b->r;
  uint64_t h = row_hash(cap, segs, n);
  if (dedupe) {
    if (2 * (r->n + 1) > b->tsize && grow_table(b) != SP_OK) return SP_ENOMEM;
    int pos = (int)(h & (uint64_t)(b->tsize - 1));
    for (; b->table[pos] >= 0; pos = (pos + 1) & (b->tsize - 1))
      if (b->hash[b->table[pos]] == h && same_row(b, b->table[pos], cap, segs, n)) return SP_OK;
    b->table[pos] = r->n;
  }
  if (r->n + 1 >= b->cap_rows) {
    /* Four arrays of one capacity, each grown from it to the same size: room for index n + 1
     * (off's next entry). */
    int last = r->n + 1, ct = b->cap_rows, ccap = b->cap_rows, coff = b->cap_rows, ch = b->cap_rows;
    if (sp_grow((void **)&r->t, &ct, last, sizeof *r->t) ||
        sp_grow((void **)&r->cap, &ccap, last, sizeof *r->cap) ||
        sp_grow((void **)&r->off, &coff, last, sizeof *r->off) ||
        sp_grow((void **)&b->hash, &ch, last, sizeof *b->hash))
      return SP_ENOMEM;
    b->cap_rows = ct;
  }
  if (n && sp_grow((void **)&r->seg, &b->cap_segs, b->nsegs + n - 1, sizeof *r->seg))
    return SP_ENOMEM;
  memcpy(r->seg + b->nsegs, segs, sizeof(int) * (size_t)n);
  b->nsegs += n;
  r->t[r->n] = t;
  r->cap[r->n] = cap;
  b->hash[r->n] = h;
  r->n++;
  r->off[r->n] = b->nsegs;
  return SP_OK;
}

/* Times, capacities, a live segment and the entry count of each row, in one sweep. */
static int rows_without_lists(const sg_prob *p, const seg_ref *s, int ns, const uint8_t *sel,
                              sg_rows *out) {
  int T = p->T, n = 0;
  for (int t = 0; t < T; t++) n += sel[t];
  out->t = malloc(sizeof(int) * ((size_t)n + 1));
  out->cap = malloc(sizeof(int64_t) * ((size_t)n + 1));
  out->some = malloc(sizeof(int) * ((size_t)n + 1));
  int64_t *kdiff = calloc((size_t)T + 2, sizeof(int64_t));
  if (!out->t || !out->cap || !out->some || !kdiff) { free(kdiff); return SP_ENOMEM; }
  for (int k = 0; k < ns; k++) {
    int kk = p->k[p->seg_node[s[k].seg]];
    kdiff[s[k].t0] += kk;
    kdiff[s[k].t1] -= kk;
  }
  /* The started segment that ends last is live at t whenever any segment is. */
  int next = 0, far = -1;
  int64_t run = 0;
  for (int t = 0; t < T; t++) {
    run += kdiff[t];
    while (next < ns && s[next].t0 <= t) {
      if (far < 0 || s[next].t1 > s[far].t1) far = next;
      next++;
    }
    if (!sel[t] || far < 0 || s[far].t1 <= t) continue;
    out->t[out->n] = t;
    out->cap[out->n] = p->cap[t];
    out->some[out->n] = s[far].seg;
    out->entries += run;
    out->n++;
  }
  free(kdiff);
  return SP_OK;
}

int sp_sg_rows_build(const sg_prob *p, const uint8_t *in_part, bool plain, bool lists,
                     sg_rows *out) {
  memset(out, 0, sizeof *out);
  builder b = {.r = out};
  int total = p->seg_off[p->n], ns = 0, rc = SP_OK;
  seg_ref *s = malloc(sizeof *s * ((size_t)total + 1));
  uint8_t *sel = calloc((size_t)p->T + 1, 1);
  int *active = malloc(sizeof(int) * ((size_t)total + 1));
  int *sorted = malloc(sizeof(int) * ((size_t)total + 1));
  out->off = malloc(sizeof(int));
  if (!s || !sel || !active || !sorted || !out->off) { rc = SP_ENOMEM; goto out; }
  out->off[0] = 0;
  for (int i = 0; i < p->n; i++) {
    if (in_part && !in_part[i]) continue;
    for (int g = p->seg_off[i]; g < p->seg_off[i + 1]; g++)
      s[ns++] = (seg_ref){p->seg[g].t0, p->seg[g].t1, g};
  }
  if (!p->has_limit || ns == 0) goto out;
  qsort(s, (size_t)ns, sizeof *s, cmp_seg_t0);
  if ((rc = select_times(p, s, ns, plain, sel)) != SP_OK) goto out;
  if (!lists) {
    rc = rows_without_lists(p, s, ns, sel, out);
    goto out;
  }
  int na = 0, next = 0;
  for (int t = 0; t < p->T && rc == SP_OK; t++) {
    if (!sel[t]) continue;
    while (next < ns && s[next].t0 <= t) active[na++] = next++;
    int w = 0;
    for (int a = 0; a < na; a++) if (s[active[a]].t1 > t) active[w++] = active[a];
    na = w;
    if (na == 0) continue;
    for (int a = 0; a < na; a++) sorted[a] = s[active[a]].seg;
    qsort(sorted, (size_t)na, sizeof(int), cmp_int);
    rc = add_row(&b, t, p->cap[t], sorted, na, !plain);
  }
  if (rc == SP_OK && out->n > 0) {
    out->some = malloc(sizeof(int) * (size_t)out->n);
    if (!out->some) rc = SP_ENOMEM;
    for (int r = 0; r < out->n && rc == SP_OK; r++) {
      out->some[r] = out->seg[out->off[r]];
      for (int a = out->off[r]; a < out->off[r + 1]; a++)
        out->entries += p->k[p->seg_node[out->seg[a]]];
    }
  }
out:
  free(s);
  free(sel);
  free(active);
  free(sorted);
  free(b.hash);
  free(b.table);
  if (rc != SP_OK) sp_sg_rows_free(out);
  return rc;
}

void sp_sg_rows_free(sg_rows *r) {
  free(r->t);
  free(r->cap);
  free(r->off);
  free(r->seg);
  free(r->some);
  memset(r, 0, sizeof *r);
}
