/*
 * sharding.c - tensor shardings: construction, copy, comparison, text (see sharding.h).
 */
#include "ir/sharding.h"

#include <string.h>

sp_sharding *sp_sharding_new(sp_arena *a, const char *mesh_name, int rank, bool closed) {
  sp_sharding *s = sp_arena_calloc(a, 1, sizeof *s);
  if (!s) return NULL;
  s->mesh_name = mesh_name;
  s->rank = rank;
  if (rank > 0) {
    s->dims = sp_arena_calloc(a, (size_t)rank, sizeof *s->dims);
    if (!s->dims) return NULL;
    for (int i = 0; i < rank; i++) {
      s->dims[i].closed = closed;
      s->dims[i].priority = SP_NO_PRIORITY;
    }
  }
  return s;
}

static sp_axis_ref *copy_axes(sp_arena *a, const sp_axis_ref *v, int n) {
  if (n == 0) return NULL;
  sp_axis_ref *c = sp_arena_alloc(a, (size_t)n * sizeof *c);
  if (c) memcpy(c, v, (size_t)n * sizeof *c);
  return c;
}

sp_sharding *sp_sharding_copy(sp_arena *a, const sp_sharding *s) {
  if (!s) return NULL;
  sp_sharding *c = sp_arena_alloc(a, sizeof *c);
  if (!c) return NULL;
  *c = *s;
  if (s->rank > 0) {
    c->dims = sp_arena_alloc(a, (size_t)s->rank * sizeof *c->dims);
    if (!c->dims) return NULL;
    for (int i = 0; i < s->rank; i++) {
      c->dims[i] = s->dims[i];
      c->dims[i].axes = copy_axes(a, s->dims[i].axes, s->dims[i].naxes);
      if (s->dims[i].naxes && !c->dims[i].axes) return NULL;
    }
  }
  c->replicated = copy_axes(a, s->replicated, s->nreplicated);
  c->unreduced = copy_axes(a, s->unreduced, s->nunreduced);
  if ((s->nreplicated && !c->replicated) || (s->nunreduced && !c->unreduced)) return NULL;
  return c;
}

static bool axes_equal(const sp_axis_ref *x, int nx, const sp_axis_ref *y, int ny) {
  if (nx != ny) return false;
  for (int i = 0; i < nx; i++)
    if (!sp_axis_ref_equal(&x[i], &y[i])) return false;
  return true;
}

static bool str_equal(const char *x, const char *y) {
  if (!x || !y) return x == y;
  return strcmp(x, y) == 0;
}

bool sp_sharding_equal(const sp_sharding *x, const sp_sharding *y) {
  if (!x || !y) return x == y;
  if (!str_equal(x->mesh_name, y->mesh_name)) return false;
  if ((x->inline_mesh == NULL) != (y->inline_mesh == NULL)) return false;
  if (x->inline_mesh && !sp_mesh_equal(x->inline_mesh, y->inline_mesh)) return false;
  if (x->rank != y->rank) return false;
  for (int i = 0; i < x->rank; i++) {
    const sp_dim_sharding *a = &x->dims[i], *b = &y->dims[i];
    if (a->closed != b->closed || a->priority != b->priority) return false;
    if (!axes_equal(a->axes, a->naxes, b->axes, b->naxes)) return false;
  }
  return axes_equal(x->replicated, x->nreplicated, y->replicated, y->nreplicated) &&
         axes_equal(x->unreduced, x->nunreduced, y->unreduced, y->nunreduced) &&
         str_equal(x->unreduced_kind, y->unreduced_kind);
}

bool sp_sharding_is_unsharded(const sp_sharding *s) {
  if (!s) return true;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i].naxes) return false;
  return true;
}

bool sp_sharding_is_fully_open_empty(const sp_sharding *s) {
  if (!s) return true;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i].naxes || s->dims[i].closed) return false;
  return s->nreplicated == 0 && s->nunreduced == 0;
}

/* "name" with MLIR's string escapes (\\, and \XX for '"' and non-printable bytes), so that any
 * axis name the reader accepted prints back as a valid string literal. */
static void put_quoted(sp_strbuf *sb, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  sp_strbuf_putc(sb, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\\') {
      sp_strbuf_puts(sb, "\\\\");
    } else if (c < 0x20 || c >= 0x7f || c == '"') {
      char esc[3] = {'\\', hex[c >> 4], hex[c & 15]};
      sp_strbuf_putn(sb, esc, 3);
    } else {
      sp_strbuf_putc(sb, (char)c);
    }
  }
  sp_strbuf_putc(sb, '"');
}

/* @name, quoted when it is not a bare identifier ([a-zA-Z_][a-zA-Z0-9_$.]*). */
static void put_symbol(sp_strbuf *sb, const char *s) {
  bool bare = *s && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_');
  for (const char *q = s; bare && *q; q++)
    bare = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
           *q == '_' || *q == '$' || *q == '.';
  sp_strbuf_putc(sb, '@');
  if (bare) sp_strbuf_puts(sb, s);
  else put_quoted(sb, s);
}

void sp_axis_ref_print(sp_strbuf *sb, const sp_axis_ref *r) {
  put_quoted(sb, r->name);
  if (sp_axis_is_sub(r)) sp_strbuf_printf(sb, ":(%lld)%lld", (long long)r->pre, (long long)r->size);
}

void sp_axis_refs_print(sp_strbuf *sb, const sp_axis_ref *v, int n) {
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_axis_ref_print(sb, &v[i]);
  }
}

void sp_dim_sharding_print(sp_strbuf *sb, const sp_dim_sharding *d) {
  sp_strbuf_putc(sb, '{');
  sp_axis_refs_print(sb, d->axes, d->naxes);
  if (!d->closed) sp_strbuf_puts(sb, d->naxes ? ", ?" : "?");
  sp_strbuf_putc(sb, '}');
  if (d->priority != SP_NO_PRIORITY) sp_strbuf_printf(sb, "p%d", d->priority);
}

void sp_mesh_print(sp_strbuf *sb, const sp_mesh *m) {
  sp_strbuf_puts(sb, "<[");
  for (int i = 0; i < m->naxes; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    put_quoted(sb, m->axes[i].name);
    sp_strbuf_printf(sb, "=%lld", (long long)m->axes[i].size);
  }
  sp_strbuf_putc(sb, ']');
  if (m->ndevice_ids) {
    sp_strbuf_puts(sb, ", device_ids=[");
    for (int i = 0; i < m->ndevice_ids; i++)
      sp_strbuf_printf(sb, "%s%lld", i ? ", " : "", (long long)m->device_ids[i]);
    sp_strbuf_putc(sb, ']');
  }
  sp_strbuf_putc(sb, '>');
}

void sp_sharding_print(sp_strbuf *sb, const sp_sharding *s) {
  sp_strbuf_putc(sb, '<');
  if (s->inline_mesh) {
    sp_strbuf_puts(sb, "mesh");
    sp_mesh_print(sb, s->inline_mesh);
  } else {
    put_symbol(sb, s->mesh_name ? s->mesh_name : "");
  }
  sp_strbuf_puts(sb, ", [");
  for (int i = 0; i < s->rank; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_dim_sharding_print(sb, &s->dims[i]);
  }
  sp_strbuf_putc(sb, ']');
  if (s->nreplicated) {
    sp_strbuf_puts(sb, ", replicated={");
    sp_axis_refs_print(sb, s->replicated, s->nreplicated);
    sp_strbuf_putc(sb, '}');
  }
  if (s->nunreduced) {
    sp_strbuf_printf(sb, ", unreduced=%s{", s->unreduced_kind ? s->unreduced_kind : "");
    sp_axis_refs_print(sb, s->unreduced, s->nunreduced);
    sp_strbuf_putc(sb, '}');
  }
  sp_strbuf_putc(sb, '>');
}

void sp_dim_axes_print(sp_strbuf *sb, const sp_dim_sharding *v, int n) {
  sp_strbuf_putc(sb, '[');
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_strbuf_putc(sb, '{');
    sp_axis_refs_print(sb, v[i].axes, v[i].naxes);
    sp_strbuf_putc(sb, '}');
  }
  sp_strbuf_putc(sb, ']');
}
