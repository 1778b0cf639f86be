/*
 * dense_check.c - a dense<...> literal checked against its type the way MLIR's own parser checks
 * it (sp__mlir_dense_check, see attr_reader_int.h), so that the reader accepts no elements
 * attribute that MLIR would refuse and prints back nothing MLIR could not read.
 *
 * The checks, in MLIR's order: a nested list has one rank and one length per depth; the type is
 * a shaped type (tensor; vector is accepted unchecked) with a static shape; a hex blob
 * ("0x...") has the byte count of one element (a splat) or of all of them; otherwise the
 * list's shape equals the type's shape or the literal is a single scalar (a splat), an empty
 * literal only for a zero-element type; then each element fits the element type: `true` and
 * `false` only for i1, no floats for integer types, integers in range for their width and
 * signedness, floats written as floats (or as hex bit patterns that fit), (re, im) pairs
 * exactly for complex types. Element types the engine does not know (quantized storage,
 * strings) are checked for shape only. Diagnostics use MLIR's words; whole-literal errors point
 * at the `dense` keyword, element errors at the element.
 *
 * Invariant: checks read the collected items only; the lexer is not moved.
 * Memory: nothing is kept; a float literal is copied into p->tmp to be converted.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/sp_limits.h"
#include "mlir/attr_reader_int.h"
#include "mlir/reader_int.h"

/* Longest decimal integer converted exactly; longer ones are surely out of range for every
 * width below DEC_MIN_BITS and refused as too long to check above it. */
#define DEC_MAX_DIGITS 1200
#define DEC_MIN_BITS   3983 /* floor(1199 * log2(10)) */

typedef enum { ELEM_OTHER, ELEM_INT, ELEM_FLOAT } elem_class;

typedef struct elem_info {
  elem_class cls;
  int bits;       /* integer width, or float semantic width */
  bool is_signed; /* siN and index */
  bool is_unsigned;
} elem_info;

static int decimal_width(const char *s) {
  if (!*s) return -1;
  long w = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    w = w * 10 + (*s - '0');
    if (w > SP_TYPE_MAX_BITS) return -1;
  }
  return (int)w;
}

/* What kind of element `e` names ("i32", "ui8", "index", "bf16", "f8E4M3FN", ...). */
static elem_info classify(const char *e) {
  elem_info r = {ELEM_OTHER, 0, false, false};
  if (!e) return r;
  if (strcmp(e, "index") == 0) return (elem_info){ELEM_INT, 64, true, false};
  const char *w = e;
  if (strncmp(w, "si", 2) == 0) r.is_signed = true, w += 2;
  else if (strncmp(w, "ui", 2) == 0) r.is_unsigned = true, w += 2;
  else if (w[0] == 'i') w += 1;
  else w = NULL;
  if (w && (r.bits = decimal_width(w)) >= 0) {
    r.cls = ELEM_INT;
    return r;
  }
  r.is_signed = r.is_unsigned = false;
  static const struct { const char *name; int bits; } floats[] = {
      {"bf16", 16}, {"f16", 16}, {"tf32", 19}, {"f32", 32}, {"f64", 64}, {"f80", 80}, {"f128", 128}};
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
    if (strcmp(e, floats[i].name) == 0) return (elem_info){ELEM_FLOAT, floats[i].bits, false, false};
  /* the small floats: f8E4M3FN, f6E2M3FN, f4E2M1FN, ... */
  if ((e[0] == 'f') && (e[1] == '8' || e[1] == '6' || e[1] == '4') && e[2] == 'E')
    return (elem_info){ELEM_FLOAT, e[1] - '0', false, false};
  return r;
}

/* Bits of storage one element takes in a hex blob: i1 is packed by the bit, every other width
 * rounds up to whole bytes; 0 for element types without a known width. */
static int64_t storage_bits(const char *e) {
  bool cplx = strncmp(e, "complex<", 8) == 0;
  char inner[64];
  if (cplx) {
    size_t n = strlen(e + 8);
    if (n < 2 || n >= sizeof inner || e[8 + n - 1] != '>') return 0;
    memcpy(inner, e + 8, n - 1);
    inner[n - 1] = '\0';
    e = inner;
  }
  elem_info k = classify(e);
  if (k.cls == ELEM_OTHER) return 0;
  int64_t w = k.bits == 1 && !cplx ? 1 : ((int64_t)k.bits + 7) / 8 * 8;
  return cplx ? 2 * w : w;
}

/* ------------------------------------------------------------------ integer magnitudes */

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int bit_length32(uint32_t x) {
  int b = 0;
  while (x) b++, x >>= 1;
  return b;
}

/* The number of bits of an integer token's magnitude (0 for zero) and whether it is a power of
 * two; -1 when a decimal literal is too long to convert (see DEC_MAX_DIGITS). */
static int64_t magnitude_bits(const sp__mlir_token *t, bool *pow2) {
  const char *s = t->p, *end = t->p + t->n;
  *pow2 = false;
  if (t->n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s += 2;
    while (s < end && *s == '0') s++;
    if (s == end) return 0;
    int first = hex_digit(*s);
    bool rest_zero = true;
    for (const char *q = s + 1; q < end; q++) rest_zero = rest_zero && *q == '0';
    *pow2 = rest_zero && (first & (first - 1)) == 0;
    return 4 * (int64_t)(end - s - 1) + bit_length32((uint32_t)first);
  }
  while (s < end && *s == '0') s++;
  if (s == end) return 0;
  if (end - s > DEC_MAX_DIGITS) return -1;
  uint32_t limb[DEC_MAX_DIGITS / 9 + 2]; /* little-endian base 2^32 */
  int n = 0;
  for (; s < end; s++) {
    uint64_t carry = (uint64_t)(*s - '0');
    for (int i = 0; i < n; i++) {
      uint64_t v = (uint64_t)limb[i] * 10 + carry;
      limb[i] = (uint32_t)v;
      carry = v >> 32;
    }
    if (carry) limb[n++] = (uint32_t)carry;
  }
  uint32_t top = limb[n - 1];
  bool lower_zero = true;
  for (int i = 0; i < n - 1; i++) lower_zero = lower_zero && limb[i] == 0;
  *pow2 = lower_zero && (top & (top - 1)) == 0;
  return 32 * (int64_t)(n - 1) + bit_length32(top);
}

/* ------------------------------------------------------------------ elements */

static const char *describe(const sp_type *type, sp_strbuf *sb) {
  sp_strbuf_reset(sb);
  sp_type_print(sb, type);
  return sp_strbuf_ok(sb) ? sp_strbuf_str(sb) : "the type";
}

static int check_int(sp__mlir_parser *p, bool neg, const sp__mlir_token *t, elem_info k) {
  if (k.is_unsigned && neg)
    return sp__mlir_error(p, t, "expected unsigned integer elements, but parsed negative value");
  if (t->kind == SP_TOK_FLOAT)
    return sp__mlir_error(p, t, "expected integer elements, but parsed floating-point");
  if (t->kind == SP_TOK_BARE) {
    if (k.bits != 1 || k.is_signed || k.is_unsigned)
      return sp__mlir_error(p, t, "expected i1 type for 'true' or 'false' values");
    return SP_OK;
  }
  if (t->kind != SP_TOK_INT)
    return sp__mlir_error(p, t, "expected integer elements, but parsed a string");
  bool pow2;
  int64_t b = magnitude_bits(t, &pow2), w = k.bits;
  if (b < 0) {
    if (w < DEC_MIN_BITS) return sp__mlir_error(p, t, "integer constant out of range for type");
    return sp__mlir_error_code(p, SP_ELIMIT, t, "integer literal of %zu digits is too long to check", t->n);
  }
  bool ok;
  if (neg) /* -v fits when 1 <= v <= 2^(w-1) */
    ok = w > 0 && b > 0 && (b <= w - 1 || (b == w && pow2));
  else
    ok = b <= (k.is_signed ? w - 1 : w);
  return ok ? SP_OK : sp__mlir_error(p, t, "integer constant out of range for type");
}

static int check_float(sp__mlir_parser *p, bool neg, const sp__mlir_token *t, elem_info k) {
  if (t->kind == SP_TOK_FLOAT) {
    char *text = sp_arena_strndup(p->tmp, t->p, t->n);
    if (!text) return sp__mlir_oom(p);
    errno = 0;
    double v = strtod(text, NULL);
    if (errno == ERANGE && isinf(v)) return sp__mlir_error(p, t, "floating point value too large");
    return SP_OK;
  }
  if (t->kind != SP_TOK_INT) return sp__mlir_error(p, t, "expected floating point literal");
  if (!(t->n > 2 && (t->p[1] == 'x' || t->p[1] == 'X')))
    return sp__mlir_error(p, t, "unexpected decimal integer literal for a floating point value");
  if (neg) return sp__mlir_error(p, t, "hexadecimal float literal should not have a leading minus");
  bool pow2;
  if (magnitude_bits(t, &pow2) > k.bits)
    return sp__mlir_error(p, t, "hexadecimal float constant out of range for type");
  return SP_OK;
}

static int check_scalar(sp__mlir_parser *p, bool neg, const sp__mlir_token *t, elem_info k) {
  if (k.cls == ELEM_INT) return check_int(p, neg, t, k);
  if (k.cls == ELEM_FLOAT) return check_float(p, neg, t, k);
  return SP_OK;
}

int sp__mlir_dense_check_scalar(sp__mlir_parser *p, bool neg, const sp__mlir_token *t,
                                const char *elem) {
  return check_scalar(p, neg, t, classify(elem));
}

static int check_elements(sp__mlir_parser *p, const sp__mlir_dense_item *v, int n, const char *elem) {
  bool cplx = strncmp(elem, "complex<", 8) == 0;
  elem_info k = classify(elem);
  char inner[64];
  if (cplx) {
    size_t len = strlen(elem + 8);
    if (len < 2 || len >= sizeof inner) return SP_OK;
    memcpy(inner, elem + 8, len - 1);
    inner[len - 1] = '\0';
    k = classify(inner);
  }
  if (k.cls == ELEM_OTHER) return SP_OK;
  for (int i = 0; i < n; i++) {
    const sp__mlir_dense_item *it = &v[i];
    if (it->kind != 0) continue;
    if (it->complex != cplx)
      return sp__mlir_error(p, &it->tok, cplx ? "expected a complex element (re, im) for element type %s"
                                              : "expected a real element for element type %s, got a complex (re, im) pair",
                            elem);
    int rc = check_scalar(p, it->neg, &it->tok, k);
    if (!rc && cplx) rc = check_scalar(p, it->neg2, &it->tok2, k);
    if (rc) return rc;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ shape */

/* The shape of a nested list: every leaf at one depth, every list at one depth of one length
 * (which is MLIR's rule that sibling sub-lists have equal shapes, applied level by level). */
static int list_shape(sp__mlir_parser *p, const sp__mlir_dense_item *v, int n, int64_t *dims,
                      int *rank) {
  int64_t count[SP_MAX_NESTING + 1], open_count[SP_MAX_NESTING + 1];
  int open_at[SP_MAX_NESTING + 1];
  int depth = 0, leaf_depth = -1, max_list = -1;
  for (int d = 0; d <= SP_MAX_NESTING; d++) count[d] = -1;
  for (int i = 0; i < n; i++) {
    const sp__mlir_dense_item *it = &v[i];
    if (it->kind == 2) {
      depth--;
      int64_t c = open_count[depth];
      if (count[depth] < 0) count[depth] = c;
      else if (count[depth] != c) goto ragged;
      continue;
    }
    if (depth > 0) open_count[depth - 1]++;
    if (it->kind == 0) {
      if (max_list >= depth || (leaf_depth >= 0 && leaf_depth != depth)) goto ragged;
      leaf_depth = depth;
      continue;
    }
    if ((leaf_depth >= 0 && depth >= leaf_depth) || depth >= SP_MAX_NESTING) goto ragged;
    if (depth > max_list) max_list = depth;
    open_at[depth] = i;
    open_count[depth] = 0;
    depth++;
    continue;
  ragged:
    return sp__mlir_error(p, &v[it->kind == 2 ? open_at[depth] : i].tok,
                          "tensor literal is invalid; ranks are not consistent between elements");
  }
  *rank = leaf_depth >= 0 ? leaf_depth : max_list + 1;
  for (int d = 0; d < *rank; d++) dims[d] = count[d];
  return SP_OK;
}

static void put_shape(sp_strbuf *sb, const int64_t *dims, int rank) {
  sp_strbuf_putc(sb, '[');
  for (int d = 0; d < rank; d++) sp_strbuf_printf(sb, d ? ", %lld" : "%lld", (long long)dims[d]);
  sp_strbuf_putc(sb, ']');
}

static int check_shape(sp__mlir_parser *p, const sp__mlir_token *at, const sp__mlir_dense_item *v,
                       int n, const sp_type *type) {
  int64_t dims[SP_MAX_NESTING + 1];
  int rank = 0;
  int rc = list_shape(p, v, n, dims, &rank);
  if (rc) return rc;
  bool same = rank == type->rank;
  for (int d = 0; same && d < rank; d++) same = dims[d] == type->dims[d];
  if (same) return SP_OK;
  sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
  put_shape(&a, dims, rank);
  put_shape(&b, type->dims, type->rank);
  rc = sp_strbuf_ok(&a) && sp_strbuf_ok(&b)
           ? sp__mlir_error(p, at, "inferred shape of elements literal (%s) does not match type (%s)",
                            sp_strbuf_str(&a), sp_strbuf_str(&b))
           : sp__mlir_oom(p);
  sp_strbuf_free(&a);
  sp_strbuf_free(&b);
  return rc;
}

/* "0x" and an even number of hex digits, inside the quotes of `t`; byte count in *bytes. */
static bool hex_blob(const sp__mlir_token *t, int64_t *bytes, int *first, int *only) {
  const char *s = t->p + 1, *end = t->p + t->n - 1;
  if (end - s < 2 || s[0] != '0' || s[1] != 'x' || (end - s) % 2) return false;
  for (const char *q = s + 2; q < end; q++)
    if (hex_digit(*q) < 0) return false;
  *bytes = (end - s - 2) / 2;
  *first = *bytes ? hex_digit(s[2]) * 16 + hex_digit(s[3]) : -1;
  *only = *bytes == 1;
  return true;
}

static int check_hex(sp__mlir_parser *p, const sp__mlir_token *at, const sp__mlir_token *t,
                     const sp_type *type, int64_t count) {
  int64_t bits = storage_bits(type->elem), bytes;
  int first, only;
  if (!bits) return SP_OK; /* an element type the engine does not size */
  if (!hex_blob(t, &bytes, &first, &only))
    return sp__mlir_error(p, t, "expected string containing hex digits starting with `0x`");
  bool ok;
  if (count < 0) ok = true; /* an element count beyond int64: later stages name it */
  else if (bits == 1) ok = (only && (first == 0 || first == 0xff)) || bytes == (count + 7) / 8;
  else ok = bytes * 8 == bits || (count <= INT64_MAX / bits && bytes * 8 == bits * count);
  if (ok) return SP_OK;
  sp_strbuf sb = SP_STRBUF_INIT;
  int rc = sp__mlir_error(p, at, "elements hex data size is invalid for provided type: %s",
                          describe(type, &sb));
  sp_strbuf_free(&sb);
  return rc;
}

static bool is_vector(const sp_type *t) {
  return t->kind == SP_TYPE_OTHER && t->text && strncmp(t->text, "vector<", 7) == 0;
}

int sp__mlir_dense_check(sp__mlir_parser *p, const sp__mlir_token *at, const sp__mlir_dense_item *v,
                         int n, const sp_type *type) {
  bool hex = n == 1 && v[0].kind == 0 && !v[0].complex && v[0].tok.kind == SP_TOK_STRING;
  int rc;
  if (!hex && n > 0 && v[0].kind == 1) {
    int64_t dims[SP_MAX_NESTING + 1];
    int rank;
    if ((rc = list_shape(p, v, n, dims, &rank))) return rc;
  }
  if (!type) return sp__mlir_error(p, at, "expected ':' and a type after the elements literal");
  if (is_vector(type)) return SP_OK; /* shaped, but not a type the engine reads */
  if (type->kind != SP_TYPE_TENSOR)
    return sp__mlir_error(p, at, "elements literal must be a shaped type");
  if (!sp_type_is_static_tensor(type))
    return sp__mlir_error(p, at, "elements literal type must have static shape");
  int64_t count = sp_type_num_elements(type);
  if (hex) return check_hex(p, at, &v[0].tok, type, count);
  if (n > 0 && v[0].kind == 1 && (rc = check_shape(p, at, v, n, type))) return rc;
  if (n == 0 && count != 0) {
    sp_strbuf sb = SP_STRBUF_INIT;
    rc = sp__mlir_error(p, at, "parsed zero elements, but type (%s) expected at least 1",
                        describe(type, &sb));
    sp_strbuf_free(&sb);
    return rc;
  }
  return check_elements(p, v, n, type->elem);
}
