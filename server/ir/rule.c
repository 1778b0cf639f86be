/*
 * rule.c - OpShardingRule naming, printing and comparison (see rule.h).
 */
#include "ir/rule.h"

#include <stdio.h>

void sp_rule_factor_name(int i, char *buf) {
  /* i..z are the first 18 names; after that z_1, z_2, ... */
  if (i < 18)
    snprintf(buf, 16, "%c", 'i' + i);
  else
    snprintf(buf, 16, "z_%d", i - 17);
}

static void print_tensor(sp_strbuf *sb, const sp_rule_tensor *t) {
  char name[16];
  sp_strbuf_putc(sb, '[');
  for (int d = 0; d < t->rank; d++) {
    if (d) sp_strbuf_puts(sb, ", ");
    for (int k = 0; k < t->dims[d].nfactors; k++) {
      sp_rule_factor_name(t->dims[d].factors[k], name);
      sp_strbuf_puts(sb, name);
    }
  }
  sp_strbuf_putc(sb, ']');
}

static void print_tensors(sp_strbuf *sb, const sp_rule_tensor *v, int n) {
  sp_strbuf_putc(sb, '(');
  for (int i = 0; i < n; i++) {
    if (i) sp_strbuf_puts(sb, ", ");
    print_tensor(sb, &v[i]);
  }
  sp_strbuf_putc(sb, ')');
}

static void print_kind_set(sp_strbuf *sb, const sp_rule *r, const char *label, int kind) {
  char name[16];
  bool first = true;
  for (int f = 0; f < r->nfactors; f++) {
    bool in = kind < 0 ? r->factors[f].blocked : (int)r->factors[f].kind == kind;
    if (!in) continue;
    sp_rule_factor_name(f, name);
    if (first)
      sp_strbuf_printf(sb, " %s={%s", label, name);
    else
      sp_strbuf_printf(sb, ", %s", name);
    first = false;
  }
  if (!first) sp_strbuf_putc(sb, '}');
}

void sp_rule_print(sp_strbuf *sb, const sp_rule *r) {
  char name[16];
  sp_strbuf_puts(sb, "#sdy.op_sharding_rule<");
  print_tensors(sb, r->operands, r->noperands);
  sp_strbuf_puts(sb, "->");
  print_tensors(sb, r->results, r->nresults);
  if (r->nfactors) {
    sp_strbuf_puts(sb, " {");
    for (int f = 0; f < r->nfactors; f++) {
      sp_rule_factor_name(f, name);
      sp_strbuf_printf(sb, "%s%s=%lld", f ? ", " : "", name, (long long)r->factors[f].size);
    }
    sp_strbuf_putc(sb, '}');
  }
  print_kind_set(sb, r, "reduction", SP_FACTOR_REDUCTION);
  print_kind_set(sb, r, "need_replication", SP_FACTOR_NEED_REPLICATION);
  print_kind_set(sb, r, "permutation", SP_FACTOR_PERMUTATION);
  print_kind_set(sb, r, "blocked_propagation", -1);
  if (r->custom) sp_strbuf_puts(sb, ", custom");
  sp_strbuf_putc(sb, '>');
}

static bool tensors_equal(const sp_rule_tensor *a, const sp_rule_tensor *b, int n) {
  for (int i = 0; i < n; i++) {
    if (a[i].rank != b[i].rank) return false;
    for (int d = 0; d < a[i].rank; d++) {
      const sp_rule_dim *x = &a[i].dims[d], *y = &b[i].dims[d];
      if (x->nfactors != y->nfactors) return false;
      for (int k = 0; k < x->nfactors; k++)
        if (x->factors[k] != y->factors[k]) return false;
    }
  }
  return true;
}

bool sp_rule_equal(const sp_rule *a, const sp_rule *b) {
  if (a->nfactors != b->nfactors || a->noperands != b->noperands ||
      a->nresults != b->nresults || a->custom != b->custom)
    return false;
  for (int f = 0; f < a->nfactors; f++)
    if (a->factors[f].size != b->factors[f].size || a->factors[f].kind != b->factors[f].kind ||
        a->factors[f].blocked != b->factors[f].blocked)
      return false;
  return tensors_equal(a->operands, b->operands, a->noperands) &&
         tensors_equal(a->results, b->results, a->nresults);
}
