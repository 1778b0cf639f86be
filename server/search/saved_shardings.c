/*
 * saved_shardings.c - the shardings a search may write, saved and put back (see
 * saved_shardings.h).
 */
#include "search/saved_shardings.h"

int sp_saved_shardings_init(sp_arena *a, sp_op *func, sp_saved_shardings *s) {
  s->body = func->regions[0].blocks[0];
  s->fi = func->func;
  s->nvals = s->body->nargs;
  for (sp_op *op = s->body->first; op; op = op->next) s->nvals += op->nresults;
  s->nres = s->fi && s->fi->result_shardings ? s->fi->nresults : 0;
  s->vals = sp_arena_calloc(a, (size_t)s->nvals + 1, sizeof *s->vals);
  s->res = sp_arena_calloc(a, (size_t)s->nres + 1, sizeof *s->res);
  return s->vals && s->res ? SP_OK : SP_ENOMEM;
}

void sp_saved_shardings_take(sp_saved_shardings *s) {
  int k = 0;
  for (int i = 0; i < s->body->nargs; i++) s->vals[k++] = s->body->args[i]->sharding;
  for (sp_op *op = s->body->first; op; op = op->next)
    for (int r = 0; r < op->nresults; r++) s->vals[k++] = op->results[r].sharding;
  for (int r = 0; r < s->nres; r++) s->res[r] = s->fi->result_shardings[r];
}

void sp_saved_shardings_restore(const sp_saved_shardings *s) {
  int k = 0;
  for (int i = 0; i < s->body->nargs; i++) s->body->args[i]->sharding = s->vals[k++];
  for (sp_op *op = s->body->first; op; op = op->next)
    for (int r = 0; r < op->nresults; r++) op->results[r].sharding = s->vals[k++];
  for (int r = 0; r < s->nres; r++) s->fi->result_shardings[r] = s->res[r];
}
