/*
 * test_support.h - helpers shared by the Check suites.
 *
 * sp_test_run() runs a suite in Check's fork mode and returns the process exit code.
 * sp_test_parse() and sp_test_print() read and write modules, failing the running test on an
 * error (cluster_support.h loads the example clusters: only suites of the search stage and above
 * link it).
 * sp_test_shared_path() builds a path under ../shared; sp_test_require_shared() exits with 77
 * (CTest's "skipped") and a message when that folder is absent.
 */
#ifndef SP_TEST_SUPPORT_H
#define SP_TEST_SUPPORT_H

#include <check.h>
#include <stdbool.h>

#include "ir/ir.h"

int sp_test_run(Suite *s);
/* Returns a static buffer: SP_SHARED_DIR "/" rel. */
const char *sp_test_shared_path(const char *rel);
/* Exits 77 with "SKIP: ..." when ../shared/<rel> does not exist. */
void sp_test_require_shared(const char *rel);
/* Whether ../shared/<rel> exists (for suites that add a part only when it does). */
bool sp_test_have_shared(const char *rel);
/* Runs a suite whose ../shared part was left out when `rel` is absent: after the other tests
 * pass, reports that part as skipped (exit 77, with a message). */
int sp_test_run_partial(Suite *s, const char *rel);
/* A fresh folder /tmp/<tag>.XXXXXX (into dir) and the path <dir>/plans.db (into db); fails
 * the test when the folder cannot be made. */
void sp_test_temp_db(const char *tag, char *dir, size_t dir_cap, char *db, size_t db_cap);
/* Removes that database with its -wal, -shm and -journal files, then the folder. */
void sp_test_remove_temp_db(const char *dir, const char *db);
/* Reads a whole file into a malloc'd NUL-terminated buffer (NULL on error). */
char *sp_test_read_file(const char *path, size_t *len);
/* Calls fn on every `// -----` chunk of every .mlir file in ../shared/<rel_dir> (files in name
 * order), `where` being "FILE:LINE" of the chunk's first line; fails the test when the folder
 * or a file cannot be read. Returns the number of chunks. */
typedef void (*sp_test_chunk_fn)(const char *text, size_t len, int first_line, const char *where,
                                 void *ctx);
int sp_test_for_each_chunk(const char *rel_dir, sp_test_chunk_fn fn, void *ctx);

/* Parses MLIR text (as "t.mlir"); fails the test with the reader's message on an error. */
sp_module *sp_test_parse(const char *text);
/* The module printed in Shardy's form (malloc'd; the caller frees). */
char *sp_test_print(const sp_module *m);
/* Parses `text` as "s.mlir" (failing the test if it does not parse) and verifies it: "" or the
 * verifier's message (a static buffer, overwritten by the next call). */
const char *sp_test_verify(const char *text);

#endif
