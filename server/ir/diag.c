/*
 * diag.c - diagnostic lists, their text form, and -verify-diagnostics matching (see diag.h).
 *
 * Verification parses the annotations with a small hand-written scanner (they are comments,
 * so the MLIR reader never sees them), resolves each to an absolute line, then pairs
 * diagnostics with expectations: first every expectation takes the diagnostics it needs on its
 * line (count times), then whatever is left on either side is a problem.
 */
#include "ir/diag.h"

#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/err.h"
#include "ir/grow.h"

void sp_diag_list_init(sp_diag_list *l) { memset(l, 0, sizeof *l); }

void sp_diag_list_clear(sp_diag_list *l) {
  for (int i = 0; i < l->n; i++) free(l->v[i].msg);
  l->n = 0;
  l->oom = false;
}

void sp_diag_list_free(sp_diag_list *l) {
  if (!l) return;
  sp_diag_list_clear(l);
  free(l->v);
  memset(l, 0, sizeof *l);
}

static int emitv(sp_diag_list *l, sp_diag_severity sev, sp_loc loc, const char *fmt,
                 va_list ap) {
  if (!l) return SP_OK;
  if (sp_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v)) {
    l->oom = true;
    return SP_ENOMEM;
  }
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!msg) {
    l->oom = true;
    return SP_ENOMEM;
  }
  vsnprintf(msg, (size_t)n + 1, fmt, ap);
  l->v[l->n++] = (sp_diag){sev, loc, msg};
  return SP_OK;
}

int sp_diag_emit(sp_diag_list *l, sp_diag_severity sev, sp_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = emitv(l, sev, loc, fmt, ap);
  va_end(ap);
  return rc;
}

int sp_module_warn(sp_module *m, sp_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = emitv(m ? m->diags : NULL, SP_DIAG_WARNING, loc, fmt, ap);
  va_end(ap);
  return rc;
}

int sp_module_remark(sp_module *m, sp_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = emitv(m ? m->diags : NULL, SP_DIAG_REMARK, loc, fmt, ap);
  va_end(ap);
  return rc;
}

static const char *const severity_names[] = {"error", "warning", "remark", "note"};

const char *sp_diag_severity_name(sp_diag_severity sev) {
  return (unsigned)sev < 4 ? severity_names[sev] : "diagnostic";
}

int sp_error_at(sp_err *err, int code, const sp_module *m, sp_loc loc, const char *fmt, ...) {
  char msg[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *file = m && m->filename ? m->filename : "<input>";
  if (loc.line > 0) return sp_err_set(err, code, "%s:%d:%d: %s", file, loc.line, loc.col, msg);
  return sp_err_set(err, code, "%s: %s", file, msg);
}

const char *sp_op_messagev(char *buf, size_t cap, const char *op_name, const char *fmt,
                           va_list ap) {
  int n = snprintf(buf, cap, "'%s' op ", op_name);
  if (n >= 0 && (size_t)n < cap) vsnprintf(buf + n, cap - (size_t)n, fmt, ap);
  return buf;
}

const char *sp_op_message(char *buf, size_t cap, const char *op_name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sp_op_messagev(buf, cap, op_name, fmt, ap);
  va_end(ap);
  return buf;
}

int sp_op_error(sp_err *err, int code, const sp_module *m, const sp_op *op, const char *fmt, ...) {
  char msg[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  sp_op_messagev(msg, sizeof msg, op->name, fmt, ap);
  va_end(ap);
  return sp_error_at(err, code, m, op->loc, "%s", msg);
}

void sp_diag_format(sp_strbuf *sb, const char *file, const sp_diag *d) {
  if (d->loc.line > 0)
    sp_strbuf_printf(sb, "%s:%d:%d: %s: %s\n", file, d->loc.line, d->loc.col,
                     sp_diag_severity_name(d->severity), d->msg);
  else
    sp_strbuf_printf(sb, "%s: %s: %s\n", file, sp_diag_severity_name(d->severity), d->msg);
}

/* Reads a positive decimal at *p (advancing it); -1 if there is none. */
static long read_num(const char **p) {
  const char *q = *p;
  long v = 0;
  if (*q < '0' || *q > '9') return -1;
  while (*q >= '0' && *q <= '9' && v < 100000000) v = v * 10 + (*q++ - '0');
  *p = q;
  return v;
}

void sp_diag_split_message(const char *file, const char *msg, sp_loc *loc, const char **rest) {
  *loc = (sp_loc){0, 0};
  *rest = msg;
  size_t fn = strlen(file);
  if (strncmp(msg, file, fn) != 0 || msg[fn] != ':') return;
  const char *p = msg + fn + 1;
  long line = read_num(&p);
  if (line < 0 || *p != ':') {
    *rest = msg + fn + 1;
    while (**rest == ' ') (*rest)++;
    return;
  }
  p++;
  const char *after_line = p;
  long col = read_num(&p);
  if (col < 0 || *p != ':') {
    col = 0;
    p = after_line - 1; /* the ':' after the line */
  }
  p++;
  while (*p == ' ') p++;
  *loc = (sp_loc){(int)line, (int)col};
  *rest = p;
}

/* ------------------------------------------------------------------ verification */

typedef struct expectation {
  sp_diag_severity severity;
  int line;          /* the line the diagnostic must be on */
  int at_line;       /* the annotation's own line and column, for messages */
  int at_col;
  int count;         /* how many diagnostics it expects */
  int matched;
  bool regex;
  char *text;        /* malloc'd */
} expectation;

typedef struct expect_list {
  int n, cap;
  expectation *v;
} expect_list;

static void expect_free(expect_list *e) {
  for (int i = 0; i < e->n; i++) free(e->v[i].text);
  free(e->v);
}

static int expect_push(expect_list *e, expectation x) {
  if (sp_grow((void **)&e->v, &e->cap, e->n, sizeof *e->v)) return -1;
  e->v[e->n++] = x;
  return 0;
}

/* Whether line [ls, le) contains only whitespace and comments that hold no annotation: what
 * `@below` / `@above` skip over is any other annotation line, so only non-annotation lines
 * count. */
static bool is_annotation_line(const char *ls, const char *le) {
  static const char key[] = "expected-";
  for (const char *p = ls; p + sizeof key - 1 <= le; p++)
    if (memcmp(p, key, sizeof key - 1) == 0) return true;
  return false;
}

typedef struct line_index {
  int n;
  const char **starts;  /* starts[i] = first byte of line first_line + i */
  const char *end;
} line_index;

static int index_lines(const char *text, size_t len, line_index *li) {
  int n = 1;
  for (size_t i = 0; i < len; i++) n += text[i] == '\n';
  li->starts = malloc((size_t)n * sizeof *li->starts);
  if (!li->starts) return -1;
  li->n = 0;
  li->starts[li->n++] = text;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n' && li->n < n) li->starts[li->n++] = text + i + 1;
  li->end = text + len;
  return 0;
}

static const char *line_end(const line_index *li, int i) {
  return i + 1 < li->n ? li->starts[i + 1] - 1 : li->end;
}

static void problem(sp_strbuf *report, const char *file, int line, int col, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
static void problem(sp_strbuf *report, const char *file, int line, int col, const char *fmt,
                    ...) {
  char msg[SP_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sp_strbuf_printf(report, "%s:%d:%d: error: %s\n", file, line, col, msg);
}

/* Parses the annotation starting at `p` ("expected-...") on line index `li_i`. Returns 0 and
 * fills *x, 1 when `p` is not an annotation after all, -1 when it is malformed (reported). */
static int parse_annotation(const char *p, const char *le, const line_index *li, int li_i,
                            int first_line, const char *file, sp_strbuf *report,
                            expectation *x) {
  static const struct { const char *word; sp_diag_severity sev; } kinds[] = {
      {"error", SP_DIAG_ERROR}, {"warning", SP_DIAG_WARNING},
      {"remark", SP_DIAG_REMARK}, {"note", SP_DIAG_NOTE}};
  int at_line = first_line + li_i, at_col = (int)(p - li->starts[li_i]) + 1;
  const char *q = p + strlen("expected-");
  int k = -1;
  for (int i = 0; i < 4; i++) {
    size_t n = strlen(kinds[i].word);
    if ((size_t)(le - q) >= n && memcmp(q, kinds[i].word, n) == 0) {
      k = i;
      q += n;
      break;
    }
  }
  if (k < 0) return 1;
  memset(x, 0, sizeof *x);
  x->severity = kinds[k].sev;
  x->at_line = at_line;
  x->at_col = at_col;
  x->line = at_line;
  x->count = 1;
  if (le - q >= 3 && memcmp(q, "-re", 3) == 0) {
    x->regex = true;
    q += 3;
  }
  while (q < le && (*q == ' ' || *q == '\t')) q++;
  if (q < le && *q == '@') {
    q++;
    if (le - q >= 5 && memcmp(q, "above", 5) == 0) {
      q += 5;
      int i = li_i - 1;
      while (i >= 0 && is_annotation_line(li->starts[i], line_end(li, i))) i--;
      x->line = first_line + (i >= 0 ? i : 0);
    } else if (le - q >= 5 && memcmp(q, "below", 5) == 0) {
      q += 5;
      int i = li_i + 1;
      while (i < li->n && is_annotation_line(li->starts[i], line_end(li, i))) i++;
      x->line = first_line + (i < li->n ? i : li->n - 1);
    } else {
      int sign = 0;
      if (*q == '+' || *q == '-') sign = *q++ == '+' ? 1 : -1;
      long v = read_num(&q);
      if (v < 0) {
        problem(report, file, at_line, at_col, "expected a line offset after '@'");
        return -1;
      }
      x->line = sign ? at_line + sign * (int)v : (int)v;
    }
  }
  while (q < le && (*q == ' ' || *q == '\t')) q++;
  if (q < le && *q >= '0' && *q <= '9') {
    long c = read_num(&q);
    x->count = (int)c;
    while (q < le && (*q == ' ' || *q == '\t')) q++;
  }
  if (le - q < 2 || q[0] != '{' || q[1] != '{') {
    problem(report, file, at_line, at_col, "expected '{{' after the expected-%s annotation",
            kinds[k].word);
    return -1;
  }
  q += 2;
  const char *close = NULL;
  for (const char *r = q; r + 1 < le; r++)
    if (r[0] == '}' && r[1] == '}') {
      close = r;
      break;
    }
  if (!close) {
    problem(report, file, at_line, at_col, "expected '}}' to end the expected text");
    return -1;
  }
  x->text = strndup(q, (size_t)(close - q));
  return x->text ? 0 : -2;
}

static int collect_expectations(const char *text, size_t len, int first_line, const char *file,
                                expect_list *out, sp_strbuf *report, int *nproblems) {
  line_index li;
  if (index_lines(text, len, &li)) return -1;
  int rc = 0;
  for (int i = 0; i < li.n && rc == 0; i++) {
    const char *ls = li.starts[i], *le = line_end(&li, i);
    /* Annotations live in comments. */
    const char *c = NULL;
    for (const char *p = ls; p + 1 < le; p++)
      if (p[0] == '/' && p[1] == '/') {
        c = p;
        break;
      }
    if (!c) continue;
    static const char key[] = "expected-";
    for (const char *p = c; p + sizeof key - 1 <= le; p++) {
      if (memcmp(p, key, sizeof key - 1) != 0) continue;
      expectation x;
      int r = parse_annotation(p, le, &li, i, first_line, file, report, &x);
      if (r == -2 || (r == 0 && expect_push(out, x))) {
        if (r == 0) free(x.text);
        rc = -1;
        break;
      }
      if (r == -1) (*nproblems)++;
      p += sizeof key - 2;
    }
  }
  free(li.starts);
  return rc;
}

static bool text_matches(const expectation *x, const char *msg) {
  if (!x->regex) return strstr(msg, x->text) != NULL;
  regex_t re;
  if (regcomp(&re, x->text, REG_EXTENDED | REG_NOSUB) != 0) return false;
  bool ok = regexec(&re, msg, 0, NULL, 0) == 0;
  regfree(&re);
  return ok;
}

int sp_diag_verify(const char *text, size_t len, int first_line, const char *file,
                   const sp_diag_list *l, sp_strbuf *report) {
  expect_list e = {0, 0, NULL};
  int problems = 0;
  if (collect_expectations(text, len, first_line, file, &e, report, &problems)) {
    expect_free(&e);
    return -1;
  }
  bool *used = calloc((size_t)(l->n ? l->n : 1), sizeof *used);
  if (!used) {
    expect_free(&e);
    return -1;
  }
  for (int i = 0; i < e.n; i++) {
    expectation *x = &e.v[i];
    for (int d = 0; d < l->n && x->matched < x->count; d++) {
      const sp_diag *dg = &l->v[d];
      if (used[d] || dg->severity != x->severity || dg->loc.line != x->line) continue;
      if (!text_matches(x, dg->msg)) continue;
      used[d] = true;
      x->matched++;
    }
    if (x->matched < x->count) {
      problems++;
      problem(report, file, x->at_line, x->at_col, "expected %s \"%s\" was not produced%s",
              sp_diag_severity_name(x->severity), x->text,
              x->count > 1 ? " as often as expected" : "");
    }
  }
  for (int d = 0; d < l->n; d++) {
    if (used[d]) continue;
    problems++;
    const sp_diag *dg = &l->v[d];
    problem(report, file, dg->loc.line, dg->loc.col, "unexpected %s: %s",
            sp_diag_severity_name(dg->severity), dg->msg);
  }
  free(used);
  expect_free(&e);
  return problems;
}
