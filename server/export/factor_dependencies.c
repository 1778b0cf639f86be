/*
 * factor_dependencies.c - dependent factor axes dropped from the common choice of explicit
 * reshard insertion (see factor_dependencies.h).
 */
#include "export/factor_dependencies.h"

#include <assert.h>

/* Clears the factors of `dim` that follow a factor `common` leaves not fully sharded. */
static bool drop_in_dim(const sp_factor_table *t, const sp_rule_dim *dim, sp_ft_axes *common) {
  bool changed = false, full = true;
  for (int k = 0; k < dim->nfactors; k++) {
    int f = dim->factors[k];
    if (!full) {
      changed |= common[f].n > 0;
      common[f].n = 0;
      continue;
    }
    full = sp_ft_axes_product(t->mesh, &common[f]) >= t->rule->factors[f].size;
  }
  return changed;
}

static bool drop_in_tensor(const sp_factor_table *t, const sp_rule_tensor *tensor,
                           sp_ft_axes *common) {
  bool changed = false;
  for (int d = 0; d < tensor->rank; d++)
    if (tensor->dims[d].nfactors > 1) changed |= drop_in_dim(t, &tensor->dims[d], common);
  return changed;
}

#ifndef NDEBUG
/* The header's invariant: in every dimension, the factors that keep axes form a prefix in
 * which all but the last are fully sharded. */
static bool no_dependent_axes(const sp_factor_table *t, const sp_ft_axes *common) {
  const sp_rule *rule = t->rule;
  for (int i = 0; i < rule->noperands + rule->nresults; i++) {
    const sp_rule_tensor *tensor = i < rule->noperands ? &rule->operands[i]
                                                       : &rule->results[i - rule->noperands];
    for (int d = 0; d < tensor->rank; d++) {
      bool full = true;
      for (int k = 0; k < tensor->dims[d].nfactors; k++) {
        int f = tensor->dims[d].factors[k];
        if (!full && common[f].n) return false;
        full = sp_ft_axes_product(t->mesh, &common[f]) >= rule->factors[f].size;
      }
    }
  }
  return true;
}
#endif

bool sp_export_drop_dependent_factor_axes(const sp_factor_table *t, sp_ft_axes *common) {
  const sp_rule *rule = t->rule;
  bool any = false, changed = true;
  /* Clearing a factor can leave a later one in another dimension dependent: to a fixpoint
   * (each round clears at least one list, so at most nfactors rounds). */
  while (changed) {
    changed = false;
    for (int i = 0; i < rule->noperands; i++) changed |= drop_in_tensor(t, &rule->operands[i], common);
    for (int i = 0; i < rule->nresults; i++) changed |= drop_in_tensor(t, &rule->results[i], common);
    any |= changed;
  }
  assert(no_dependent_axes(t, common));
  return any;
}

bool sp_export_factor_waits(const sp_factor_table *t, const sp_ft_axes *common, int f) {
  const sp_rule *rule = t->rule;
  int ntensors = rule->noperands + rule->nresults;
  for (int i = 0; i < ntensors; i++) {
    const sp_rule_tensor *tensor = i < rule->noperands ? &rule->operands[i] : &rule->results[i - rule->noperands];
    for (int d = 0; d < tensor->rank; d++) {
      const sp_rule_dim *dim = &tensor->dims[d];
      for (int k = 1; k < dim->nfactors; k++) {
        if (dim->factors[k] != f) continue;
        int g = dim->factors[k - 1];
        if (sp_ft_axes_product(t->mesh, &common[g]) < rule->factors[g].size) return true;
      }
    }
  }
  return false;
}
