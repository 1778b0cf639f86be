/*
 * names.c - MLIR-style SSA value naming for the printer (see names_int.h).
 *
 * Two hash tables: `slots` (the engine's pointer map, ir/ptr_map.h) maps a value or block to
 * its number, or to its suggested name as an index into `names`; `used` is the set of
 * suggested names visible in the region being numbered, with an undo log so that leaving a
 * subtree forgets its names in O(names).
 */
#include "mlir/names_int.h"
#include "ir/ptr_map.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/grow.h"

typedef struct used_entry {
  const char *s;
  uint32_t hash;
  bool live;
} used_entry;

typedef struct region_ctx {
  const sp_region *r;
  int next_value, next_arg, next_conflict;
  int undo_mark;
} region_ctx;

/* A slot's value: a number (value number or block index) when >= 0, else NAMED(i), the
 * suggested name names[i]. */
#define NAMED(i) (-1 - (intptr_t)(i))
#define NAME_INDEX(val) ((size_t)(-1 - (val)))

struct sp__mlir_namer {
  sp_ptr_map slots;      /* sp_value* or sp_block* -> number or NAMED(i) */
  const char **names;    /* suggested names (without '%'), in bump storage */
  size_t nnames, capnames;
  used_entry *used;      /* open addressing; entries are never moved while live */
  size_t used_mask, nused;
  size_t *undo;          /* indices into `used`, in insertion order */
  size_t nundo, capundo;
  region_ctx *stack;
  size_t nstack, capstack;
  int next_value, next_arg, next_conflict;
  char *strings;         /* bump storage for generated names */
  size_t strings_used, strings_cap;
  char **old_strings;    /* full string blocks kept until free */
  size_t nold, capold;
  bool oom;
};

/* ------------------------------------------------------------------ storage */

static const char *store_string(sp__mlir_namer *n, const char *s, size_t len) {
  if (n->strings_used + len + 1 > n->strings_cap) {
    size_t cap = len + 1 > 16384 ? len + 1 : 16384;
    char *blk = malloc(cap);
    if (!blk) { n->oom = true; return NULL; }
    if (n->strings) {
      if (sp_grow_z((void **)&n->old_strings, &n->capold, n->nold, sizeof *n->old_strings)) {
        free(blk);
        n->oom = true;
        return NULL;
      }
      n->old_strings[n->nold++] = n->strings;
    }
    n->strings = blk;
    n->strings_cap = cap;
    n->strings_used = 0;
  }
  char *dst = n->strings + n->strings_used;
  memcpy(dst, s, len);
  dst[len] = '\0';
  n->strings_used += len + 1;
  return dst;
}

static const sp_ptr_map_slot *slot_find(const sp__mlir_namer *n, const void *key) {
  return sp_ptr_map_find(&n->slots, key);
}

/* Gives `key` the slot value `val` (a number or NAMED(i)). */
static void slot_set(sp__mlir_namer *n, const void *key, intptr_t val) {
  sp_ptr_map_slot *s = sp_ptr_map_slot_of(&n->slots, key, val, NULL);
  if (!s) {
    n->oom = true;
    return;
  }
  s->val = val;
}

/* ------------------------------------------------------------------ the used-name set */

static uint32_t str_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* Tombstones stay in place (live = false) so probe chains remain intact; the table is rebuilt
 * only when it fills up. */
static bool used_grow(sp__mlir_namer *n) {
  size_t cap = 256;
  while (cap < (n->nundo + 1) * 4) cap *= 2;
  used_entry *nu = calloc(cap, sizeof *nu);
  size_t *remap = NULL;
  if (!nu) { n->oom = true; return false; }
  if (n->used) {
    remap = malloc((n->used_mask + 1) * sizeof *remap);
    if (!remap) { free(nu); n->oom = true; return false; }
    for (size_t i = 0; i <= n->used_mask; i++) {
      remap[i] = SIZE_MAX;
      if (!n->used[i].s || !n->used[i].live) continue;
      size_t j = n->used[i].hash & (cap - 1);
      while (nu[j].s) j = (j + 1) & (cap - 1);
      nu[j] = n->used[i];
      remap[i] = j;
    }
    size_t k = 0;
    for (size_t i = 0; i < n->nundo; i++)
      if (remap[n->undo[i]] != SIZE_MAX) n->undo[k++] = remap[n->undo[i]];
    n->nundo = k;
    free(remap);
    free(n->used);
  }
  n->used = nu;
  n->used_mask = cap - 1;
  n->nused = n->nundo;
  return true;
}

static bool used_has(const sp__mlir_namer *n, const char *s) {
  if (!n->used) return false;
  uint32_t h = str_hash(s);
  size_t j = h & n->used_mask;
  while (n->used[j].s) {
    if (n->used[j].live && n->used[j].hash == h && strcmp(n->used[j].s, s) == 0) return true;
    j = (j + 1) & n->used_mask;
  }
  return false;
}

static bool used_add(sp__mlir_namer *n, const char *s) {
  if ((n->nused + 1) * 2 > (n->used ? n->used_mask + 1 : 0) && !used_grow(n)) return false;
  uint32_t h = str_hash(s);
  size_t j = h & n->used_mask;
  while (n->used[j].s) j = (j + 1) & n->used_mask;
  n->used[j].s = s;
  n->used[j].hash = h;
  n->used[j].live = true;
  n->nused++;
  if (sp_grow_z((void **)&n->undo, &n->capundo, n->nundo, sizeof *n->undo)) {
    n->oom = true;
    return false;
  }
  n->undo[n->nundo++] = j;
  return true;
}

static void used_truncate(sp__mlir_namer *n, size_t mark) {
  while (n->nundo > mark) n->used[n->undo[--n->nundo]].live = false;
}

/* ------------------------------------------------------------------ numbering */

static void name_value_numbered(sp__mlir_namer *n, const sp_value *v) {
  slot_set(n, v, n->next_value++);
}

/* Gives `v` the suggested `name`, made unique among the visible names. */
static void name_value_suggested(sp__mlir_namer *n, const sp_value *v, const char *name) {
  char buf[256];
  const char *chosen = name;
  if (used_has(n, name)) {
    for (;;) {
      snprintf(buf, sizeof buf, "%s_%d", name, n->next_conflict++);
      if (!used_has(n, buf)) break;
    }
    chosen = buf;
  }
  const char *stored = store_string(n, chosen, strlen(chosen));
  if (!stored || !used_add(n, stored)) return;
  if (sp_grow_z((void **)&n->names, &n->capnames, n->nnames, sizeof *n->names)) {
    n->oom = true;
    return;
  }
  n->names[n->nnames] = stored;
  slot_set(n, v, NAMED(n->nnames++));
}

static bool is_integer_elem(const char *e) {
  if (!e) return false;
  if (e[0] == 'u' || e[0] == 's') e++;
  return e[0] == 'i' && e[1] >= '0' && e[1] <= '9';
}

/* Result names suggested by the op (MLIR's OpAsmOpInterface::getAsmResultNames). */
static void name_op_results(sp__mlir_namer *n, const sp_op *op) {
  if (op->kind == SP_OP_CONSTANT && op->nresults == 1) {
    const sp_type *t = op->results[0].type;
    bool is_int = t && t->kind == SP_TYPE_TENSOR && is_integer_elem(t->elem);
    name_value_suggested(n, &op->results[0], is_int ? "c" : "cst");
  } else if (op->kind == SP_OP_RNG_BIT_GENERATOR && op->nresults == 2) {
    name_value_suggested(n, &op->results[0], "output_state");
    name_value_suggested(n, &op->results[1], "output");
  }
  if (op->nresults > 0 && !slot_find(n, &op->results[0])) name_value_numbered(n, &op->results[0]);
}

static void number_block(sp__mlir_namer *n, const sp_block *b, bool entry) {
  char buf[32];
  for (int i = 0; i < b->nargs; i++) {
    if (slot_find(n, b->args[i])) continue;
    if (entry) {
      snprintf(buf, sizeof buf, "arg%d", n->next_arg++);
      name_value_suggested(n, b->args[i], buf);
    } else {
      name_value_numbered(n, b->args[i]);
    }
  }
  for (const sp_op *op = b->first; op; op = op->next) name_op_results(n, op);
}

static void number_region(sp__mlir_namer *n, const sp_region *r) {
  /* stablehlo.while names its region arguments (MLIR's getAsmBlockArgumentNames). */
  if (r->parent && r->parent->kind == SP_OP_WHILE && r->nblocks > 0)
    for (int i = 0; i < r->blocks[0]->nargs; i++)
      name_value_suggested(n, r->blocks[0]->args[i], "iterArg");
  for (int i = 0; i < r->nblocks; i++) {
    slot_set(n, r->blocks[i], i);
    number_block(n, r->blocks[i], i == 0);
  }
}

static bool push_region(sp__mlir_namer *n, const sp_region *r) {
  if (sp_grow_z((void **)&n->stack, &n->capstack, n->nstack, sizeof *n->stack)) {
    n->oom = true;
    return false;
  }
  region_ctx *c = &n->stack[n->nstack++];
  c->r = r;
  c->next_value = n->next_value;
  c->next_arg = n->next_arg;
  c->next_conflict = n->next_conflict;
  c->undo_mark = (int)n->nundo;
  return true;
}

int sp__mlir_namer_build(const sp_op *top, sp__mlir_namer **out) {
  sp__mlir_namer *n = calloc(1, sizeof *n);
  if (!n) return SP_ENOMEM;
  for (int i = 0; i < top->nregions; i++) push_region(n, &top->regions[i]);
  name_op_results(n, top);
  while (n->nstack > 0 && !n->oom) {
    region_ctx c = n->stack[--n->nstack];
    n->next_value = c.next_value;
    n->next_arg = c.next_arg;
    n->next_conflict = c.next_conflict;
    used_truncate(n, (size_t)c.undo_mark);
    number_region(n, c.r);
    for (int b = 0; b < c.r->nblocks; b++)
      for (const sp_op *op = c.r->blocks[b]->first; op; op = op->next)
        for (int i = 0; i < op->nregions; i++) push_region(n, &op->regions[i]);
  }
  if (n->oom) {
    sp__mlir_namer_free(n);
    return SP_ENOMEM;
  }
  *out = n;
  return SP_OK;
}

void sp__mlir_namer_free(sp__mlir_namer *n) {
  if (!n) return;
  sp_ptr_map_free(&n->slots);
  free(n->names);
  free(n->used);
  free(n->undo);
  free(n->stack);
  for (size_t i = 0; i < n->nold; i++) free(n->old_strings[i]);
  free(n->old_strings);
  free(n->strings);
  free(n);
}

/* ------------------------------------------------------------------ queries */

/* "%" and a decimal number, without printf (this runs for every operand printed). */
static void put_number(sp_strbuf *sb, char sigil, int v) {
  char buf[16];
  int k = sizeof buf;
  unsigned u = (unsigned)(v < 0 ? 0 : v);
  do {
    buf[--k] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  buf[--k] = sigil;
  sp_strbuf_putn(sb, buf + k, sizeof buf - (size_t)k);
}

static void put_slot(const sp__mlir_namer *n, sp_strbuf *sb, const sp_ptr_map_slot *s) {
  if (s->val < 0) {
    sp_strbuf_putc(sb, '%');
    sp_strbuf_puts(sb, n->names[NAME_INDEX(s->val)]);
  } else {
    put_number(sb, '%', (int)s->val);
  }
}

void sp__mlir_namer_value(const sp__mlir_namer *n, sp_strbuf *sb, const sp_value *v) {
  if (v && v->def && v->def->nresults > 1) {
    /* Results of a multi-result op are %N#k, unless the op named each one (%a, %b). */
    const sp_ptr_map_slot *base = slot_find(n, &v->def->results[0]);
    if (base && base->val >= 0) {
      put_slot(n, sb, base);
      put_number(sb, '#', v->index);
      return;
    }
  }
  const sp_ptr_map_slot *s = v ? slot_find(n, v) : NULL;
  if (s) {
    put_slot(n, sb, s);
    return;
  }
  sp_strbuf_puts(sb, "<<UNKNOWN SSA VALUE>>");
}

void sp__mlir_namer_results(const sp__mlir_namer *n, sp_strbuf *sb, const sp_op *op) {
  if (op->nresults == 0) return;
  const sp_ptr_map_slot *base = slot_find(n, &op->results[0]);
  if (base && base->val >= 0 && op->nresults > 1) {
    put_slot(n, sb, base);
    put_number(sb, ':', op->nresults);
  } else {
    for (int i = 0; i < op->nresults; i++) {
      if (i) sp_strbuf_puts(sb, ", ");
      sp__mlir_namer_value(n, sb, &op->results[i]);
    }
  }
  sp_strbuf_puts(sb, " = ");
}

int sp__mlir_namer_block(const sp__mlir_namer *n, const sp_block *b) {
  const sp_ptr_map_slot *s = slot_find(n, b);
  return s ? (int)s->val : 0;
}
