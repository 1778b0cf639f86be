/*
 * hit_cache.h - answers to exact repeats kept in memory, in front of the plan cache.
 *
 * 64 ranks of one job compiling the same model send the same bytes; after the first answer the
 * rest are served from here without decoding the request or reading SQLite: raw-request hash
 * -> (key, packed answer). Only final answers go in (not provisional ones, whose use depends
 * on the time a request allows, nor DETAIL_FULL ones, which are rebuilt from the stored plan).
 * Bounded by bytes; the least recently used entries go first. The plan cache stays the source
 * of truth: an entry is only a copy of a stored answer, dropped when its plan is deleted.
 *
 * Thread safety: one mutex; lookups copy the answer out under it.
 * Memory: entries are malloc'd and owned by the cache.
 */
#ifndef SP_RPC_HIT_CACHE_H
#define SP_RPC_HIT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sp_hit_cache sp_hit_cache;

sp_hit_cache *sp_hit_cache_new(size_t max_bytes);   /* NULL on out-of-memory */
void sp_hit_cache_free(sp_hit_cache *c);
/* Copies the answer for `raw` (64 hex digits) into a malloc'd buffer; false when absent.
 * `key_out` (65 bytes, may be NULL) gets its key. `touch_ms`: when the entry was last reported
 * to the plan cache is older than this many ms, *needs_touch is set and the time reset (the
 * caller then counts one hit in the plan cache, so its LRU order stays right). */
bool sp_hit_cache_get(sp_hit_cache *c, const char *raw, uint8_t **bytes, size_t *len,
                      char *key_out, int64_t now_ms, int64_t touch_ms, bool *needs_touch);
/* Adds (or replaces) an answer. Entries over an eighth of the bound are not kept. */
void sp_hit_cache_put(sp_hit_cache *c, const char *raw, const char *key, const uint8_t *bytes,
                      size_t len, int64_t now_ms);
/* Drops every entry of plan `key` (NULL: all). */
void sp_hit_cache_drop(sp_hit_cache *c, const char *key);

#endif /* SP_RPC_HIT_CACHE_H */
