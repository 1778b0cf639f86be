/*
 * populate.c - the `-sdy-populate-op-sharding-rules` pass (see populate.h).
 */
#include "rules/populate.h"

#include <string.h>

#include "ir/op_attrs.h"

int sp_rules_parse_options(const char *text, sp_rules_options *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  if (!text || !*text) return SP_OK;
  static const char key[] = "conservative-propagation";
  const char *p = text;
  while (*p == ' ') p++;
  if (strncmp(p, key, sizeof key - 1) != 0)
    return sp_err_set(err, SP_EINVAL, "unknown option '%s' (expected conservative-propagation)",
                      text);
  p += sizeof key - 1;
  if (*p == '\0') {
    out->conservative = true;
    return SP_OK;
  }
  if (strcmp(p, "=true") == 0 || strcmp(p, "=1") == 0) {
    out->conservative = true;
    return SP_OK;
  }
  if (strcmp(p, "=false") == 0 || strcmp(p, "=0") == 0) return SP_OK;
  return sp_err_set(err, SP_EINVAL, "option '%s': expected conservative-propagation=true|false",
                    text);
}

typedef struct populate_ctx {
  sp_arena *arena;
  const sp_rules_options *opts;
  sp_rules_diag *diag;
  sp_rules_warn_fn warn;
  void *warn_ctx;
  sp_err *err;
  int status;
} populate_ctx;

static bool attach(sp_op *op, void *arg) {
  populate_ctx *c = arg;
  if (op->kind == SP_OP_MODULE) return true;
  sp_rule *r = NULL;
  int rc = sp_rules_for_op(c->arena, op, c->opts, &r, c->diag, c->err);
  if (rc != SP_OK) {
    c->status = rc;
    return false;
  }
  if (c->diag && c->diag->has_warning && c->warn) c->warn(c->warn_ctx, op, c->diag->warning);
  if (!r || sp_op_rule(op) == r) return true;
  sp_attr at = {.name = SP_ATTR_SHARDING_RULE, .kind = SP_ATTR_RULE, .u.rule = r};
  if (sp_attrs_set(c->arena, &op->attrs, &at) != SP_OK) {
    c->status = sp_err_set(c->err, SP_ENOMEM, "out of memory attaching a sharding rule");
    return false;
  }
  return true;
}

int sp_rules_populate(sp_module *m, const sp_rules_options *opts, sp_rules_diag *diag,
                      sp_rules_warn_fn warn, void *warn_ctx, sp_err *err) {
  sp_rules_diag local = {0};
  populate_ctx c = {m->arena, opts, diag ? diag : &local, warn, warn_ctx, err, SP_OK};
  sp_op_walk(m->op, attach, &c);
  return c.status;
}
