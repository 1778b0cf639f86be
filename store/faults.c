/*
 * faults.c - the failing VFS shim and allocator of faults.h, and its control commands.
 *
 * The shim forwards every call to the VFS that was the default when it was installed; a
 * forwarded file keeps the real sqlite3_file right after the shim's own struct (szOsFile
 * covers both). The armed fault is four atomics: its kind, a countdown decremented by every
 * call of that kind, whether it persists, and whether it reports a full disk.
 */
#include "store/faults.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static atomic_int g_kind;              /* sp_fault_kind armed, SP_FAULT_NONE: none */
static atomic_llong g_countdown;
static atomic_bool g_persist, g_full;
static atomic_llong g_fired;

static bool fault_now(sp_fault_kind kind) {
  if (atomic_load(&g_kind) != (int)kind) return false;
  long long v = atomic_fetch_sub(&g_countdown, 1);
  if (v == 0 || (v < 0 && atomic_load(&g_persist))) {
    atomic_fetch_add(&g_fired, 1);
    return true;
  }
  return false;
}

void sp_faults_arm(sp_fault_kind kind, int64_t n, bool persist, bool full) {
  atomic_store(&g_kind, SP_FAULT_NONE);
  atomic_store(&g_countdown, n < 0 ? 0 : n);
  atomic_store(&g_persist, persist);
  atomic_store(&g_full, full);
  atomic_store(&g_kind, (int)kind);
}

void sp_faults_off(void) { atomic_store(&g_kind, SP_FAULT_NONE); }

int64_t sp_faults_fired(void) { return atomic_load(&g_fired); }

/* ---------------------------------------------------------------- the VFS shim */

static sqlite3_vfs *g_base;

typedef struct fault_file {
  sqlite3_file base;
  sqlite3_file *real;   /* allocated right after this struct */
} fault_file;

static sqlite3_file *real(sqlite3_file *f) { return ((fault_file *)f)->real; }

static int f_close(sqlite3_file *f) {
  sqlite3_file *r = real(f);
  return r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
}
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 off) {
  if (fault_now(SP_FAULT_READ)) return atomic_load(&g_full) ? SQLITE_FULL : SQLITE_IOERR_READ;
  return real(f)->pMethods->xRead(real(f), b, n, off);
}
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off) {
  if (fault_now(SP_FAULT_WRITE)) return atomic_load(&g_full) ? SQLITE_FULL : SQLITE_IOERR_WRITE;
  return real(f)->pMethods->xWrite(real(f), b, n, off);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size) {
  if (fault_now(SP_FAULT_WRITE)) return SQLITE_IOERR_TRUNCATE;
  return real(f)->pMethods->xTruncate(real(f), size);
}
static int f_sync(sqlite3_file *f, int flags) {
  if (fault_now(SP_FAULT_WRITE)) return atomic_load(&g_full) ? SQLITE_FULL : SQLITE_IOERR_FSYNC;
  return real(f)->pMethods->xSync(real(f), flags);
}
static int f_size(sqlite3_file *f, sqlite3_int64 *size) {
  return real(f)->pMethods->xFileSize(real(f), size);
}
static int f_lock(sqlite3_file *f, int l) { return real(f)->pMethods->xLock(real(f), l); }
static int f_unlock(sqlite3_file *f, int l) { return real(f)->pMethods->xUnlock(real(f), l); }
static int f_check_lock(sqlite3_file *f, int *out) {
  return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
static int f_control(sqlite3_file *f, int op, void *arg) {
  return real(f)->pMethods->xFileControl(real(f), op, arg);
}
static int f_sector(sqlite3_file *f) { return real(f)->pMethods->xSectorSize(real(f)); }
static int f_chars(sqlite3_file *f) {
  return real(f)->pMethods->xDeviceCharacteristics(real(f));
}
static int f_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp) {
  return real(f)->pMethods->xShmMap(real(f), pg, sz, ext, pp);
}
static int f_shm_lock(sqlite3_file *f, int off, int n, int flags) {
  return real(f)->pMethods->xShmLock(real(f), off, n, flags);
}
static void f_shm_barrier(sqlite3_file *f) { real(f)->pMethods->xShmBarrier(real(f)); }
static int f_shm_unmap(sqlite3_file *f, int del) {
  return real(f)->pMethods->xShmUnmap(real(f), del);
}

static const sqlite3_io_methods fault_methods = {
    2, f_close, f_read, f_write, f_truncate, f_sync, f_size, f_lock, f_unlock, f_check_lock,
    f_control, f_sector, f_chars, f_shm_map, f_shm_lock, f_shm_barrier, f_shm_unmap, NULL, NULL};

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out) {
  fault_file *ff = (fault_file *)f;
  ff->real = (sqlite3_file *)(ff + 1);
  memset(ff->real, 0, (size_t)g_base->szOsFile);
  int rc = g_base->xOpen(g_base, name, ff->real, flags, out);
  ff->base.pMethods = rc == SQLITE_OK ? &fault_methods : NULL;
  return rc;
}
static int v_delete(sqlite3_vfs *v, const char *n, int d) { return g_base->xDelete(g_base, n, d); }
static int v_access(sqlite3_vfs *v, const char *n, int f, int *o) {
  return g_base->xAccess(g_base, n, f, o);
}
static int v_full(sqlite3_vfs *v, const char *n, int k, char *o) {
  return g_base->xFullPathname(g_base, n, k, o);
}
static int v_random(sqlite3_vfs *v, int n, char *o) { return g_base->xRandomness(g_base, n, o); }
static int v_sleep(sqlite3_vfs *v, int us) { return g_base->xSleep(g_base, us); }
static int v_time(sqlite3_vfs *v, double *t) { return g_base->xCurrentTime(g_base, t); }
static int v_error(sqlite3_vfs *v, int n, char *o) { return g_base->xGetLastError(g_base, n, o); }
static int v_time64(sqlite3_vfs *v, sqlite3_int64 *t) {
  return g_base->xCurrentTimeInt64(g_base, t);
}

static sqlite3_vfs g_vfs;

/* ---------------------------------------------------------------- the allocator */

static void *m_malloc(int n) {
  if (fault_now(SP_FAULT_MALLOC)) return NULL;
  sqlite3_int64 *p = malloc((size_t)n + 8);
  if (!p) return NULL;
  p[0] = n;
  return p + 1;
}
static void m_free(void *p) {
  if (p) free((sqlite3_int64 *)p - 1);
}
static void *m_realloc(void *p, int n) {
  if (fault_now(SP_FAULT_MALLOC)) return NULL;
  sqlite3_int64 *q = realloc((sqlite3_int64 *)p - 1, (size_t)n + 8);
  if (!q) return NULL;
  q[0] = n;
  return q + 1;
}
static int m_size(void *p) { return p ? (int)((sqlite3_int64 *)p)[-1] : 0; }
static int m_roundup(int n) { return (n + 7) & ~7; }
static int m_init(void *u) { return SQLITE_OK; }
static void m_shutdown(void *u) {}

static const sqlite3_mem_methods g_mem = {m_malloc, m_free, m_realloc, m_size, m_roundup,
                                          m_init, m_shutdown, NULL};

int sp_faults_install(bool as_default, bool allocator, sp_err *err) {
  static bool mem_done;
  if (allocator && !mem_done) {
    int rc = sqlite3_shutdown();
    if (rc == SQLITE_OK) rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &g_mem);
    if (rc == SQLITE_OK) rc = sqlite3_initialize();
    if (rc != SQLITE_OK)
      return sp_err_set(err, SP_EINTERNAL, "faults: cannot install the allocator: %s",
                        sqlite3_errstr(rc));
    mem_done = true;
  }
  if (!g_base) {
    int rc = sqlite3_initialize();
    if (rc == SQLITE_OK && !(g_base = sqlite3_vfs_find(NULL))) rc = SQLITE_ERROR;
    if (rc != SQLITE_OK)
      return sp_err_set(err, SP_EINTERNAL, "faults: no default VFS: %s", sqlite3_errstr(rc));
    g_vfs = (sqlite3_vfs){.iVersion = 2,
                          .szOsFile = (int)sizeof(fault_file) + g_base->szOsFile,
                          .mxPathname = g_base->mxPathname,
                          .zName = SP_FAULTS_VFS,
                          .xOpen = v_open,
                          .xDelete = v_delete,
                          .xAccess = v_access,
                          .xFullPathname = v_full,
                          .xRandomness = v_random,
                          .xSleep = v_sleep,
                          .xCurrentTime = v_time,
                          .xGetLastError = v_error,
                          .xCurrentTimeInt64 = v_time64};
  }
  int rc = sqlite3_vfs_register(&g_vfs, as_default ? 1 : 0);
  if (rc != SQLITE_OK)
    return sp_err_set(err, SP_EINTERNAL, "faults: cannot register the VFS: %s",
                      sqlite3_errstr(rc));
  return SP_OK;
}

/* ---------------------------------------------------------------- control commands */

void sp_faults_command(const char *line, char *reply, size_t cap) {
  char verb[16] = "", what[16] = "", f1[16] = "", f2[16] = "";
  long long n = 0;
  int k = sscanf(line, "%15s %15s %lld %15s %15s", verb, what, &n, f1, f2);
  if (k >= 3 && strcmp(verb, "arm") == 0) {
    sp_fault_kind kind = strcmp(what, "read") == 0     ? SP_FAULT_READ
                         : strcmp(what, "write") == 0  ? SP_FAULT_WRITE
                         : strcmp(what, "malloc") == 0 ? SP_FAULT_MALLOC
                                                       : SP_FAULT_NONE;
    bool persist = false, full = false, bad = kind == SP_FAULT_NONE || n < 0;
    const char *flags[2] = {k >= 4 ? f1 : "", k >= 5 ? f2 : ""};
    for (int i = 0; i < 2; i++) {
      if (strcmp(flags[i], "persist") == 0) persist = true;
      else if (strcmp(flags[i], "full") == 0) full = true;
      else if (*flags[i]) bad = true;
    }
    if (bad) {
      snprintf(reply, cap, "error: usage: arm read|write|malloc N [persist] [full]");
      return;
    }
    sp_faults_arm(kind, n, persist, full);
    snprintf(reply, cap, "ok");
  } else if (k >= 1 && strcmp(verb, "off") == 0) {
    sp_faults_off();
    snprintf(reply, cap, "ok");
  } else if (k >= 1 && strcmp(verb, "fired") == 0) {
    snprintf(reply, cap, "ok %lld", (long long)sp_faults_fired());
  } else if (k >= 1 && strcmp(verb, "fsize") == 0 && sscanf(line, "%*s %lld", &n) == 1 &&
             n >= 0) {
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = n == 0 ? rl.rlim_max : (rlim_t)n;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      snprintf(reply, cap, "error: setrlimit(RLIMIT_FSIZE, %lld) failed", n);
    else
      snprintf(reply, cap, "ok");
  } else {
    snprintf(reply, cap, "error: unknown command \"%.60s\"", line);
  }
}

/* ---------------------------------------------------------------- checking a file */

bool sp_faults_integrity_ok(const char *path, char *out, size_t cap) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
    snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
  else
    snprintf(out, cap, "%s: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return strcmp(out, "ok") == 0;
}
