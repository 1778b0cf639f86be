/*
 * test_dense_check.c - dense<...> literals checked against their types (server/mlir/
 * dense_check.c): every literal MLIR's parser refuses is refused with MLIR's message at the
 * literal (or at the offending element), and the literals MLIR accepts (splats, hex blobs of
 * one element or all, nested lists of the type's shape, integers at the edges of their range)
 * still parse, in stablehlo.constant values, in structured attributes (padding) and in
 * attributes kept as text; array<...> elements are checked against their element type alike.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"
#include "mlir/mlir.h"
#include "test_support.h"

/* `  %0 = stablehlo.constant ` is 26 columns: a literal on line 2 starts at column 27. */
#define LIT_COL 27

static int parse_constant(const char *lit, const char *type, sp_err *err) {
  static char text[16384];
  snprintf(text, sizeof text,
           "func.func @main() -> %s {\n"
           "  %%0 = stablehlo.constant %s : %s\n"
           "  return %%0 : %s\n"
           "}\n",
           type, lit, type, type);
  sp_module *m = NULL;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, err);
  if (rc == SP_OK) sp_module_free(m);
  return rc;
}

typedef struct bad_case {
  const char *lit, *type;
  int col; /* on line 2 */
  const char *msg;
} bad_case;

static const bad_case bad[] = {
    /* shape */
    {"dense<[1.0, 2.0, 3.0]>", "tensor<2xf32>", LIT_COL,
     "inferred shape of elements literal ([3]) does not match type ([2])"},
    {"dense<[1.0]>", "tensor<2xf32>", LIT_COL,
     "inferred shape of elements literal ([1]) does not match type ([2])"},
    {"dense<[1.0]>", "tensor<f32>", LIT_COL,
     "inferred shape of elements literal ([1]) does not match type ([])"},
    {"dense<[[1, 2, 3], [4, 5, 6]]>", "tensor<3x2xi32>", LIT_COL,
     "inferred shape of elements literal ([2, 3]) does not match type ([3, 2])"},
    {"dense<[]>", "tensor<2xf32>", LIT_COL,
     "inferred shape of elements literal ([0]) does not match type ([2])"},
    {"dense<>", "tensor<2xf32>", LIT_COL,
     "parsed zero elements, but type (tensor<2xf32>) expected at least 1"},
    {"dense<[[1, 2], [3]]>", "tensor<2x2xi32>", LIT_COL + 15,
     "tensor literal is invalid; ranks are not consistent between elements"},
    {"dense<[1, [2]]>", "tensor<2xi32>", LIT_COL + 10,
     "tensor literal is invalid; ranks are not consistent between elements"},
    {"dense<[[1], 2]>", "tensor<2xi32>", LIT_COL + 12,
     "tensor literal is invalid; ranks are not consistent between elements"},
    {"dense<1.0>", "tensor<2x?xf32>", LIT_COL, "elements literal type must have static shape"},
    {"dense<1.0>", "f32", LIT_COL, "elements literal must be a shaped type"},
    /* hex blobs */
    {"dense<\"0x0000803F0000\">", "tensor<2xf32>", LIT_COL,
     "elements hex data size is invalid for provided type: tensor<2xf32>"},
    {"dense<\"0x00\">", "tensor<2xf32>", LIT_COL,
     "elements hex data size is invalid for provided type: tensor<2xf32>"},
    {"dense<\"0x000102\">", "tensor<9xi1>", LIT_COL,
     "elements hex data size is invalid for provided type: tensor<9xi1>"},
    {"dense<\"0x0G\">", "tensor<2xi8>", LIT_COL + 6,
     "expected string containing hex digits starting with `0x`"},
    {"dense<\"abcd\">", "tensor<2xi8>", LIT_COL + 6,
     "expected string containing hex digits starting with `0x`"},
    /* element kinds */
    {"dense<true>", "tensor<2xf32>", LIT_COL + 6, "expected floating point literal"},
    {"dense<[1.0, \"x\"]>", "tensor<2xf32>", LIT_COL + 12, "expected floating point literal"},
    {"dense<1>", "tensor<2xf32>", LIT_COL + 6,
     "unexpected decimal integer literal for a floating point value"},
    {"dense<[1.5, 2.0]>", "tensor<2xi32>", LIT_COL + 7,
     "expected integer elements, but parsed floating-point"},
    {"dense<[true, false]>", "tensor<2xi8>", LIT_COL + 7,
     "expected i1 type for 'true' or 'false' values"},
    {"dense<(1.0, 2.0)>", "tensor<2xf32>", LIT_COL + 7,
     "expected a real element for element type f32, got a complex (re, im) pair"},
    {"dense<1.0>", "tensor<2xcomplex<f32>>", LIT_COL + 6,
     "expected a complex element (re, im) for element type complex<f32>"},
    {"dense<(1.0, true)>", "tensor<complex<f32>>", LIT_COL + 12, "expected floating point literal"},
    /* ranges */
    {"dense<256>", "tensor<2xi8>", LIT_COL + 6, "integer constant out of range for type"},
    {"dense<-129>", "tensor<2xi8>", LIT_COL + 7, "integer constant out of range for type"},
    {"dense<128>", "tensor<2xsi8>", LIT_COL + 6, "integer constant out of range for type"},
    {"dense<[0, -1]>", "tensor<2xui8>", LIT_COL + 11,
     "expected unsigned integer elements, but parsed negative value"},
    {"dense<2>", "tensor<i1>", LIT_COL + 6, "integer constant out of range for type"},
    {"dense<0x100>", "tensor<i8>", LIT_COL + 6, "integer constant out of range for type"},
    {"dense<9223372036854775808>", "tensor<index>", LIT_COL + 6,
     "integer constant out of range for type"},
    {"dense<340282366920938463463374607431768211456>", "tensor<ui128>", LIT_COL + 6,
     "integer constant out of range for type"},
    {"dense<1.0e999>", "tensor<f64>", LIT_COL + 6, "floating point value too large"},
    {"dense<0x1FFFFFFFF>", "tensor<f32>", LIT_COL + 6,
     "hexadecimal float constant out of range for type"},
    {"dense<-0x7F800000>", "tensor<f32>", LIT_COL + 7,
     "hexadecimal float literal should not have a leading minus"},
};

START_TEST(a_literal_that_does_not_fit_its_type_is_rejected_at_the_literal) {
  const bad_case *c = &bad[_i];
  sp_err err;
  ck_assert_msg(parse_constant(c->lit, c->type, &err) == SP_EINVAL, "%s : %s was accepted", c->lit,
                c->type);
  char want[512];
  snprintf(want, sizeof want, "t.mlir:2:%d: %s", c->col, c->msg);
  ck_assert_str_eq(err.msg, want);
}
END_TEST

static const char *const good[][2] = {
    {"dense<1.0>", "tensor<2xf32>"},
    {"dense<[1.0, 2.0]>", "tensor<2xf32>"},
    {"dense<[[1, 2], [3, 4]]>", "tensor<2x2xi32>"},
    {"dense<\"0x0000803F\">", "tensor<2xf32>"},
    {"dense<\"0x0000803F0000803F\">", "tensor<2xf32>"},
    {"dense<\"0xFF\">", "tensor<9xi1>"},
    {"dense<\"0x01FF\">", "tensor<9xi1>"},
    {"dense<[]>", "tensor<0xf32>"},
    {"dense<>", "tensor<2x0xf32>"},
    {"dense<[[], []]>", "tensor<2x0xf32>"},
    {"dense<255>", "tensor<i8>"},
    {"dense<-128>", "tensor<i8>"},
    {"dense<127>", "tensor<si8>"},
    {"dense<[-1, true, 0, false]>", "tensor<4xi1>"},
    {"dense<0xFF>", "tensor<ui8>"},
    {"dense<-9223372036854775808>", "tensor<i64>"},
    {"dense<340282366920938463463374607431768211455>", "tensor<ui128>"},
    {"dense<-170141183460469231731687303715884105728>", "tensor<i128>"},
    {"dense<0x7F800000>", "tensor<2xf32>"},
    {"dense<[(1.0, -2.0), (0x7FC00000, 3.5)]>", "tensor<2xcomplex<f32>>"},
    {"dense<1.0e38>", "tensor<bf16>"},
};

START_TEST(a_literal_that_fits_its_type_still_parses) {
  sp_err err;
  ck_assert_msg(parse_constant(good[_i][0], good[_i][1], &err) == SP_OK, "%s : %s: %s", good[_i][0],
                good[_i][1], err.msg);
}
END_TEST

/* A structured integer attribute (padding, decoded into integers) and an attribute kept as
 * text get the same checks as a constant's value. */
/* `fmt` with `attr` in its %s parses, when `err` is NULL, or is refused with message `err`. */
static void expect_parse(const char *fmt, const char *attr, const char *err_msg) {
  char text[2048];
  snprintf(text, sizeof text, fmt, attr);
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, strlen(text), "t.mlir", 1, &m, &err);
  if (!err_msg) {
    ck_assert_msg(rc == SP_OK, "%s: %s", attr, err.msg);
    sp_module_free(m);
    return;
  }
  ck_assert_msg(rc == SP_EINVAL, "%s was accepted", attr);
  ck_assert_str_eq(err.msg, err_msg);
}

START_TEST(dense_literals_in_other_attributes_are_checked_too) {
  const char *fmt =
      "func.func @f(%%a: tensor<8x16xf32>, %%z: tensor<f32>) -> tensor<4x16xf32> {\n"
      "  %%0 = \"stablehlo.reduce_window\"(%%a, %%z) ({\n"
      "    ^bb0(%%x: tensor<f32>, %%y: tensor<f32>):\n"
      "      %%m = stablehlo.maximum %%x, %%y : tensor<f32>\n"
      "      stablehlo.return %%m : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>,\n"
      "      padding = %s} : (tensor<8x16xf32>, tensor<f32>) -> tensor<4x16xf32>\n"
      "  return %%0 : tensor<4x16xf32>\n"
      "}\n";
  struct { const char *padding, *err; } cases[] = {
      {"dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>", NULL},
      {"dense<0> : tensor<2x2xi64>", NULL},
      {"dense<[[0, 0, 1], [1]]> : tensor<2x2xi64>",
       "t.mlir:7:35: tensor literal is invalid; ranks are not consistent between elements"},
      {"dense<[0, 0, 1, 1]> : tensor<2x2xi64>",
       "t.mlir:7:17: inferred shape of elements literal ([4]) does not match type ([2, 2])"},
      {"dense<[[0, 0], [1, 1.5]]> : tensor<2x2xi64>",
       "t.mlir:7:36: expected integer elements, but parsed floating-point"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_parse(fmt, cases[i].padding, cases[i].err);
  const char *text_attr =
      "func.func @f() -> tensor<2xf32> {\n"
      "  %0 = \"foo.bar\"() {v = dense<[1, 2, 3]> : tensor<2xi64>} : () -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n";
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text_attr, strlen(text_attr), "t.mlir", 1, &m, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg,
                   "t.mlir:2:25: inferred shape of elements literal ([3]) does not match type ([2])");
}
END_TEST

/* array<elem: ...> elements are checked against their element type the same way, whether the
 * attribute is one the reader decodes (slice's indices) or one it keeps as text. */
START_TEST(array_literal_elements_are_checked_against_their_element_type) {
  const char *fmt =
      "func.func @f(%%a: tensor<8x16xf32>) -> tensor<8x8xf32> {\n"
      "  %%0 = \"stablehlo.slice\"(%%a) {start_indices = %s, limit_indices = array<i64: 8, 16>,\n"
      "      strides = array<i64: 1, 2>} : (tensor<8x16xf32>) -> tensor<8x8xf32>\n"
      "  return %%0 : tensor<8x8xf32>\n"
      "}\n";
  struct { const char *start, *err; } cases[] = {
      {"array<i64: 0, 0>", NULL},
      {"array<i64: 0, 99999999999999999999>",
       "t.mlir:2:61: integer constant out of range for type"},
      {"array<i8: 0, 300>", "t.mlir:2:60: integer constant out of range for type"},
      {"array<ui8: 0, -3>", "t.mlir:2:62: expected unsigned integer elements, but parsed negative value"},
      {"array<i64: 0, 1.5>", "t.mlir:2:61: expected integer elements, but parsed floating-point"},
      {"array<i64: 0, true>", "t.mlir:2:61: expected i1 type for 'true' or 'false' values"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_parse(fmt, cases[i].start, cases[i].err);
  const char *text_attr =
      "func.func @f() -> tensor<2xf32> {\n"
      "  %0 = \"foo.bar\"() {v = array<i16: 1, 70000>} : () -> tensor<2xf32>\n"
      "  return %0 : tensor<2xf32>\n"
      "}\n";
  sp_module *m = NULL;
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text_attr, strlen(text_attr), "t.mlir", 1, &m, &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "t.mlir:2:39: integer constant out of range for type");
}
END_TEST

/* A literal too long to convert exactly is refused as such, never looped over for long. */
START_TEST(a_huge_integer_literal_is_refused_quickly) {
  static char lit[8192];
  strcpy(lit, "dense<");
  size_t n = strlen(lit);
  memset(lit + n, '9', 5000);
  strcpy(lit + n + 5000, ">");
  sp_err err;
  ck_assert_int_eq(parse_constant(lit, "tensor<i64>", &err), SP_EINVAL);
  ck_assert_str_eq(err.msg, "t.mlir:2:33: integer constant out of range for type");
  ck_assert_int_eq(parse_constant(lit, "tensor<i65536>", &err), SP_ELIMIT);
  ck_assert_str_eq(err.msg, "t.mlir:2:33: integer literal of 5000 digits is too long to check");
}
END_TEST

static Suite *dense_check_suite(void) {
  Suite *s = suite_create("dense_check");
  TCase *tc = tcase_create("literals");
  tcase_add_loop_test(tc, a_literal_that_does_not_fit_its_type_is_rejected_at_the_literal, 0,
                      (int)(sizeof bad / sizeof bad[0]));
  tcase_add_loop_test(tc, a_literal_that_fits_its_type_still_parses, 0,
                      (int)(sizeof good / sizeof good[0]));
  tcase_add_test(tc, dense_literals_in_other_attributes_are_checked_too);
  tcase_add_test(tc, array_literal_elements_are_checked_against_their_element_type);
  tcase_add_test(tc, a_huge_integer_literal_is_refused_quickly);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(dense_check_suite()); }
