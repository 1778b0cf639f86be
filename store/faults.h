/*
 * faults.h - fault injection for the plan cache, the way SQLite tests itself: a VFS shim
 * ("sp_fault") over the default VFS that fails the Nth read, write or sync with an I/O error or
 * a full disk, and an allocator installed with sqlite3_config(SQLITE_CONFIG_MALLOC) that fails
 * the Nth allocation. For tests only: it is linked into test programs and into the test build
 * of the daemon (shardpland-faults, see faults_hook.c), never into shardpland itself.
 *
 * One fault is armed at a time: sp_faults_arm(kind, n, ...) makes the n-th call of that kind
 * from now fail (n = 0: the next one), once, or every call from then on with `persist`.
 * Counting is process-wide and thread-safe (atomics), so a fault armed while a daemon serves
 * hits whichever thread makes that call.
 *
 * Memory: the allocator prefixes each block with its size (SQLite asks for it through xSize);
 * nothing else is allocated.
 */
#ifndef SP_STORE_FAULTS_H
#define SP_STORE_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/err.h"

#define SP_FAULTS_VFS "sp_fault"   /* the shim's name (sp_store_options.vfs) */

typedef enum sp_fault_kind {
  SP_FAULT_NONE = 0,
  SP_FAULT_READ,     /* xRead of any file (database, WAL, journal) */
  SP_FAULT_WRITE,    /* xWrite, xTruncate and xSync */
  SP_FAULT_MALLOC,   /* SQLite's xMalloc and xRealloc */
} sp_fault_kind;

/* Registers the VFS shim (as SQLite's default when `as_default`, so every connection uses it
 * without naming it) and, with `allocator`, installs the failing allocator: SQLite is shut
 * down and re-initialised for that, so call it before any database is opened. Idempotent. */
int sp_faults_install(bool as_default, bool allocator, sp_err *err);

/* Arms a fault: the n-th call of `kind` from now fails (every one from then on with
 * `persist`). For READ and WRITE, `full` makes a write fail with SQLITE_FULL (a full disk)
 * instead of SQLITE_IOERR_WRITE / _READ / _FSYNC. Replaces any fault armed before. */
void sp_faults_arm(sp_fault_kind kind, int64_t n, bool persist, bool full);

/* Disarms. Faults already fired stay counted. */
void sp_faults_off(void);

/* Faults fired since the process started. */
int64_t sp_faults_fired(void);

/* Parses and runs one control command (the language of faults_hook.c's socket):
 *   "arm read|write|malloc N [persist] [full]"   "off"   "fired"
 *   "fsize BYTES"   (RLIMIT_FSIZE: files of the process cannot grow past BYTES; 0 = no limit)
 * Writes the reply ("ok", "ok FIRED", or "error: ...") into `reply`. */
void sp_faults_command(const char *line, char *reply, size_t cap);

/* Runs PRAGMA integrity_check on the database at `path` through a read-only connection of
 * its own (the real VFS, the normal allocator path: arm nothing while it runs) and copies its
 * first line ("ok" when the file is sound, else SQLite's finding or the error) to `out`.
 * Returns whether it said "ok". */
bool sp_faults_integrity_ok(const char *path, char *out, size_t cap);

#endif /* SP_STORE_FAULTS_H */
