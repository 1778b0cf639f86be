/*
 * conflict.c - the conflict log: adding records and printing them as text and JSON (see
 * conflict.h).
 */
#include "propagation/conflict.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "ir/err.h"
#include "ir/rule.h"
#include "ir/sharding.h"

void sp_conflict_log_init(sp_conflict_log *log, sp_arena *a) {
  memset(log, 0, sizeof *log);
  log->arena = a;
  log->op = -1;
  log->round = -1;
  log->user_priority = -1;
}

sp_conflict *sp_conflict_log_add(sp_conflict_log *log) {
  if (sp_arena_grow_from(log->arena, (void **)&log->v, &log->cap, log->n, sizeof *log->v, 16)) {
    log->oom = true;
    return NULL;
  }
  sp_conflict *c = &log->v[log->n++];
  memset(c, 0, sizeof *c);
  c->op = log->op;
  c->op_name = log->op_name;
  c->line = log->line;
  c->col = log->col;
  c->round = log->round;
  c->user_priority = log->user_priority;
  c->source = -1;
  return c;
}

int sp_conflict_alloc_entries(sp_conflict_log *log, sp_conflict *c, int n) {
  c->nentries = 0;
  c->entries = sp_arena_calloc(log->arena, (size_t)(n ? n : 1), sizeof *c->entries);
  if (!c->entries) {
    log->oom = true;
    return SP_ENOMEM;
  }
  for (int i = 0; i < n; i++) c->entries[i].blocking_factor = -1;
  c->nentries = n;
  return SP_OK;
}

const char *sp_conflict_cause_name(sp_conflict_cause bit) {
  switch (bit) {
    case SP_CONFLICT_INCOMPATIBLE: return "incompatible";
    case SP_CONFLICT_AXIS_IN_USE: return "axis_in_use";
    case SP_CONFLICT_REPLICATED: return "replicated";
    case SP_CONFLICT_CLOSED: return "closed";
    case SP_CONFLICT_INDIVISIBLE: return "indivisible";
    case SP_CONFLICT_SUB_AXIS: return "sub_axis";
    case SP_CONFLICT_RESULT_LIMITED: return "result_limited";
  }
  return "unknown";
}

const char *sp_conflict_level_name(sp_conflict_level l) {
  return l == SP_CONFLICT_LEVEL_AGGRESSIVE ? "aggressive" : "basic";
}

const char *sp_conflict_resolution_name(sp_conflict_resolution r) {
  switch (r) {
    case SP_CONFLICT_NOTHING_MOVED: return "nothing_moved";
    case SP_CONFLICT_COMMON_PREFIX: return "common_prefix";
    case SP_CONFLICT_SOURCE_WON: return "source_won";
  }
  return "unknown";
}

/* ------------------------------------------------------------------ text */

static void tensor_name(const sp_conflict *c, int row, char *buf, size_t cap) {
  if (row < c->noperands)
    snprintf(buf, cap, "operand %d", row);
  else
    snprintf(buf, cap, "result %d", row - c->noperands);
}

static void print_refs(sp_strbuf *sb, const sp_axis_ref *v, int n) {
  sp_strbuf_putc(sb, '[');
  sp_axis_refs_print(sb, v, n);
  sp_strbuf_putc(sb, ']');
}

static void print_causes(sp_strbuf *sb, unsigned causes) {
  bool first = true;
  for (int b = 0; b < SP_CONFLICT_CAUSE_COUNT; b++) {
    if (!(causes & (1u << b))) continue;
    sp_strbuf_printf(sb, "%s%s", first ? "" : ", ",
                     sp_conflict_cause_name((sp_conflict_cause)(1u << b)));
    first = false;
  }
  if (first) sp_strbuf_puts(sb, "none");
}

void sp_conflict_print(sp_strbuf *sb, const sp_conflict *c) {
  char fname[16], tname[32];
  sp_rule_factor_name(c->factor, fname);
  if (c->op >= 0) sp_strbuf_printf(sb, "op %d ", c->op);
  if (c->op_name) sp_strbuf_printf(sb, "%s ", c->op_name);
  sp_strbuf_printf(sb, "factor %s=%lld: %s%s, %s", fname, (long long)c->factor_size,
                   sp_conflict_level_name(c->level), c->conservative ? " (conservative)" : "",
                   sp_conflict_resolution_name(c->resolution));
  if (c->round >= 0) sp_strbuf_printf(sb, ", op-priority round %d", c->round);
  if (c->user_priority >= 0) sp_strbuf_printf(sb, ", user priority %d", c->user_priority);
  sp_strbuf_puts(sb, "; causes: ");
  print_causes(sb, c->causes);
  if (c->source >= 0) {
    tensor_name(c, c->source, tname, sizeof tname);
    sp_strbuf_printf(sb, "; source %s", tname);
  }
  sp_strbuf_puts(sb, "; chose ");
  print_refs(sb, c->chosen, c->nchosen);
  sp_strbuf_putc(sb, '\n');
  for (int i = 0; i < c->nentries; i++) {
    const sp_conflict_entry *e = &c->entries[i];
    tensor_name(c, e->tensor, tname, sizeof tname);
    sp_strbuf_printf(sb, "  %s%s: ", tname,
                     !e->has_factor ? " (without the factor)" : e->closed ? " (closed)" : "");
    print_refs(sb, e->before, e->nbefore);
    sp_strbuf_puts(sb, " -> ");
    print_refs(sb, e->after, e->nafter);
    if (e->causes) {
      sp_strbuf_puts(sb, "  (");
      print_causes(sb, e->causes);
      if (e->blocking_factor >= 0) {
        sp_rule_factor_name(e->blocking_factor, fname);
        sp_strbuf_printf(sb, " by %s", fname);
      }
      sp_strbuf_putc(sb, ')');
    }
    sp_strbuf_putc(sb, '\n');
  }
}

/* ------------------------------------------------------------------ JSON */

static bool add(cJSON *obj, const char *key, cJSON *item) {
  if (item && cJSON_AddItemToObject(obj, key, item)) return true;
  cJSON_Delete(item);
  return false;
}

static bool push(cJSON *arr, cJSON *item) {
  if (item && cJSON_AddItemToArray(arr, item)) return true;
  cJSON_Delete(item);
  return false;
}

static cJSON *refs_json(const sp_axis_ref *v, int n) {
  cJSON *arr = cJSON_CreateArray();
  char buf[96];
  for (int i = 0; arr && i < n; i++) {
    if (sp_axis_is_sub(&v[i]))
      snprintf(buf, sizeof buf, ":(%lld)%lld", (long long)v[i].pre, (long long)v[i].size);
    else
      buf[0] = '\0';
    sp_strbuf sb = SP_STRBUF_INIT;
    sp_strbuf_puts(&sb, v[i].name);
    sp_strbuf_puts(&sb, buf);
    bool ok = sp_strbuf_ok(&sb) && push(arr, cJSON_CreateString(sp_strbuf_str(&sb)));
    sp_strbuf_free(&sb);
    if (!ok) {
      cJSON_Delete(arr);
      arr = NULL;
    }
  }
  return arr;
}

static cJSON *causes_json(unsigned causes) {
  cJSON *arr = cJSON_CreateArray();
  for (int b = 0; arr && b < SP_CONFLICT_CAUSE_COUNT; b++) {
    if (!(causes & (1u << b))) continue;
    if (!push(arr, cJSON_CreateString(sp_conflict_cause_name((sp_conflict_cause)(1u << b))))) {
      cJSON_Delete(arr);
      arr = NULL;
    }
  }
  return arr;
}

static cJSON *entry_json(const sp_conflict *c, const sp_conflict_entry *e) {
  char tname[32], fname[16];
  tensor_name(c, e->tensor, tname, sizeof tname);
  if (e->blocking_factor >= 0) sp_rule_factor_name(e->blocking_factor, fname);
  cJSON *o = cJSON_CreateObject();
  if (o && add(o, "tensor", cJSON_CreateString(tname)) &&
      add(o, "has_factor", cJSON_CreateBool(e->has_factor)) &&
      add(o, "closed", cJSON_CreateBool(e->closed)) &&
      add(o, "causes", causes_json(e->causes)) &&
      add(o, "blocking_factor",
          e->blocking_factor >= 0 ? cJSON_CreateString(fname) : cJSON_CreateNull()) &&
      add(o, "before", refs_json(e->before, e->nbefore)) &&
      add(o, "after", refs_json(e->after, e->nafter)))
    return o;
  cJSON_Delete(o);
  return NULL;
}

cJSON *sp_conflict_to_json(const sp_conflict *c) {
  char fname[16], tname[32] = "";
  sp_rule_factor_name(c->factor, fname);
  if (c->source >= 0) tensor_name(c, c->source, tname, sizeof tname);
  cJSON *o = cJSON_CreateObject(), *tensors = cJSON_CreateArray();
  bool ok = o && tensors && add(o, "op", cJSON_CreateNumber(c->op)) &&
            add(o, "op_name", c->op_name ? cJSON_CreateString(c->op_name) : cJSON_CreateNull()) &&
            add(o, "line", cJSON_CreateNumber(c->line)) &&
            add(o, "col", cJSON_CreateNumber(c->col)) &&
            add(o, "round", cJSON_CreateNumber(c->round)) &&
            add(o, "user_priority", cJSON_CreateNumber(c->user_priority)) &&
            add(o, "factor", cJSON_CreateString(fname)) &&
            add(o, "factor_index", cJSON_CreateNumber(c->factor)) &&
            add(o, "factor_size", cJSON_CreateNumber((double)c->factor_size)) &&
            add(o, "level", cJSON_CreateString(sp_conflict_level_name(c->level))) &&
            add(o, "conservative", cJSON_CreateBool(c->conservative)) &&
            add(o, "causes", causes_json(c->causes)) &&
            add(o, "resolution",
                cJSON_CreateString(sp_conflict_resolution_name(c->resolution))) &&
            add(o, "source", c->source >= 0 ? cJSON_CreateString(tname) : cJSON_CreateNull()) &&
            add(o, "chosen", refs_json(c->chosen, c->nchosen));
  for (int i = 0; ok && i < c->nentries; i++) ok = push(tensors, entry_json(c, &c->entries[i]));
  if (ok && add(o, "tensors", tensors)) return o;
  if (!ok) cJSON_Delete(tensors);
  cJSON_Delete(o);
  return NULL;
}

cJSON *sp_conflict_log_to_json(const sp_conflict_log *log) {
  cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
  bool ok = o && arr;
  for (int i = 0; ok && i < log->n; i++) ok = push(arr, sp_conflict_to_json(&log->v[i]));
  if (!ok) {
    cJSON_Delete(arr);
    cJSON_Delete(o);
    return NULL;
  }
  if (add(o, "conflicts", arr) && add(o, "dropped", cJSON_CreateBool(log->oom))) return o;
  cJSON_Delete(o);
  return NULL;
}
