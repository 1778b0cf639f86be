/*
 * test_support.c - helpers shared by the Check suites (see test_support.h).
 */
#include "test_support.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/file_read.h"
#include "ir/strbuf.h"
#include "ir/verify.h"
#include "mlir/mlir.h"

int sp_test_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}

const char *sp_test_shared_path(const char *rel) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", SP_SHARED_DIR, rel);
  return buf;
}

void sp_test_require_shared(const char *rel) {
  struct stat st;
  const char *p = sp_test_shared_path(rel);
  if (stat(p, &st) != 0) {
    printf("SKIP: %s is absent; this test reads the shared conformance/benchmark files\n", p);
    exit(77);
  }
}

bool sp_test_have_shared(const char *rel) {
  struct stat st;
  return stat(sp_test_shared_path(rel), &st) == 0;
}

int sp_test_run_partial(Suite *s, const char *rel) {
  bool present = sp_test_have_shared(rel);
  int rc = sp_test_run(s);
  if (rc == 0 && !present) {
    printf("SKIP: %s is absent; the part of this suite that reads it did not run\n",
           sp_test_shared_path(rel));
    return 77;
  }
  return rc;
}

void sp_test_temp_db(const char *tag, char *dir, size_t dir_cap, char *db, size_t db_cap) {
  snprintf(dir, dir_cap, "/tmp/%s.XXXXXX", tag);
  ck_assert_msg(mkdtemp(dir) != NULL, "cannot make a folder %s", dir);
  snprintf(db, db_cap, "%s/plans.db", dir);
}

void sp_test_remove_temp_db(const char *dir, const char *db) {
  static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
  char p[4096];
  for (int i = 0; i < 4; i++) {
    snprintf(p, sizeof p, "%s%s", db, suffix[i]);
    unlink(p);
  }
  rmdir(dir);
}

char *sp_test_read_file(const char *path, size_t *len) {
  char *buf;
  return sp_file_read(path, SIZE_MAX, &buf, len) == SP_OK ? buf : NULL;
}

sp_module *sp_test_parse(const char *text) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return m;
}

char *sp_test_print(const sp_module *m) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_err err;
  int rc = sp_mlir_print(m, &sb, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return sp_strbuf_detach(&sb);
}

const char *sp_test_verify(const char *text) {
  static char msg[SP_ERR_MSG_MAX];
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "s.mlir", 1, &m, &err);
  ck_assert_msg(rc == SP_OK, "parse: %s", err.msg);
  rc = sp_verify_module(m, &err);
  snprintf(msg, sizeof msg, "%s", rc == SP_OK ? "" : err.msg);
  sp_module_free(m);
  return msg;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_mlir(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return n > 5 && strcmp(e->d_name + n - 5, ".mlir") == 0;
}

int sp_test_for_each_chunk(const char *rel_dir, sp_test_chunk_fn fn, void *ctx) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", sp_test_shared_path(rel_dir));
  struct dirent **names;
  int nfiles = scandir(dir, &names, is_mlir, by_name);
  ck_assert_msg(nfiles >= 0, "cannot read the folder %s", dir);
  int total = 0;
  for (int f = 0; f < nfiles; f++) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, names[f]->d_name);
    size_t len;
    char *text = sp_test_read_file(path, &len);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    int n = sp_mlir_split(text, len, NULL, 0);
    sp_mlir_chunk *ch = calloc((size_t)(n > 0 ? n : 1), sizeof *ch);
    sp_mlir_split(text, len, ch, n);
    for (int k = 0; k < n; k++) {
      char where[4200];
      snprintf(where, sizeof where, "%s:%d", names[f]->d_name, ch[k].first_line);
      fn(ch[k].begin, ch[k].len, ch[k].first_line, where, ctx);
    }
    total += n;
    free(ch);
    free(text);
    free(names[f]);
  }
  free(names);
  return total;
}
