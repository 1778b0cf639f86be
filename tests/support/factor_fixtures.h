/*
 * factor_fixtures.h - small builders for the propagation tests: meshes, sharding rules and
 * shardings written in a compact text form, and a printer for comparing shardings.
 *
 *   fx_mesh(a, "a=4, b=2")
 *   fx_rule(a, "([ij, k])->([i, jk])", (int64_t[]){2, 4, 4})   factors i..z = 0..17
 *   fx_sharding(a, "{a, b:(2)2, ?}, {}", "f, g")               dims; replicated (or NULL)
 *   fx_str(s)                                                  "<@mesh, [{\"a\", ?}]>"
 *
 * The builders abort the test (ck_abort) on text they cannot read. Everything is allocated
 * in the arena passed in; fx_str returns one of a few rotating static buffers.
 */
#ifndef SP_FACTOR_FIXTURES_H
#define SP_FACTOR_FIXTURES_H

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/mesh.h"
#include "ir/rule.h"
#include "ir/sharding.h"
#include "ir/strbuf.h"

static inline void fx_skip_space(const char **p) {
  while (**p == ' ') (*p)++;
}

static inline const char *fx_name(sp_arena *a, const char **p) {
  const char *s = *p;
  while (isalnum((unsigned char)**p) || **p == '_') (*p)++;
  ck_assert_msg(*p > s, "fixture: expected a name at \"%s\"", s);
  return sp_arena_strndup(a, s, (size_t)(*p - s));
}

static inline sp_mesh *fx_mesh(sp_arena *a, const char *spec) {
  sp_mesh *m = sp_arena_calloc(a, 1, sizeof *m);
  m->axes = sp_arena_calloc(a, 32, sizeof *m->axes);
  const char *p = spec;
  for (fx_skip_space(&p); *p; fx_skip_space(&p)) {
    const char *name = fx_name(a, &p);
    ck_assert_msg(*p == '=', "fixture mesh: expected '=' in \"%s\"", spec);
    p++;
    m->axes[m->naxes].name = name;
    m->axes[m->naxes++].size = strtoll(p, (char **)&p, 10);
    fx_skip_space(&p);
    if (*p == ',') p++;
  }
  return m;
}

/* One tensor of a rule: "[ij, k]". */
static inline void fx_rule_tensor(sp_arena *a, const char **p, sp_rule_tensor *t) {
  ck_assert_msg(**p == '[', "fixture rule: expected '[' at \"%s\"", *p);
  (*p)++;
  t->dims = sp_arena_calloc(a, 16, sizeof *t->dims);
  while (**p != ']') {
    fx_skip_space(p);
    sp_rule_dim *d = &t->dims[t->rank++];
    d->factors = sp_arena_calloc(a, 8, sizeof *d->factors);
    while (**p >= 'i' && **p <= 'z') d->factors[d->nfactors++] = *(*p)++ - 'i';
    ck_assert_msg(d->nfactors > 0, "fixture rule: expected factors at \"%s\"", *p);
    fx_skip_space(p);
    if (**p == ',') (*p)++;
  }
  (*p)++;
}

static inline void fx_rule_side(sp_arena *a, const char **p, sp_rule_tensor **v, int *n) {
  ck_assert_msg(**p == '(', "fixture rule: expected '(' at \"%s\"", *p);
  (*p)++;
  *v = sp_arena_calloc(a, 16, sizeof **v);
  while (**p != ')') {
    fx_skip_space(p);
    fx_rule_tensor(a, p, &(*v)[(*n)++]);
    fx_skip_space(p);
    if (**p == ',') (*p)++;
  }
  (*p)++;
}

/* A rule whose factor f has size sizes[f]; every factor is pass-through and not blocked. */
static inline sp_rule *fx_rule(sp_arena *a, const char *spec, const int64_t *sizes) {
  sp_rule *r = sp_arena_calloc(a, 1, sizeof *r);
  const char *p = spec;
  fx_rule_side(a, &p, &r->operands, &r->noperands);
  ck_assert_msg(p[0] == '-' && p[1] == '>', "fixture rule: expected '->' in \"%s\"", spec);
  p += 2;
  fx_rule_side(a, &p, &r->results, &r->nresults);
  int nf = 0;
  for (const char *q = spec; *q; q++) /* the only letters in a spec are factor names */
    if (*q >= 'i' && *q <= 'z' && 1 + (*q - 'i') > nf) nf = 1 + (*q - 'i');
  r->nfactors = nf;
  r->factors = sp_arena_calloc(a, (size_t)(nf ? nf : 1), sizeof *r->factors);
  for (int f = 0; f < nf; f++) r->factors[f].size = sizes[f];
  return r;
}

/* Axis list "a, b:(2)2" up to `end`; '?' sets *open. */
static inline int fx_axes(sp_arena *a, const char **p, char end, sp_axis_ref **out, bool *open) {
  sp_axis_ref *v = sp_arena_calloc(a, 32, sizeof *v);
  int n = 0;
  for (fx_skip_space(p); **p != end; fx_skip_space(p)) {
    ck_assert_msg(**p != '\0', "fixture sharding: missing '%c'", end);
    if (**p == '?') {
      *open = true;
      (*p)++;
    } else {
      sp_axis_ref r = {fx_name(a, p), 0, 0};
      if (**p == ':') {
        r.pre = strtoll(*p + 2, (char **)p, 10);
        (*p)++; /* ')' */
        r.size = strtoll(*p, (char **)p, 10);
      }
      v[n++] = r;
    }
    fx_skip_space(p);
    if (**p == ',') (*p)++;
  }
  (*p)++;
  *out = n ? v : NULL;
  return n;
}

/* Dims "{a, ?}, {}"; replicated "f, g" or NULL. Mesh name "mesh". */
static inline sp_sharding *fx_sharding(sp_arena *a, const char *dims, const char *replicated) {
  sp_sharding *s = sp_sharding_new(a, "mesh", 0, false);
  s->dims = sp_arena_calloc(a, 16, sizeof *s->dims);
  const char *p = dims;
  for (fx_skip_space(&p); *p; fx_skip_space(&p)) {
    ck_assert_msg(*p == '{', "fixture sharding: expected '{' at \"%s\"", p);
    p++;
    sp_dim_sharding *d = &s->dims[s->rank++];
    bool open = false;
    d->naxes = fx_axes(a, &p, '}', &d->axes, &open);
    d->closed = !open;
    d->priority = SP_NO_PRIORITY;
    fx_skip_space(&p);
    if (*p == ',') p++;
  }
  if (replicated) {
    char *buf = sp_arena_printf(a, "%s}", replicated);
    const char *q = buf;
    bool open = false;
    s->nreplicated = fx_axes(a, &q, '}', &s->replicated, &open);
  }
  return s;
}

/* The inner text form of a sharding, or "none" for NULL. */
static inline const char *fx_str(const sp_sharding *s) {
  static char bufs[8][512];
  static int next;
  char *out = bufs[next++ % 8];
  if (!s) return strcpy(out, "none");
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_sharding_print(&sb, s);
  snprintf(out, 512, "%s", sp_strbuf_str(&sb));
  sp_strbuf_free(&sb);
  return out;
}

#endif /* SP_FACTOR_FIXTURES_H */
