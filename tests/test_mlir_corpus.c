/*
 * test_mlir_corpus.c - every `// -----` chunk of Shardy's conformance files (read from
 * ../shared, never copied) parses, and print -> parse -> print is a fixed point per chunk.
 * Skipped (exit 77) when ../shared is absent.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "mlir/mlir.h"
#include "test_support.h"

static const char *const corpus[] = {
    "basic_propagation.mlir", "basic_propagation_conservative.mlir",
    "basic_propagation_data_flow_edges.mlir", "basic_propagation_keep_sharding_rules.mlir",
    "basic_propagation_token.mlir", "edge_shardings.mlir", "op_priority_propagation.mlir",
    "op_sharding_rule_registry.mlir", "op_sharding_rule_registry_failures.mlir",
    "propagation_pipeline.mlir", "propagation_pipeline_data_flow_edges.mlir",
    "sharding_origins.mlir"};

START_TEST(every_conformance_chunk_parses_and_prints_to_a_fixed_point) {
  int total = 0, parsed = 0, fixed = 0;
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
    char rel[256];
    snprintf(rel, sizeof rel, "conformance/shardy/%s", corpus[i]);
    size_t len;
    char *text = sp_test_read_file(sp_test_shared_path(rel), &len);
    ck_assert_msg(text != NULL, "cannot read %s", rel);
    int n = sp_mlir_split(text, len, NULL, 0);
    sp_mlir_chunk *ch = malloc((size_t)n * sizeof *ch);
    sp_mlir_split(text, len, ch, n);
    for (int k = 0; k < n; k++) {
      total++;
      sp_module *m = NULL, *m2 = NULL;
      sp_err err;
      if (sp_mlir_parse(ch[k].begin, ch[k].len, corpus[i], ch[k].first_line, &m, &err) != SP_OK) {
        fprintf(stderr, "parse failed: %s\n", err.msg);
        continue;
      }
      parsed++;
      sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
      ck_assert_int_eq(sp_mlir_print(m, &a, &err), SP_OK);
      if (sp_mlir_parse(a.buf, a.len, "printed", 1, &m2, &err) == SP_OK) {
        ck_assert_int_eq(sp_mlir_print(m2, &b, &err), SP_OK);
        if (strcmp(sp_strbuf_str(&a), sp_strbuf_str(&b)) == 0) fixed++;
        else fprintf(stderr, "%s chunk %d is not a fixed point\n", corpus[i], k);
        sp_module_free(m2);
      } else {
        fprintf(stderr, "%s chunk %d: printed text does not parse: %s\n", corpus[i], k, err.msg);
      }
      sp_strbuf_free(&a);
      sp_strbuf_free(&b);
      sp_module_free(m);
    }
    free(ch);
    free(text);
  }
  printf("chunks parsed %d / total %d; print -> parse -> print fixed points %d / %d\n", parsed,
         total, fixed, total);
  ck_assert_int_eq(parsed, total);
  ck_assert_int_eq(fixed, total);
  ck_assert_int_ge(total, 250); /* INDEX.md lists 251 cases */
}
END_TEST

static Suite *corpus_suite(void) {
  Suite *s = suite_create("mlir_corpus");
  TCase *tc = tcase_create("conformance");
  tcase_add_test(tc, every_conformance_chunk_parses_and_prints_to_a_fixed_point);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  sp_test_require_shared("conformance/shardy");
  return sp_test_run(corpus_suite());
}
