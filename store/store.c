/*
 * store.c - the plan cache's front door (see store.h): picks the backend, checks arguments,
 * normalises keys, dispatches. Holds no state besides the backend's handle.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

#include "store_backend.h"

struct sp_store {
  const sp_store_backend *be;
  void *impl;
  char *path;
};

static const sp_store_backend *const backends[] = {&sp_store_sqlite_backend};

bool sp_store_hash_valid(const char *s) {
  if (!s) return false;
  for (int i = 0; i < SP_STORE_HASH_HEX; i++) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
      return false;
  }
  return s[SP_STORE_HASH_HEX] == '\0';
}

/* Copies a valid hash into `out` in lower case; SP_EINVAL naming `what` otherwise. */
static int norm_hash(const char *in, const char *what, char out[SP_STORE_HASH_HEX + 1],
                     sp_err *err) {
  if (!sp_store_hash_valid(in))
    return sp_err_set(err, SP_EINVAL, "%s \"%.80s\" is not %d hex digits", what,
                      in ? in : "(null)", SP_STORE_HASH_HEX);
  for (int i = 0; i <= SP_STORE_HASH_HEX; i++) {
    char c = in[i];
    out[i] = (c >= 'A' && c <= 'F') ? (char)(c - 'A' + 'a') : c;
  }
  return SP_OK;
}

int sp_store_open(const sp_store_options *options, sp_store **out, sp_err *err) {
  sp_store *s = NULL;
  int rc;
  if (out) *out = NULL;
  if (!options || !options->path || !options->path[0] || !out)
    return sp_err_set(err, SP_EINVAL, "plan cache: no database path given");
  if (options->max_bytes < 0 || options->busy_timeout_ms < 0 || options->max_readers < 0 ||
      options->touch_batch < 0)
    return sp_err_set(err, SP_EINVAL, "plan cache %s: negative option", options->path);
  const char *want = options->backend ? options->backend : "sqlite";
  const sp_store_backend *be = NULL;
  for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
    if (strcmp(backends[i]->name, want) == 0) be = backends[i];
  if (!be) return sp_err_set(err, SP_EINVAL, "plan cache: unknown backend \"%s\"", want);
  s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(options->path))) {
    rc = sp_err_set(err, SP_ENOMEM, "plan cache %s: out of memory", options->path);
    goto fail;
  }
  s->be = be;
  rc = be->open(options, &s->impl, err);
  if (rc != SP_OK) goto fail;
  *out = s;
  return SP_OK;
fail:
  if (s) free(s->path);
  free(s);
  return rc;
}

void sp_store_close(sp_store *s) {
  if (!s) return;
  s->be->close(s->impl);
  free(s->path);
  free(s);
}

const char *sp_store_path(const sp_store *s) { return s->path; }
const char *sp_store_backend_name(const sp_store *s) { return s->be->name; }

/* Rows as sp_store_put and sp_store_add_rows accept them. */
static int check_rows(const char *key, const sp_store_row *rows, size_t n_rows, sp_err *err) {
  if (n_rows && !rows) return sp_err_set(err, SP_EINVAL, "plan %s: rows missing", key);
  for (size_t i = 0; i < n_rows; i++) {
    const sp_store_row *r = &rows[i];
    size_t sl = r->section ? strlen(r->section) : 0;
    if (sl == 0 || sl > SP_STORE_SECTION_MAX)
      return sp_err_set(err, SP_EINVAL, "plan %s: row %zu has %s section name", key, i,
                        sl ? "a too long" : "no");
    if (!r->json) return sp_err_set(err, SP_EINVAL, "plan %s: row %zu has no JSON", key, i);
    if (r->idx < 0)
      return sp_err_set(err, SP_EINVAL, "plan %s: row %zu has a negative index", key, i);
  }
  return SP_OK;
}

int sp_store_put(sp_store *s, const sp_store_plan *plan, const sp_store_row *rows,
                 size_t n_rows, sp_err *err) {
  char key[SP_STORE_HASH_HEX + 1];
  if (!plan) return sp_err_set(err, SP_EINVAL, "plan cache: no plan to store");
  int rc = norm_hash(plan->key, "plan key", key, err);
  if (rc != SP_OK) return rc;
  sp_store_plan p = *plan;
  memcpy(p.key, key, sizeof key);
  if (p.raw_hash[0]) {
    rc = norm_hash(plan->raw_hash, "raw-request hash", p.raw_hash, err);
    if (rc != SP_OK) return rc;
  }
  if (!p.planner_version || !p.planner_version[0])
    return sp_err_set(err, SP_EINVAL, "plan %s: no planner version", key);
  if (!p.status || !p.status[0]) return sp_err_set(err, SP_EINVAL, "plan %s: no status", key);
  if (!p.module_name) p.module_name = "";
  if (!p.mesh) p.mesh = "";
  if ((p.request_len && !p.request) || (p.plan_len && !p.plan))
    return sp_err_set(err, SP_EINVAL, "plan %s: a blob has a length but no bytes", key);
  rc = check_rows(key, rows, n_rows, err);
  if (rc != SP_OK) return rc;
  return s->be->put(s->impl, &p, rows, n_rows, err);
}

int sp_store_add_rows(sp_store *s, const char *key, const sp_store_row *rows, size_t n_rows,
                      sp_err *err) {
  char k[SP_STORE_HASH_HEX + 1];
  int rc = norm_hash(key, "plan key", k, err);
  if (rc == SP_OK) rc = check_rows(k, rows, n_rows, err);
  if (rc != SP_OK || n_rows == 0) return rc;
  for (size_t i = 1; i < n_rows; i++)
    if (strcmp(rows[i].section, rows[0].section) != 0)
      return sp_err_set(err, SP_EINVAL, "plan %s: rows added at once must share a section "
                        "(row %zu is \"%s\", row 0 \"%s\")", k, i, rows[i].section,
                        rows[0].section);
  return s->be->add_rows(s->impl, k, rows, n_rows, err);
}

static int get_common(sp_store *s, bool by_raw, const char *hash, unsigned flags,
                      sp_store_plan *out, sp_err *err) {
  char h[SP_STORE_HASH_HEX + 1];
  if (!out) return sp_err_set(err, SP_EINVAL, "plan cache: no output for get");
  memset(out, 0, sizeof *out);
  int rc = norm_hash(hash, by_raw ? "raw-request hash" : "plan key", h, err);
  if (rc != SP_OK) return rc;
  return s->be->get(s->impl, by_raw, h, flags, out, err);
}

int sp_store_get(sp_store *s, const char *key, unsigned flags, sp_store_plan *out,
                 sp_err *err) {
  return get_common(s, false, key, flags, out, err);
}

int sp_store_get_by_raw(sp_store *s, const char *raw_hash, unsigned flags, sp_store_plan *out,
                        sp_err *err) {
  return get_common(s, true, raw_hash, flags, out, err);
}

int sp_store_add_raw_hash(sp_store *s, const char *raw_hash, const char *key, sp_err *err) {
  char r[SP_STORE_HASH_HEX + 1], k[SP_STORE_HASH_HEX + 1];
  int rc = norm_hash(raw_hash, "raw-request hash", r, err);
  if (rc == SP_OK) rc = norm_hash(key, "plan key", k, err);
  if (rc != SP_OK) return rc;
  return s->be->add_raw_hash(s->impl, r, k, err);
}

int sp_store_delete(sp_store *s, const char *key, sp_err *err) {
  char k[SP_STORE_HASH_HEX + 1];
  int rc = norm_hash(key, "plan key", k, err);
  if (rc != SP_OK) return rc;
  return s->be->del(s->impl, k, err);
}

static int check_page(int64_t offset, int64_t *limit, sp_err *err) {
  if (offset < 0 || *limit < 0)
    return sp_err_set(err, SP_EINVAL, "plan cache: negative offset or limit");
  if (*limit == 0) *limit = 100;
  return SP_OK;
}

int sp_store_list(sp_store *s, const sp_store_list_query *q, sp_store_plan_list *out,
                  sp_err *err) {
  if (!out) return sp_err_set(err, SP_EINVAL, "plan cache: no output for list");
  memset(out, 0, sizeof *out);
  sp_store_list_query query = {0};
  if (q) query = *q;
  int rc = check_page(query.offset, &query.limit, err);
  if (rc != SP_OK) return rc;
  if (query.order > SP_STORE_ORDER_KEY)
    return sp_err_set(err, SP_EINVAL, "plan cache: unknown list order %d", (int)query.order);
  return s->be->list(s->impl, &query, out, err);
}

int sp_store_rows(sp_store *s, const char *key, const sp_store_row_query *q,
                  sp_store_row_page *out, sp_err *err) {
  char k[SP_STORE_HASH_HEX + 1];
  if (!out) return sp_err_set(err, SP_EINVAL, "plan cache: no output for rows");
  memset(out, 0, sizeof *out);
  int rc = norm_hash(key, "plan key", k, err);
  if (rc != SP_OK) return rc;
  if (!q || !q->section || !q->section[0])
    return sp_err_set(err, SP_EINVAL, "plan %s: rows asked without a section", k);
  sp_store_row_query query = *q;
  rc = check_page(query.offset, &query.limit, err);
  if (rc != SP_OK) return rc;
  if (query.label_contains && !query.label_contains[0]) query.label_contains = NULL;
  return s->be->rows(s->impl, k, &query, out, err);
}

int sp_store_sections(sp_store *s, const char *key, sp_store_section_count **out, size_t *n,
                      sp_err *err) {
  char k[SP_STORE_HASH_HEX + 1];
  if (!out || !n) return sp_err_set(err, SP_EINVAL, "plan cache: no output for sections");
  *out = NULL;
  *n = 0;
  int rc = norm_hash(key, "plan key", k, err);
  if (rc != SP_OK) return rc;
  return s->be->sections(s->impl, k, out, n, err);
}

int sp_store_stats_get(sp_store *s, sp_store_stats *out, sp_err *err) {
  if (!out) return sp_err_set(err, SP_EINVAL, "plan cache: no output for stats");
  memset(out, 0, sizeof *out);
  return s->be->stats(s->impl, out, err);
}

int sp_store_evict(sp_store *s, int64_t max_bytes, int64_t *n_evicted, sp_err *err) {
  int64_t dummy;
  if (!n_evicted) n_evicted = &dummy;
  *n_evicted = 0;
  return s->be->evict(s->impl, max_bytes, n_evicted, err);
}

int sp_store_purge_version(sp_store *s, const char *keep_version, int64_t *n_purged,
                           sp_err *err) {
  int64_t dummy;
  if (!n_purged) n_purged = &dummy;
  *n_purged = 0;
  if (!keep_version)
    return sp_err_set(err, SP_EINVAL, "plan cache: purge needs the planner version to keep");
  return s->be->purge(s->impl, keep_version, n_purged, err);
}

int sp_store_flush(sp_store *s, sp_err *err) { return s->be->flush(s->impl, err); }

void sp_store_plan_free(sp_store_plan *p) {
  if (!p) return;
  sp_arena_free(p->mem_);
  memset(p, 0, sizeof *p);
}

void sp_store_plan_list_free(sp_store_plan_list *l) {
  if (!l) return;
  sp_arena_free(l->mem_);
  memset(l, 0, sizeof *l);
}

void sp_store_row_page_free(sp_store_row_page *pg) {
  if (!pg) return;
  sp_arena_free(pg->mem_);
  memset(pg, 0, sizeof *pg);
}
