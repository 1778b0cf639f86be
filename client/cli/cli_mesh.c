/*
 * cli_mesh.c - the `--mesh` option of `shardplan plan` (see cli_mesh.h).
 */
#include "cli_mesh.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"

/* Skips white space and `//` comments. */
static const char *skip_space(const char *p) {
  for (;;) {
    while (isspace((unsigned char)*p)) p++;
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') p++;
      continue;
    }
    return p;
  }
}

/* Skips a balanced {...} (strings may contain braces). NULL when unbalanced. */
static const char *skip_braces(const char *p) {
  int depth = 0;
  for (; *p; p++) {
    if (*p == '"') {
      for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1]) p++;
      if (!*p) return NULL;
    } else if (*p == '{') {
      depth++;
    } else if (*p == '}' && --depth == 0) {
      return p + 1;
    }
  }
  return NULL;
}

/* Where the mesh goes: after the `{` of `module [@name] [attributes {...}] {`, or at the
 * first op of a module written without the `module` line. NULL when the text is malformed. */
static const char *insertion_point(const char *text) {
  const char *p = skip_space(text);
  if (strncmp(p, "module", 6) != 0 || isalnum((unsigned char)p[6]) || p[6] == '_') return p;
  p = skip_space(p + 6);
  if (*p == '@') {
    p++;
    if (*p == '"') {
      for (p++; *p && *p != '"'; p++) {
      }
      if (*p) p++;
    } else {
      while (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '$') p++;
    }
    p = skip_space(p);
  }
  if (strncmp(p, "attributes", 10) == 0) {
    p = skip_space(p + 10);
    if (*p != '{' || !(p = skip_braces(p))) return NULL;
    p = skip_space(p);
  }
  return *p == '{' ? p + 1 : NULL;
}

static bool axis_name_ok(const char *s, size_t n) {
  if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
  return true;
}

int sp_cli_mesh_apply(const char *spec, const char *text, char **with_mesh, char ***axes,
                      size_t *n_axes, char *why, size_t cap) {
  sp_strbuf mesh = SP_STRBUF_INIT;
  int sized = -1;   /* unknown yet: 1 = every axis has a size, 0 = none has */
  *with_mesh = NULL;
  *axes = NULL;
  *n_axes = 0;
  sp_strbuf_puts(&mesh, "sdy.mesh @mesh = <[");
  for (const char *p = spec;;) {
    const char *end = p + strcspn(p, ",");
    const char *eq = memchr(p, '=', (size_t)(end - p));
    size_t name_len = (size_t)((eq ? eq : end) - p);
    if (!axis_name_ok(p, name_len)) {
      snprintf(why, cap, "\"%.*s\" is not an axis name (letters, digits, _)", (int)name_len, p);
      goto fail;
    }
    if (sized >= 0 && sized != (eq != NULL)) {
      snprintf(why, cap, "give a size for every axis (data=4,model=2) or for none (data,model)");
      goto fail;
    }
    sized = eq != NULL;
    long size = 0;
    if (eq) {
      char *e;
      size = strtol(eq + 1, &e, 10);
      if (e != end || eq + 1 == end || size < 1) {
        snprintf(why, cap, "axis %.*s: the size must be a positive integer", (int)name_len, p);
        goto fail;
      }
      sp_strbuf_printf(&mesh, "%s\"%.*s\"=%ld", *n_axes ? ", " : "", (int)name_len, p, size);
    }
    char **v = realloc(*axes, (*n_axes + 1) * sizeof *v);
    if (!v || !(v[*n_axes] = strndup(p, name_len))) {
      if (v) *axes = v;
      snprintf(why, cap, "out of memory");
      goto fail;
    }
    *axes = v;
    ++*n_axes;
    if (!*end) break;
    p = end + 1;
  }
  if (strstr(text, "sdy.mesh")) {
    snprintf(why, cap, "the module already has an sdy.mesh; --mesh is for modules without one");
    goto fail;
  }
  if (sized) {
    const char *at = insertion_point(text);
    if (!at) {
      snprintf(why, cap, "cannot find the body of the module to add the mesh to");
      goto fail;
    }
    sp_strbuf_puts(&mesh, "]>\n");
    sp_strbuf out = SP_STRBUF_INIT;
    sp_strbuf_putn(&out, text, (size_t)(at - text));
    sp_strbuf_puts(&out, "\n  ");
    sp_strbuf_puts(&out, sp_strbuf_str(&mesh));
    sp_strbuf_puts(&out, at);
    if (!sp_strbuf_ok(&out) || !sp_strbuf_ok(&mesh)) {
      sp_strbuf_free(&out);
      snprintf(why, cap, "out of memory");
      goto fail;
    }
    *with_mesh = sp_strbuf_detach(&out);
    /* The mesh is fixed: the axes are not handed to the search. */
    for (size_t i = 0; i < *n_axes; i++) free((*axes)[i]);
    free(*axes);
    *axes = NULL;
    *n_axes = 0;
  }
  sp_strbuf_free(&mesh);
  return 0;
fail:
  sp_strbuf_free(&mesh);
  for (size_t i = 0; i < *n_axes; i++) free((*axes)[i]);
  free(*axes);
  *axes = NULL;
  *n_axes = 0;
  return -1;
}
