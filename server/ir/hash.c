/*
 * hash.c - canonical module hash over SHA-256 (see hash.h).
 *
 * The canonical form is a stream of tagged items: a one-byte tag, then integers as varints,
 * length-prefixed strings, and counts before lists (or an END tag after
 * a block's ops). Ops are visited in pre-order; a value gets its number the first time it is
 * seen (as a definition or a use), so the numbers depend on the graph only, never on names.
 *
 * Small updates are batched in h->buf and handed to OpenSSL 4 KiB at a time.
 */
#include "ir/hash.h"
#include "ir/grow.h"
#include "ir/ptr_map.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

/* Item tags; values are part of the hash, so never renumber them. */
enum {
  T_NULL = 0x01,
  T_STR = 0x02,
  T_TEXT = 0x03,
  T_MODULE = 0x10,
  T_OP = 0x11,
  T_REGION = 0x12,
  T_BLOCK = 0x13,
  T_END = 0x14,
  T_VALUE = 0x15,
  T_UNSET_VALUE = 0x16,
  T_FUNC = 0x17,
  T_ATTRS = 0x18,
  T_ATTR = 0x19,
  T_TYPE_TENSOR = 0x20,
  T_TYPE_TUPLE = 0x21,
  T_TYPE_TOKEN = 0x22,
  T_TYPE_OTHER = 0x23,
  T_MESH = 0x30,
  T_SHARDING = 0x31,
  T_MESH_NAMED = 0x32,
  T_MESH_INLINE = 0x33,
  T_AXIS = 0x34,
  T_RULE = 0x35,
  T_FUNC_REF = 0x36
};

/* ------------------------------------------------------------------ the byte stream */

static void fail(sp_hasher *h, int code) {
  if (h->status == SP_OK) h->status = code;
}

static void flush(sp_hasher *h) {
  if (h->len == 0) return;
  if (h->status == SP_OK && EVP_DigestUpdate((EVP_MD_CTX *)h->md, h->buf, h->len) != 1)
    fail(h, SP_EINTERNAL);
  h->len = 0;
}

static void put_slow(sp_hasher *h, const unsigned char *s, size_t n) {
  while (n > 0 && h->status == SP_OK) {
    if (h->len == sizeof h->buf) flush(h);
    size_t k = sizeof h->buf - h->len;
    if (k > n) k = n;
    memcpy(h->buf + h->len, s, k);
    h->len += k;
    s += k;
    n -= k;
  }
}

/* Most items are a few bytes: copy them straight into the batch. */
static inline void put_raw(sp_hasher *h, const void *p, size_t n) {
  if (h->len + n <= sizeof h->buf) {
    memcpy(h->buf + h->len, p, n);
    h->len += n;
  } else {
    put_slow(h, p, n);
  }
}

void sp_hasher_update_bytes(sp_hasher *h, const void *p, size_t n) {
  if (h->status == SP_OK) put_raw(h, p, n);
}

static void put_tag(sp_hasher *h, unsigned char tag) { put_raw(h, &tag, 1); }

/* Integers are written as LEB128 varints (self-delimiting, so the stream stays unambiguous;
 * the small numbers that dominate take one byte). Signed ones are zigzag-encoded first. */
void sp_hasher_update_u64(sp_hasher *h, uint64_t v) {
  unsigned char b[10];
  size_t n = 0;
  do {
    unsigned char byte = v & 0x7f;
    v >>= 7;
    b[n++] = byte | (v ? 0x80 : 0);
  } while (v);
  put_raw(h, b, n);
}

void sp_hasher_update_i64(sp_hasher *h, int64_t v) {
  sp_hasher_update_u64(h, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void sp_hasher_update_f64(sp_hasher *h, double v) {
  unsigned char b[8];
  uint64_t bits;
  if (v == 0) v = 0; /* -0.0 and 0.0 are one value */
  memcpy(&bits, &v, sizeof bits);
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(bits >> (8 * i));
  put_raw(h, b, 8);
}

void sp_hasher_update_str(sp_hasher *h, const char *s) {
  if (!s) {
    put_tag(h, T_NULL);
    return;
  }
  size_t n = strlen(s);
  put_tag(h, T_STR);
  sp_hasher_update_u64(h, n);
  sp_hasher_update_bytes(h, s, n);
}

/* Verbatim MLIR text with its whitespace normalised: outside string literals, a run of blanks
 * becomes one space between two word characters and disappears elsewhere, so "dense<1> :
 * tensor<i32>" and "dense<1>:tensor<i32>" agree while "a b" and "ab" stay apart. With `h` NULL
 * only the normalised length is computed (the first of two passes). */
static bool is_blank(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
static bool is_word(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '$';
}

static size_t normalise_text(sp_hasher *h, const char *s) {
  size_t n = 0;
  bool in_str = false;
  int last = 0; /* last character emitted, 0 at start */
  const char *p = s;
  while (*p) {
    if (!in_str && is_blank((unsigned char)*p)) {
      while (*p && is_blank((unsigned char)*p)) p++;
      if (last && *p && is_word(last) && is_word((unsigned char)*p)) {
        if (h) sp_hasher_update_bytes(h, " ", 1);
        n++;
      }
      continue;
    }
    /* A run that ends before the next blank outside a string literal is copied as it is. */
    const char *q = p;
    while (*q && (in_str || !is_blank((unsigned char)*q))) {
      if (in_str && *q == '\\' && q[1])
        q++; /* an escaped character never ends the literal */
      else if (*q == '"')
        in_str = !in_str;
      q++;
    }
    if (h) sp_hasher_update_bytes(h, p, (size_t)(q - p));
    n += (size_t)(q - p);
    last = (unsigned char)q[-1];
    p = q;
  }
  return n;
}

static void put_text(sp_hasher *h, const char *s) {
  if (!s) {
    put_tag(h, T_NULL);
    return;
  }
  put_tag(h, T_TEXT);
  sp_hasher_update_u64(h, normalise_text(NULL, s));
  normalise_text(h, s);
}

/* ------------------------------------------------------------------ setup */

int sp_hasher_init(sp_hasher *h) {
  memset(h, 0, sizeof *h);
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  if (!ctx) {
    h->status = SP_ENOMEM;
    return SP_ENOMEM;
  }
  if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
    EVP_MD_CTX_free(ctx);
    h->status = SP_EINTERNAL;
    return SP_EINTERNAL;
  }
  h->md = ctx;
  return SP_OK;
}

void sp_hasher_dispose(sp_hasher *h) {
  EVP_MD_CTX_free((EVP_MD_CTX *)h->md);
  h->md = NULL;
  sp_ptr_map_free(&h->values);
  free(h->sorted);
  free(h->funcs);
  h->sorted = NULL;
  h->funcs = NULL;
  h->nfuncs = h->capfuncs = 0;
  h->capsorted = 0;
}

int sp_hasher_final(sp_hasher *h, uint8_t out[SP_HASH_BYTES], sp_err *err) {
  flush(h);
  unsigned int n = 0;
  if (h->status == SP_OK && (!h->md || EVP_DigestFinal_ex((EVP_MD_CTX *)h->md, out, &n) != 1 ||
                             n != SP_HASH_BYTES))
    fail(h, SP_EINTERNAL);
  int rc = h->status;
  sp_hasher_dispose(h);
  if (rc == SP_ENOMEM) return sp_err_set(err, rc, "out of memory while hashing");
  if (rc != SP_OK) return sp_err_set(err, rc, "SHA-256 failed in OpenSSL");
  return SP_OK;
}

char *sp_hash_hex(const uint8_t digest[SP_HASH_BYTES], char out[SP_HASH_HEX_BYTES]) {
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < SP_HASH_BYTES; i++) {
    out[2 * i] = hex[digest[i] >> 4];
    out[2 * i + 1] = hex[digest[i] & 15];
  }
  out[2 * SP_HASH_BYTES] = '\0';
  return out;
}

/* ------------------------------------------------------------------ value numbers */

/* The number of `v`, given on first sight (the count of values seen before it). -1 after an
 * allocation failure. */
static int64_t value_number(sp_hasher *h, const sp_value *v) {
  sp_ptr_map_slot *s = sp_ptr_map_slot_of(&h->values, v, (intptr_t)h->values.n, NULL);
  if (!s) {
    fail(h, SP_ENOMEM);
    return -1;
  }
  return (int64_t)s->val;
}

static void put_value(sp_hasher *h, const sp_value *v) {
  if (!v) {
    put_tag(h, T_UNSET_VALUE);
    return;
  }
  put_tag(h, T_VALUE);
  sp_hasher_update_i64(h, value_number(h, v));
}

/* ------------------------------------------------------------------ structured items */

void sp_hasher_update_type(sp_hasher *h, const sp_type *t) {
  if (!t) {
    put_tag(h, T_NULL);
    return;
  }
  switch (t->kind) {
    case SP_TYPE_TENSOR:
      put_tag(h, T_TYPE_TENSOR);
      sp_hasher_update_i64(h, t->rank);
      for (int i = 0; i < t->rank; i++) sp_hasher_update_i64(h, t->dims[i]);
      put_text(h, t->elem);
      put_text(h, t->encoding);
      return;
    case SP_TYPE_TUPLE:
      put_tag(h, T_TYPE_TUPLE);
      sp_hasher_update_i64(h, t->nelems);
      for (int i = 0; i < t->nelems; i++) sp_hasher_update_type(h, t->elems[i]);
      return;
    case SP_TYPE_TOKEN:
      put_tag(h, T_TYPE_TOKEN);
      put_text(h, t->text);
      return;
    case SP_TYPE_OTHER:
      put_tag(h, T_TYPE_OTHER);
      put_text(h, t->text);
      return;
  }
  fail(h, SP_EINTERNAL);
}

/* Explicit ids 0..N-1 in order mean the default order. */
static bool ids_are_iota(const sp_mesh *m) {
  if (m->naxes == 0 || m->ndevice_ids != sp_mesh_num_devices(m)) return false;
  for (int i = 0; i < m->ndevice_ids; i++)
    if (m->device_ids[i] != i) return false;
  return true;
}

void sp_hasher_update_mesh(sp_hasher *h, const sp_mesh *m) {
  if (!m) {
    put_tag(h, T_NULL);
    return;
  }
  put_tag(h, T_MESH);
  sp_hasher_update_i64(h, m->naxes);
  for (int i = 0; i < m->naxes; i++) {
    sp_hasher_update_str(h, m->axes[i].name);
    sp_hasher_update_i64(h, m->axes[i].size);
  }
  int nids = ids_are_iota(m) ? 0 : m->ndevice_ids;
  sp_hasher_update_i64(h, nids);
  for (int i = 0; i < nids; i++) sp_hasher_update_i64(h, m->device_ids[i]);
}

static void put_axes(sp_hasher *h, const sp_axis_ref *v, int n) {
  sp_hasher_update_i64(h, n);
  for (int i = 0; i < n; i++) {
    put_tag(h, T_AXIS);
    sp_hasher_update_str(h, v[i].name);
    sp_hasher_update_i64(h, v[i].pre);
    sp_hasher_update_i64(h, v[i].size);
  }
}

void sp_hasher_update_sharding(sp_hasher *h, const sp_sharding *s) {
  if (!s) {
    put_tag(h, T_NULL);
    return;
  }
  put_tag(h, T_SHARDING);
  if (s->inline_mesh) {
    put_tag(h, T_MESH_INLINE);
    sp_hasher_update_mesh(h, s->inline_mesh);
  } else {
    put_tag(h, T_MESH_NAMED);
    sp_hasher_update_str(h, s->mesh_name);
  }
  sp_hasher_update_i64(h, s->rank);
  for (int d = 0; d < s->rank; d++) {
    const sp_dim_sharding *dim = &s->dims[d];
    put_axes(h, dim->axes, dim->naxes);
    sp_hasher_update_i64(h, dim->closed ? 1 : 0);
    sp_hasher_update_i64(h, dim->priority);
  }
  put_axes(h, s->replicated, s->nreplicated);
  put_axes(h, s->unreduced, s->nunreduced);
  const char *kind = s->unreduced_kind;
  if (kind && strcmp(kind, "sum") == 0) kind = NULL; /* sum is the default */
  sp_hasher_update_str(h, kind);
}

static void put_rule_tensors(sp_hasher *h, const sp_rule_tensor *v, int n) {
  sp_hasher_update_i64(h, n);
  for (int i = 0; i < n; i++) {
    sp_hasher_update_i64(h, v[i].rank);
    for (int d = 0; d < v[i].rank; d++) {
      sp_hasher_update_i64(h, v[i].dims[d].nfactors);
      for (int k = 0; k < v[i].dims[d].nfactors; k++)
        sp_hasher_update_i64(h, v[i].dims[d].factors[k]);
    }
  }
}

void sp_hasher_update_rule(sp_hasher *h, const sp_rule *r) {
  if (!r) {
    put_tag(h, T_NULL);
    return;
  }
  put_tag(h, T_RULE);
  sp_hasher_update_i64(h, r->nfactors);
  for (int f = 0; f < r->nfactors; f++) {
    sp_hasher_update_i64(h, r->factors[f].size);
    sp_hasher_update_i64(h, r->factors[f].kind);
    sp_hasher_update_i64(h, r->factors[f].blocked ? 1 : 0);
  }
  put_rule_tensors(h, r->operands, r->noperands);
  put_rule_tensors(h, r->results, r->nresults);
  sp_hasher_update_i64(h, r->custom ? 1 : 0);
}

/* A symbol that names one of the module's functions: its position (or -1 for the planned
 * "main" of a module with several functions) instead of its spelling. False for any other
 * string. */
static bool put_func_ref(sp_hasher *h, const char *s) {
  if (!s || h->nfuncs == 0) return false;
  for (int i = 0; i < h->nfuncs; i++) {
    if (strcmp(h->funcs[i], s) != 0) continue;
    put_tag(h, T_FUNC_REF);
    sp_hasher_update_i64(h, h->main_named && strcmp(s, "main") == 0 ? -1 : i);
    return true;
  }
  return false;
}

static void put_attr(sp_hasher *h, const sp_attr *a) {
  put_tag(h, T_ATTR);
  sp_hasher_update_str(h, a->name);
  sp_hasher_update_i64(h, a->kind);
  if ((a->kind == SP_ATTR_SYMBOL || (a->kind == SP_ATTR_STR && strcmp(a->name, "sym_name") == 0))
      && put_func_ref(h, a->u.s))
    return;
  switch (a->kind) {
    case SP_ATTR_UNIT:
      return;
    case SP_ATTR_BOOL:
      sp_hasher_update_i64(h, a->u.b ? 1 : 0);
      return;
    case SP_ATTR_INT:
      sp_hasher_update_i64(h, a->u.i);
      return;
    case SP_ATTR_INTS:
      sp_hasher_update_i64(h, a->u.ints.n);
      for (int i = 0; i < a->u.ints.n; i++) sp_hasher_update_i64(h, a->u.ints.v[i]);
      return;
    case SP_ATTR_STR:
    case SP_ATTR_SYMBOL:
    case SP_ATTR_ENUM:
      sp_hasher_update_str(h, a->u.s);
      return;
    case SP_ATTR_TEXT:
      put_text(h, a->u.s);
      return;
    case SP_ATTR_SHARDING:
      sp_hasher_update_sharding(h, a->u.sharding);
      return;
    case SP_ATTR_SHARDINGS:
      sp_hasher_update_i64(h, a->u.shardings.n);
      for (int i = 0; i < a->u.shardings.n; i++)
        sp_hasher_update_sharding(h, a->u.shardings.v[i]);
      return;
    case SP_ATTR_AXES:
      put_axes(h, a->u.axes.v, a->u.axes.n);
      return;
    case SP_ATTR_RULE:
      sp_hasher_update_rule(h, a->u.rule);
      return;
    case SP_ATTR_MESH:
      sp_hasher_update_mesh(h, a->u.mesh);
      return;
    case SP_ATTR_DIM_AXES:
      sp_hasher_update_i64(h, a->u.dim_axes.n);
      for (int i = 0; i < a->u.dim_axes.n; i++)
        put_axes(h, a->u.dim_axes.v[i].axes, a->u.dim_axes.v[i].naxes);
      return;
    case SP_ATTR_ALL_TO_ALL:
      sp_hasher_update_i64(h, a->u.all_to_all.n);
      for (int i = 0; i < a->u.all_to_all.n; i++) {
        const sp_all_to_all_param *q = &a->u.all_to_all.v[i];
        put_axes(h, q->axes, q->naxes);
        sp_hasher_update_i64(h, q->src_dim);
        sp_hasher_update_i64(h, q->tgt_dim);
      }
      return;
  }
  fail(h, SP_EINTERNAL);
}

static int compare_attr_names(const void *x, const void *y) {
  const sp_attr *a = *(const sp_attr *const *)x, *b = *(const sp_attr *const *)y;
  return strcmp(a->name, b->name);
}

/* A dictionary, sorted by name so that its written order does not matter. */
static void put_attrs(sp_hasher *h, const sp_attrs *d) {
  put_tag(h, T_ATTRS);
  int n = d ? d->n : 0;
  sp_hasher_update_i64(h, n);
  if (n == 0) return;
  if (sp_grow((void **)&h->sorted, &h->capsorted, n - 1, sizeof *h->sorted)) {
    fail(h, SP_ENOMEM);
    return;
  }
  for (int i = 0; i < n; i++) h->sorted[i] = &d->v[i];
  qsort(h->sorted, (size_t)n, sizeof *h->sorted, compare_attr_names);
  /* put_attr never sorts, so the scratch array stays ours until the loop ends. */
  for (int i = 0; i < n; i++) put_attr(h, h->sorted[i]);
}

/* ------------------------------------------------------------------ the module */

static void put_op(sp_hasher *h, const sp_op *op);

static void put_func_info(sp_hasher *h, const sp_func_info *fi) {
  if (!fi) {
    put_tag(h, T_NULL);
    return;
  }
  put_tag(h, T_FUNC);
  sp_hasher_update_i64(h, fi->nargs);
  for (int i = 0; i < fi->nargs; i++) {
    sp_hasher_update_type(h, fi->arg_types ? fi->arg_types[i] : NULL);
    put_attrs(h, fi->decl_arg_attrs ? &fi->decl_arg_attrs[i] : NULL);
  }
  sp_hasher_update_i64(h, fi->nresults);
  for (int i = 0; i < fi->nresults; i++) {
    sp_hasher_update_type(h, fi->result_types ? fi->result_types[i] : NULL);
    sp_hasher_update_sharding(h, fi->result_shardings ? fi->result_shardings[i] : NULL);
    put_attrs(h, fi->result_attrs ? &fi->result_attrs[i] : NULL);
  }
}

static void put_block(sp_hasher *h, const sp_block *b) {
  put_tag(h, T_BLOCK);
  sp_hasher_update_i64(h, b->nargs);
  for (int i = 0; i < b->nargs; i++) {
    const sp_value *arg = b->args[i];
    put_value(h, arg);
    sp_hasher_update_type(h, arg->type);
    sp_hasher_update_sharding(h, arg->sharding);
    put_attrs(h, &arg->attrs);
  }
  for (const sp_op *op = b->first; op && h->status == SP_OK; op = op->next) put_op(h, op);
  put_tag(h, T_END);
}

static void put_op(sp_hasher *h, const sp_op *op) {
  put_tag(h, T_OP);
  sp_hasher_update_str(h, op->name);
  sp_hasher_update_i64(h, op->noperands);
  for (int i = 0; i < op->noperands; i++) put_value(h, op->operands[i].value);
  sp_hasher_update_i64(h, op->nresults);
  for (int i = 0; i < op->nresults; i++) {
    const sp_value *r = &op->results[i];
    put_value(h, r);
    sp_hasher_update_type(h, r->type);
    sp_hasher_update_sharding(h, r->sharding);
  }
  put_attrs(h, &op->attrs);
  put_func_info(h, op->func);
  sp_hasher_update_i64(h, op->nregions);
  for (int r = 0; r < op->nregions; r++) {
    put_tag(h, T_REGION);
    sp_hasher_update_i64(h, op->regions[r].nblocks);
    for (int b = 0; b < op->regions[r].nblocks; b++) put_block(h, op->regions[r].blocks[b]);
  }
}

/* The function symbols of the module body, in order (their names are hashed by position). */
static void collect_funcs(sp_hasher *h, const sp_module *m) {
  for (const sp_op *op = sp_module_body(m)->first; op && h->status == SP_OK; op = op->next) {
    const char *name = op->kind == SP_OP_FUNC ? sp_op_get_str(op, "sym_name") : NULL;
    if (!name) continue;
    if (sp_grow((void **)&h->funcs, &h->capfuncs, h->nfuncs, sizeof *h->funcs)) {
      fail(h, SP_ENOMEM);
      return;
    }
    h->funcs[h->nfuncs++] = name;
  }
  h->main_named = h->nfuncs > 1;
}

void sp_hasher_update_module(sp_hasher *h, const sp_module *m) {
  if (h->status != SP_OK) return;
  /* Numbers restart with each module, so a module hashes alike wherever it is mixed in. */
  sp_ptr_map_clear(&h->values);
  h->nfuncs = 0;
  put_tag(h, T_MODULE);
  if (!m || !m->op) {
    put_tag(h, T_NULL);
    return;
  }
  collect_funcs(h, m);
  put_op(h, m->op);
  h->nfuncs = 0;
}

int sp_hash_module(const sp_module *m, uint8_t out[SP_HASH_BYTES], sp_err *err) {
  sp_hasher h;
  if (sp_hasher_init(&h) != SP_OK) {
    int rc = h.status;
    sp_hasher_dispose(&h);
    return sp_err_set(err, rc, "cannot start SHA-256 (OpenSSL)");
  }
  sp_hasher_update_module(&h, m);
  return sp_hasher_final(&h, out, err);
}
