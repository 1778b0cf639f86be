/*
 * hit_cache.c - a byte-bounded LRU map from raw-request hash to packed answer (hit_cache.h).
 *
 * Entries sit in a doubly linked recency list (head = most recent) and in a chained hash table
 * of fixed size (the raw hash is already uniform: its first 8 hex digits pick the bucket).
 * Invariant: bytes == sum of the entries' len, <= max_bytes after every put.
 */
#include "rpc/hit_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 4096

typedef struct entry {
  char raw[65], key[65];
  uint8_t *bytes;
  size_t len;
  int64_t touched_ms;
  struct entry *prev, *next;   /* recency */
  struct entry *chain;         /* bucket */
} entry;

struct sp_hit_cache {
  pthread_mutex_t mu;
  size_t max_bytes, bytes;
  entry *head, *tail;
  entry *buckets[NBUCKETS];
};

static size_t bucket(const char *raw) {
  size_t h = 0;
  for (int i = 0; i < 8 && raw[i]; i++) h = h * 16 + (size_t)(raw[i] <= '9' ? raw[i] - '0'
                                                                            : (raw[i] | 32) - 'a' + 10);
  return h % NBUCKETS;
}

static void unlink_lru(sp_hit_cache *c, entry *e) {
  if (e->prev) e->prev->next = e->next; else c->head = e->next;
  if (e->next) e->next->prev = e->prev; else c->tail = e->prev;
  e->prev = e->next = NULL;
}

static void push_front(sp_hit_cache *c, entry *e) {
  e->next = c->head;
  e->prev = NULL;
  if (c->head) c->head->prev = e; else c->tail = e;
  c->head = e;
}

static void remove_entry(sp_hit_cache *c, entry *e) {
  entry **pp = &c->buckets[bucket(e->raw)];
  while (*pp && *pp != e) pp = &(*pp)->chain;
  if (*pp) *pp = e->chain;
  unlink_lru(c, e);
  c->bytes -= e->len;
  free(e->bytes);
  free(e);
}

sp_hit_cache *sp_hit_cache_new(size_t max_bytes) {
  sp_hit_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  pthread_mutex_init(&c->mu, NULL);
  c->max_bytes = max_bytes;
  return c;
}

void sp_hit_cache_free(sp_hit_cache *c) {
  if (!c) return;
  while (c->head) remove_entry(c, c->head);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static entry *find(sp_hit_cache *c, const char *raw) {
  for (entry *e = c->buckets[bucket(raw)]; e; e = e->chain)
    if (strcmp(e->raw, raw) == 0) return e;
  return NULL;
}

bool sp_hit_cache_get(sp_hit_cache *c, const char *raw, uint8_t **bytes, size_t *len,
                      char *key_out, int64_t now_ms, int64_t touch_ms, bool *needs_touch) {
  *needs_touch = false;
  pthread_mutex_lock(&c->mu);
  entry *e = find(c, raw);
  uint8_t *copy = e ? malloc(e->len ? e->len : 1) : NULL;
  if (copy) {
    memcpy(copy, e->bytes, e->len);
    *bytes = copy;
    *len = e->len;
    if (key_out) memcpy(key_out, e->key, sizeof e->key);
    if (now_ms - e->touched_ms >= touch_ms) {
      e->touched_ms = now_ms;
      *needs_touch = true;
    }
    unlink_lru(c, e);
    push_front(c, e);
  }
  pthread_mutex_unlock(&c->mu);
  return copy != NULL;
}

void sp_hit_cache_put(sp_hit_cache *c, const char *raw, const char *key, const uint8_t *bytes,
                      size_t len, int64_t now_ms) {
  if (len > c->max_bytes / 8) return;
  entry *n = calloc(1, sizeof *n);
  uint8_t *b = n ? malloc(len ? len : 1) : NULL;
  if (!b) {
    free(n);
    return;
  }
  memcpy(b, bytes, len);
  snprintf(n->raw, sizeof n->raw, "%s", raw);
  snprintf(n->key, sizeof n->key, "%s", key);
  n->bytes = b;
  n->len = len;
  n->touched_ms = now_ms;
  pthread_mutex_lock(&c->mu);
  entry *old = find(c, raw);
  if (old) remove_entry(c, old);
  size_t bk = bucket(raw);
  n->chain = c->buckets[bk];
  c->buckets[bk] = n;
  push_front(c, n);
  c->bytes += len;
  while (c->bytes > c->max_bytes && c->tail && c->tail != n) remove_entry(c, c->tail);
  pthread_mutex_unlock(&c->mu);
}

void sp_hit_cache_drop(sp_hit_cache *c, const char *key) {
  pthread_mutex_lock(&c->mu);
  for (entry *e = c->head, *next; e; e = next) {
    next = e->next;
    if (!key || strcmp(e->key, key) == 0) remove_entry(c, e);
  }
  pthread_mutex_unlock(&c->mu);
}
