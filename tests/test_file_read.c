/*
 * test_file_read.c - the one reader of whole files (ir/file_read.h): every byte comes back,
 * NUL-terminated, at sizes around its first chunk; the size limit is exact; a missing file, a
 * failing source and an over-long input are statuses with nothing left allocated.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/err.h"
#include "ir/file_read.h"
#include "test_support.h"

/* Writes n bytes of a pattern to a fresh temporary file; returns its path (static). */
static const char *temp_file(size_t n) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/sp_file_read_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "wb");
  ck_assert_ptr_nonnull(f);
  for (size_t i = 0; i < n; i++) fputc((int)(i * 7 % 251), f);
  ck_assert_int_eq(fclose(f), 0);
  return path;
}

static void check_pattern(const char *buf, size_t n) {
  for (size_t i = 0; i < n; i++)
    ck_assert_msg((unsigned char)buf[i] == i * 7 % 251, "byte %zu differs", i);
  ck_assert_int_eq(buf[n], '\0');
}

START_TEST(files_around_the_first_chunk_come_back_whole) {
  static const size_t sizes[] = {0, 1, 65534, 65535, 65536, 65537, 200000};
  size_t n = sizes[_i];
  const char *path = temp_file(n);
  char *buf;
  size_t len = 12345;
  ck_assert_int_eq(sp_file_read(path, SIZE_MAX, &buf, &len), SP_OK);
  ck_assert_uint_eq(len, n);
  check_pattern(buf, n);
  free(buf);
  unlink(path);
}
END_TEST

START_TEST(the_limit_is_exact) {
  const char *path = temp_file(1000);
  char *buf;
  size_t len;
  ck_assert_int_eq(sp_file_read(path, 1000, &buf, &len), SP_OK);
  ck_assert_uint_eq(len, 1000);
  free(buf);
  ck_assert_int_eq(sp_file_read(path, 999, &buf, &len), SP_ELIMIT);
  ck_assert_ptr_null(buf);
  ck_assert_int_eq(errno, EFBIG);
  unlink(path);
}
END_TEST

START_TEST(a_missing_file_is_an_io_error_with_fopens_errno) {
  char *buf = (char *)1;
  ck_assert_int_eq(sp_file_read("/nonexistent/dir/f.mlir", SIZE_MAX, &buf, NULL), SP_EIO);
  ck_assert_ptr_null(buf);
  ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* A source that gives `left` bytes of 'x' in pieces of 3, then fails. */
static long failing_source(void *src, char *buf, size_t n) {
  size_t *left = src;
  if (!*left) return -1;
  size_t k = n < 3 ? n : 3;
  if (k > *left) k = *left;
  memset(buf, 'x', k);
  *left -= k;
  return (long)k;
}

START_TEST(a_failing_source_is_an_io_error) {
  size_t left = 10;
  char *buf = (char *)1;
  ck_assert_int_eq(sp_file_read_from(failing_source, &left, SIZE_MAX, &buf, NULL), SP_EIO);
  ck_assert_ptr_null(buf);
}
END_TEST

START_TEST(a_stream_is_read_from_where_it_stands) {
  const char *path = temp_file(100);
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fseek(f, 40, SEEK_SET), 0);
  char *buf;
  size_t len;
  ck_assert_int_eq(sp_file_read_stream(f, SIZE_MAX, &buf, &len), SP_OK);
  fclose(f);
  ck_assert_uint_eq(len, 60);
  ck_assert_int_eq((unsigned char)buf[0], 40 * 7 % 251);
  free(buf);
  unlink(path);
}
END_TEST

static Suite *file_read_suite(void) {
  Suite *s = suite_create("file_read");
  TCase *tc = tcase_create("file_read");
  tcase_add_loop_test(tc, files_around_the_first_chunk_come_back_whole, 0, 7);
  tcase_add_test(tc, the_limit_is_exact);
  tcase_add_test(tc, a_missing_file_is_an_io_error_with_fopens_errno);
  tcase_add_test(tc, a_failing_source_is_an_io_error);
  tcase_add_test(tc, a_stream_is_read_from_where_it_stands);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(file_read_suite()); }
