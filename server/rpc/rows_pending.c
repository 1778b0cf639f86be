/*
 * rows_pending.c - the plans answered before their detail rows were stored (rows_pending.h).
 *
 * A short list under one mutex: entries live for the second or so their rows take to write,
 * and a daemon has at most a few at a time (one per plan handed out near a deadline). A reader
 * takes a reference under the mutex and builds its answer outside it; ending an entry unlists
 * it at once (no new reader finds it) and waits on the condition variable for the readers
 * already in.
 */
#include "rpc/rows_pending.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

struct sp_rows_pending_entry {
  char key[SP_STORE_HASH_HEX + 1];
  const uint8_t *bytes;        /* borrowed (rows_pending.h) */
  size_t n;
  const sp_plan *plan;         /* borrowed */
  int readers;
  bool listed;
  sp_rows_pending_entry *next;
};

struct sp_rows_pending {
  pthread_mutex_t mu;
  pthread_cond_t done;         /* a reader let go of an entry */
  sp_rows_pending_entry *list;
};

sp_rows_pending *sp_rows_pending_new(void) {
  sp_rows_pending *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->done, NULL);
  return t;
}

void sp_rows_pending_free(sp_rows_pending *t) {
  if (!t) return;
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->done);
  free(t);
}

sp_rows_pending_entry *sp_rows_pending_add(sp_rows_pending *t, const char *key,
                                           const uint8_t *bytes, size_t n, const sp_plan *plan) {
  sp_rows_pending_entry *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  snprintf(e->key, sizeof e->key, "%s", key);
  e->bytes = bytes;
  e->n = n;
  e->plan = plan;
  e->listed = true;
  pthread_mutex_lock(&t->mu);
  e->next = t->list;
  t->list = e;
  pthread_mutex_unlock(&t->mu);
  return e;
}

void sp_rows_pending_end(sp_rows_pending *t, sp_rows_pending_entry *e) {
  if (!e) return;
  pthread_mutex_lock(&t->mu);
  for (sp_rows_pending_entry **pe = &t->list; *pe; pe = &(*pe)->next)
    if (*pe == e) {
      *pe = e->next;
      break;
    }
  e->listed = false;
  while (e->readers > 0) pthread_cond_wait(&t->done, &t->mu);
  pthread_mutex_unlock(&t->mu);
  free(e);
}

/* Under t->mu: the entry of `key` stored as bytes[0, n) (`bytes` NULL: any of `key`). */
static sp_rows_pending_entry *find(sp_rows_pending *t, const char *key, const uint8_t *bytes,
                                   size_t n) {
  for (sp_rows_pending_entry *e = t->list; e; e = e->next)
    if (!strcmp(e->key, key) && (!bytes || (e->n == n && !memcmp(e->bytes, bytes, n))))
      return e;
  return NULL;
}

bool sp_rows_pending_has(sp_rows_pending *t, const char *key, const uint8_t *bytes, size_t n) {
  pthread_mutex_lock(&t->mu);
  bool found = find(t, key, bytes, n) != NULL;
  pthread_mutex_unlock(&t->mu);
  return found;
}

int sp_rows_pending_extras(sp_rows_pending *t, const char *key, const uint8_t *bytes, size_t n,
                           const sp_rpc_func_map *map, uint8_t **out, size_t *len, sp_err *err) {
  *out = NULL;
  *len = 0;
  pthread_mutex_lock(&t->mu);
  sp_rows_pending_entry *e = find(t, key, bytes, n);
  if (e) e->readers++;
  pthread_mutex_unlock(&t->mu);
  if (!e) return sp_err_set(err, SP_ENOTFOUND, "plan %.16s has no rows being written", key);
  /* The plan is read only here and by the rows' writer (an sp_plan is immutable). */
  int rc = sp_rpc_plan_full_extras(e->plan, map, out, len, err);
  pthread_mutex_lock(&t->mu);
  if (--e->readers == 0 && !e->listed) pthread_cond_broadcast(&t->done);
  pthread_mutex_unlock(&t->mu);
  return rc;
}
