/*
 * replay_main.c - runs a fuzz target's LLVMFuzzerTestOneInput on files, without libFuzzer.
 *
 *   fuzz_replay_<target> PATH...    (files, or folders whose files are all replayed)
 *
 * This is how the normal build (gcc, plain or ASan+UBSan) tests the regression inputs of
 * fuzz/regressions/<target>/ and the seed corpora: a crash or a failed check aborts the run
 * and CTest reports it. Files are replayed in sorted order; the count goes to stdout.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/err.h"
#include "ir/file_read.h"
#include "ir/grow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static long replayed;

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t len = 0;
  char *buf;
  int rc = sp_file_read_stream(f, SIZE_MAX, &buf, &len);
  fclose(f);
  if (rc) {
    fprintf(stderr, "replay: %s %s\n", rc == SP_ENOMEM ? "out of memory reading" : "cannot read", path);
    return 1;
  }
  /* An exact-size copy, so that reads past the end are caught by ASan. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    return 1;
  }
  memcpy(exact, buf, len);
  free(buf);
  fprintf(stderr, "replay: %s\n", path);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  replayed++;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "replay: %s does not exist\n", path);
    return 1;
  }
  if (!S_ISDIR(st.st_mode)) return replay_file(path);
  DIR *d = opendir(path);
  if (!d) return 1;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (sp_grow_z((void **)&names, &cap, n, sizeof *names)) { rc = 1; break; }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) { rc = 1; break; }
    snprintf(names[n], len, "%s/%s", path, e->d_name);
    n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n; i++) {
    if (rc == 0) rc = replay_path(names[i]);
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  int rc = 0;
  for (int i = 1; i < argc && rc == 0; i++) rc = replay_path(argv[i]);
  if (rc == 0) printf("replay: %ld inputs, no crash\n", replayed);
  return rc;
}
