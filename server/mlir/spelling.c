/*
 * spelling.c - MLIR's spelling of literals (see spelling_int.h).
 */
#include "mlir/spelling_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp__mlir_put_string(sp_strbuf *sb, const char *s, size_t n) {
  static const char hex[] = "0123456789ABCDEF";
  sp_strbuf_putc(sb, '"');
  size_t run = 0; /* copy runs of plain characters in one call */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    if (plain) {
      run++;
      continue;
    }
    sp_strbuf_putn(sb, s + i - run, run);
    run = 0;
    if (c == '\\') {
      sp_strbuf_puts(sb, "\\\\");
    } else {
      char esc[3] = {'\\', hex[c >> 4], hex[c & 15]};
      sp_strbuf_putn(sb, esc, 3);
    }
  }
  sp_strbuf_putn(sb, s + n - run, run);
  sp_strbuf_putc(sb, '"');
}

bool sp__mlir_is_bare_id(const char *s) {
  if (!s || !*s) return false;
  char c = s[0];
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return false;
  for (s++; *s; s++) {
    c = *s;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '$' || c == '.'))
      return false;
  }
  return true;
}

void sp__mlir_put_symbol(sp_strbuf *sb, const char *name) {
  sp_strbuf_putc(sb, '@');
  if (sp__mlir_is_bare_id(name))
    sp_strbuf_puts(sb, name);
  else
    sp__mlir_put_string(sb, name, strlen(name));
}

void sp__mlir_put_attr_name(sp_strbuf *sb, const char *name) {
  if (sp__mlir_is_bare_id(name))
    sp_strbuf_puts(sb, name);
  else
    sp__mlir_put_string(sb, name, strlen(name));
}

void sp__mlir_put_float(sp_strbuf *sb, double v, int bits) {
  char buf[64];
  /* Narrow first: 1e200 as an f32 is inf, printed as its bit pattern like any inf. */
  if (bits && bits <= 32) v = (double)(float)v;
  if (isnan(v) || isinf(v)) {
    if (bits == 64) {
      uint64_t u;
      memcpy(&u, &v, sizeof u);
      sp_strbuf_printf(sb, "0x%016" PRIX64, u);
    } else {
      float f = (float)v;
      uint32_t u;
      memcpy(&u, &f, sizeof u);
      if (bits == 16) sp_strbuf_printf(sb, "0x%04" PRIX32, (uint32_t)(u >> 16));
      else sp_strbuf_printf(sb, "0x%08" PRIX32, u);
    }
    return;
  }
  snprintf(buf, sizeof buf, "%.6e", v);
  double back = strtod(buf, NULL);
  bool exact = bits && bits <= 32 ? (float)back == (float)v : back == v;
  if (!exact) {
    snprintf(buf, sizeof buf, "%.17g", v);
    if (!strchr(buf, '.')) {
      /* Keep it a float literal: 1e+300 -> 1.0e+300, 12345678901234567 -> ...0 */
      char *e = strchr(buf, 'e');
      char tail[32] = "";
      if (e) {
        snprintf(tail, sizeof tail, "%s", e);
        *e = '\0';
      }
      sp_strbuf_printf(sb, "%s.0%s", buf, tail);
      return;
    }
  }
  sp_strbuf_puts(sb, buf);
}

void sp__mlir_put_ints(sp_strbuf *sb, const int64_t *v, int n) {
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    sp_strbuf_put_i64(sb, v[i]);
  }
}

int sp__mlir_float_bits(const char *e) {
  if (!e) return 0;
  if (strcmp(e, "bf16") == 0 || strcmp(e, "f16") == 0) return 16;
  if (strcmp(e, "f32") == 0 || strcmp(e, "tf32") == 0) return 32;
  if (strcmp(e, "f64") == 0) return 64;
  if (strncmp(e, "f8", 2) == 0 || strncmp(e, "f4", 2) == 0 || strncmp(e, "f6", 2) == 0) return 8;
  return 0;
}

bool sp__mlir_is_int_elem(const char *e) {
  if (!e) return false;
  if (strcmp(e, "index") == 0) return true;
  if ((e[0] == 'u' || e[0] == 's') && e[1] == 'i') e++;
  if (e[0] != 'i' || !e[1]) return false;
  for (e++; *e; e++)
    if (*e < '0' || *e > '9') return false;
  return true;
}
