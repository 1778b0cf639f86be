/*
 * prop_passes.c - option parsing and entry points of the propagation passes (see
 * prop_passes.h).
 *
 * Registry warnings are given once per kind per latch (sp_rules_diag): the module's
 * m->warned when the caller shares one across modules (shardplan-opt across its
 * -split-input-file chunks, as Shardy warns once per process), else one per pass run. No
 * state outlives a call.
 */
#include "propagation/prop_passes.h"

#include <stdio.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/pass_options.h"
#include "propagation/op_priority.h"
#include "propagation/trace.h"
#include "propagation/trace_attrs.h"
#include "propagation/user_priority.h"
#include "rules/populate.h"

static const char *const pass_names[] = {"sdy-basic-propagate", "sdy-aggressive-propagate",
                                         "sdy-op-priority-propagate",
                                         "sdy-user-priority-propagate"};

/* ------------------------------------------------------------------ options */

int sp_prop_pass_parse_strategy(const char *pass, const sp_option_item *it,
                                sp_propagate_options *o, sp_err *err) {
  const char *v = it->value;
  size_t n = it->value_len;
  if (n == 5 && memcmp(v, "basic", 5) == 0) {
    o->strategy = SP_PROP_BASIC;
    o->basic_then_aggressive = false;
  } else if (n == 10 && memcmp(v, "aggressive", 10) == 0) {
    o->strategy = SP_PROP_AGGRESSIVE;
    o->basic_then_aggressive = false;
  } else if (n == 21 && memcmp(v, "basic-then-aggressive", 21) == 0) {
    o->strategy = SP_PROP_AGGRESSIVE;
    o->basic_then_aggressive = true;
  } else {
    return sp_err_set(err, SP_EINVAL,
                      "-%s: propagation-strategy must be basic, aggressive or "
                      "basic-then-aggressive, not '%.*s'",
                      pass, (int)n, v);
  }
  return SP_OK;
}

/* One `key[=value]` item. */
static int parse_item(sp_prop_pass_kind kind, const sp_option_item *it, sp_propagate_options *o,
                      sp_err *err) {
  const char *pass = pass_names[kind];
  if (sp_option_is(it, "conservative-propagation"))
    return sp_option_bool(pass, it, &o->conservative, err);
  if (sp_option_is(it, "keep-sharding-rules"))
    return sp_option_bool(pass, it, &o->keep_sharding_rules, err);
  if (sp_option_is(it, "debug-propagation-edge-sharding"))
    return sp_option_bool(pass, it, &o->debug_edges, err);
  if (sp_option_is(it, "debug-sharding-origins"))
    return sp_option_bool(pass, it, &o->debug_origins, err);
  if (kind != SP_PASS_BASIC && sp_option_is(it, "propagation-strategy"))
    return sp_prop_pass_parse_strategy(pass, it, o, err);
  if ((kind == SP_PASS_OP_PRIORITY || kind == SP_PASS_USER_PRIORITY) &&
      sp_option_is(it, "run-op-priority-propagation")) {
    bool run = true;
    int rc = sp_option_bool(pass, it, &run, err);
    o->skip_op_priority = !run;
    return rc;
  }
  return sp_err_set(err, SP_EINVAL, "-%s: unknown option '%.*s'", pass, (int)it->key_len, it->key);
}

int sp_prop_pass_parse_options(sp_prop_pass_kind kind, const char *text,
                               sp_propagate_options *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  out->strategy = kind == SP_PASS_BASIC ? SP_PROP_BASIC : SP_PROP_AGGRESSIVE;
  const char *p = sp_options_begin(text);
  sp_option_item it;
  while (sp_options_next(&p, &it)) {
    int rc = parse_item(kind, &it, out, err);
    if (rc) return rc;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ running */

int sp_prop_pass_run(sp_module *m, sp_prop_pass_kind kind, const sp_propagate_options *opts,
                     sp_err *err) {
  sp_propagate_options o = *opts;
  sp_rules_diag fresh;
  memset(&fresh, 0, sizeof fresh);
  if (!o.diag) o.diag = m->warned ? m->warned : &fresh;
  bool traced = o.debug_origins || o.debug_edges;
  int rc = sp_trace_enable(m, o.debug_origins, o.debug_edges, err);
  if (rc) return rc;
  if (kind == SP_PASS_USER_PRIORITY) {
    rc = sp_user_priority_propagate(m, &o, NULL, err);
  } else {
    sp_propagate_session *s;
    if ((rc = sp_propagate_session_new(m, true, &s, err))) return rc;
    rc = kind == SP_PASS_OP_PRIORITY ? sp_op_priority_run(s, m, &o, NULL, err)
                                     : sp_propagate_strategy_run(s, &o, NULL, err);
    sp_propagate_session_free(s, rc == SP_OK, &o);
  }
  return rc || !traced ? rc : sp_trace_write_attrs(m, err);
}

static int run_with_text(sp_module *m, sp_prop_pass_kind kind, const char *options,
                         sp_err *err) {
  sp_propagate_options o;
  int rc = sp_prop_pass_parse_options(kind, options, &o, err);
  return rc ? rc : sp_prop_pass_run(m, kind, &o, err);
}

int sp_prop_pass_basic(sp_module *m, const char *options, sp_err *err) {
  return run_with_text(m, SP_PASS_BASIC, options, err);
}

int sp_prop_pass_aggressive(sp_module *m, const char *options, sp_err *err) {
  return run_with_text(m, SP_PASS_AGGRESSIVE, options, err);
}

int sp_prop_pass_op_priority(sp_module *m, const char *options, sp_err *err) {
  return run_with_text(m, SP_PASS_OP_PRIORITY, options, err);
}

int sp_prop_pass_user_priority(sp_module *m, const char *options, sp_err *err) {
  return run_with_text(m, SP_PASS_USER_PRIORITY, options, err);
}

static void warn_to_module(void *ctx, const sp_op *op, const char *message) {
  sp_module_warn(ctx, op->loc, "%s", message);
}

int sp_prop_pass_populate_rules(sp_module *m, const char *options, sp_err *err) {
  sp_rules_options ro;
  int rc = sp_rules_parse_options(options, &ro, err);
  if (rc) return rc;
  sp_rules_diag fresh;
  memset(&fresh, 0, sizeof fresh);
  return sp_rules_populate(m, &ro, m->warned ? m->warned : &fresh, warn_to_module, m, err);
}
