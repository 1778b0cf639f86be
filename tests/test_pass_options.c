/*
 * test_pass_options.c - the one tokenizer of pass options (ir/pass_options.h): MLIR's form
 * (spaces, tabs or commas between items, quoted values, `{...}`) and -shardplan-search's word
 * form (values run to the next space or tab), and the boolean values every pass accepts.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ir/err.h"
#include "ir/pass_options.h"
#include "test_support.h"

/* The items of `text` as "key=value;" (key alone when it has no '='). */
static void items(const char *text, bool words, char *out, size_t cap) {
  const char *p = words ? text : sp_options_begin(text);
  sp_option_item it;
  size_t n = 0;
  out[0] = '\0';
  while (words ? sp_options_next_word(&p, &it) : sp_options_next(&p, &it))
    n += (size_t)snprintf(out + n, cap - n, it.has_value ? "%.*s=%.*s;" : "%.*s;", (int)it.key_len,
                          it.key, (int)it.value_len, it.value);
}

START_TEST(mlir_form_splits_on_spaces_tabs_and_commas_and_unquotes) {
  char out[256];
  items("{a=1,b='x y'\tc \"d\"=2 e=\"q,r\"}", false, out, sizeof out);
  ck_assert_str_eq(out, "a=1;b=x y;c;\"d\"=2;e=q,r;");
  items(NULL, false, out, sizeof out);
  ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(word_form_keeps_lists_and_equals_inside_values) {
  char out[256];
  items("  devices=0,1,2,3\tmesh=data=4,model=2 state='x' bare =v", true, out, sizeof out);
  ck_assert_str_eq(out, "devices=0,1,2,3;mesh=data=4,model=2;state='x';bare;=v;");
}
END_TEST

START_TEST(booleans_are_true_false_one_zero_or_a_bare_key) {
  const char *p = sp_options_begin("a b=true c=0 d=1 e=false f=yes");
  sp_option_item it;
  bool want[] = {true, true, false, true, false};
  for (int i = 0; i < 5; i++) {
    bool v = !want[i];
    ck_assert(sp_options_next(&p, &it));
    ck_assert_int_eq(sp_option_bool("pass", &it, &v, NULL), SP_OK);
    ck_assert_int_eq(v, want[i]);
  }
  ck_assert(sp_options_next(&p, &it));
  ck_assert(sp_option_is(&it, "f"));
  ck_assert(!sp_option_is(&it, "ff"));
  sp_err err;
  bool v;
  ck_assert_int_eq(sp_option_bool("pass", &it, &v, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "-pass: option f expects true or false, not 'yes'");
}
END_TEST

START_TEST(parse_bools_names_an_unknown_key) {
  bool x = false;
  static const char *const keys[] = {"x"};
  bool *const outs[] = {&x};
  sp_err err;
  ck_assert_int_eq(sp_options_parse_bools("p", "x", keys, outs, 1, &err), SP_OK);
  ck_assert(x);
  ck_assert_int_eq(sp_options_parse_bools("p", "x=0 y", keys, outs, 1, &err), SP_EINVAL);
  ck_assert(!x);
  ck_assert_str_eq(err.msg, "-p: unknown option 'y'");
}
END_TEST

static Suite *pass_options_suite(void) {
  Suite *s = suite_create("pass_options");
  TCase *tc = tcase_create("tokenizer");
  tcase_add_test(tc, mlir_form_splits_on_spaces_tabs_and_commas_and_unquotes);
  tcase_add_test(tc, word_form_keeps_lists_and_equals_inside_values);
  tcase_add_test(tc, booleans_are_true_false_one_zero_or_a_bare_key);
  tcase_add_test(tc, parse_bools_names_an_unknown_key);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(pass_options_suite()); }
