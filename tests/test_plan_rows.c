/*
 * test_plan_rows.c - a plan as the cache's rows (store/plan_rows.h): every section present,
 * numbered as the dashboard reads them, and the per-op costs adding up to the plan's totals.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "store/plan_rows.h"
#include "cluster_support.h"
#include "test_support.h"

static sp_plan *searched_mlp(void) {
  size_t len;
  char *text = sp_test_read_file(SP_SOURCE_DIR "/examples/mlp.mlir", &len);
  ck_assert_ptr_nonnull(text);
  sp_cluster *cl = sp_test_load_cluster("one_machine_8gpu.json");
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.time_limit = 10;
  sp_plan_input in = {NULL, text, len, "mlp.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  ck_assert_msg(sp_plan_run(&in, cl, &o, &p, &err) == SP_OK, "%s", err.msg);
  free(text);
  sp_cluster_free(cl);
  return p;
}

static int count(const sp_plan_rows *r, const char *section) {
  int n = 0;
  for (size_t i = 0; i < r->n; i++) n += strcmp(r->v[i].section, section) == 0;
  return n;
}

START_TEST(every_section_is_numbered_as_pages_read_it) {
  sp_plan *p = searched_mlp();
  sp_plan_rows r;
  sp_err err;
  ck_assert_int_eq(sp_plan_rows_build(p, &r, &err), SP_OK);
  ck_assert_int_eq(count(&r, "summary"), 1);
  ck_assert_int_eq(count(&r, "value"), p->nvalues);
  ck_assert_int_eq(count(&r, "op"), p->nops);
  ck_assert_int_eq(count(&r, "collective"), p->ncollectives);
  int64_t next_value = 0;
  for (size_t i = 0; i < r.n; i++) {
    const sp_store_row *row = &r.v[i];
    if (strcmp(row->section, "value") == 0) {
      ck_assert_int_eq(row->idx, next_value++);   /* dense: pages are read by idx */
      ck_assert_str_eq(row->label, p->values[row->idx].name);
      cJSON *j = cJSON_Parse(row->json);
      ck_assert_ptr_nonnull(cJSON_GetObjectItem(j, "origins"));
      cJSON_Delete(j);
    } else if (strcmp(row->section, "op") == 0) {
      cJSON *j = cJSON_Parse(row->json);
      ck_assert_int_eq(cJSON_GetObjectItem(j, "op")->valueint, row->idx);  /* idx = op number */
      ck_assert_ptr_nonnull(cJSON_GetObjectItem(j, "operands"));
      cJSON_Delete(j);
    } else if (strcmp(row->section, "summary") == 0) {
      cJSON *j = cJSON_Parse(row->json);
      ck_assert_int_eq(cJSON_GetObjectItem(j, "nvalues")->valueint, p->nvalues);
      ck_assert_int_eq(cJSON_GetObjectItem(j, "ncollectives")->valueint, p->ncollectives);
      ck_assert(cJSON_IsObject(cJSON_GetObjectItem(j, "costs")));
      cJSON_Delete(j);
    }
  }
  sp_plan_rows_free(&r);
  sp_plan_free(p);
}
END_TEST

START_TEST(op_costs_add_up_to_the_plan_totals_costliest_first) {
  sp_plan *p = searched_mlp();
  ck_assert_int_gt(p->nop_costs, 0);
  sp_plan_rows r;
  sp_err err;
  ck_assert_int_eq(sp_plan_rows_build(p, &r, &err), SP_OK);
  double compute = 0, comm = 0, reshard = 0, last = INFINITY;
  int64_t next = 0;
  for (size_t i = 0; i < r.n; i++) {
    if (strcmp(r.v[i].section, "op_cost") != 0) continue;
    ck_assert_int_eq(r.v[i].idx, next++);
    cJSON *j = cJSON_Parse(r.v[i].json);
    double c = cJSON_GetObjectItem(j, "compute_s")->valuedouble;
    double m = cJSON_GetObjectItem(j, "comm_s")->valuedouble;
    double s = cJSON_GetObjectItem(j, "reshard_s")->valuedouble;
    ck_assert_double_le(c + m + s, last * (1 + 1e-12));
    last = c + m + s;
    compute += c;
    comm += m;
    reshard += s;
    cJSON_Delete(j);
  }
  ck_assert_int_gt(next, 0);
  ck_assert_double_eq_tol(compute, p->costs.compute_s, 1e-9 * p->costs.compute_s + 1e-15);
  ck_assert_double_eq_tol(comm, p->costs.collective_s, 1e-9 * p->costs.collective_s + 1e-15);
  ck_assert_double_eq_tol(reshard, p->costs.reshard_s, 1e-9 * p->costs.reshard_s + 1e-15);
  sp_plan_rows_free(&r);
  sp_plan_free(p);
}
END_TEST

START_TEST(op_compute_survives_the_json_round_trip) {
  sp_plan *p = searched_mlp();
  char *a = sp_plan_to_json_text(p, false);
  sp_plan *q = NULL;
  sp_err err;
  ck_assert_msg(sp_plan_from_json(a, strlen(a), &q, &err) == SP_OK, "%s", err.msg);
  ck_assert_int_eq(q->nop_costs, p->nop_costs);
  char *b = sp_plan_to_json_text(q, false);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  sp_plan_free(q);
  sp_plan_free(p);
}
END_TEST

START_TEST(rows_without_origins_leave_them_to_the_origin_section) {
  sp_plan *p = searched_mlp();
  sp_plan_rows full, lean, org;
  sp_err err;
  ck_assert_int_eq(sp_plan_rows_build(p, &full, &err), SP_OK);
  ck_assert_int_eq(sp_plan_rows_build_with(p, SP_PLAN_ROWS_NO_ORIGINS, &lean, &err), SP_OK);
  ck_assert_int_eq(sp_plan_rows_origins(p, &org, &err), SP_OK);
  ck_assert_int_eq(count(&lean, "value"), p->nvalues);
  ck_assert_int_eq(count(&org, "origin"), p->nvalues);
  ck_assert_uint_eq(full.n, lean.n);
  int traced = 0, shardy = 0;
  for (size_t i = 0; i < full.n; i++) {
    if (strcmp(full.v[i].section, "value") != 0) {
      ck_assert_str_eq(full.v[i].json, lean.v[i].json);   /* the other rows are the same */
      continue;
    }
    /* The value row with its origins = the lean row + the origin row of the same idx. */
    cJSON *f = cJSON_Parse(full.v[i].json), *l = cJSON_Parse(lean.v[i].json);
    ck_assert_ptr_null(cJSON_GetObjectItem(l, "origins"));
    /* Shardy's own origins are plan data: the lean row has them already. */
    const cJSON *so = cJSON_GetObjectItem(l, "sharding_origins");
    if (so) {
      ck_assert(cJSON_IsObject(so) && so->child && cJSON_IsString(so->child));
      shardy++;
    }
    const sp_store_row *o = &org.v[lean.v[i].idx];
    ck_assert_int_eq(o->idx, lean.v[i].idx);
    cJSON_AddItemToObject(l, "origins", cJSON_Parse(o->json));
    char *a = cJSON_PrintUnformatted(f), *b = cJSON_PrintUnformatted(l);
    ck_assert_str_eq(a, b);
    traced += cJSON_GetArraySize(cJSON_GetObjectItem(f, "origins")) > 0;
    free(a);
    free(b);
    cJSON_Delete(f);
    cJSON_Delete(l);
  }
  ck_assert_int_gt(traced, 0);
  ck_assert_int_gt(shardy, 0);
  sp_plan_rows_free(&org);
  sp_plan_rows_free(&lean);
  sp_plan_rows_free(&full);
  sp_plan_free(p);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("plan_rows");
  TCase *t = tcase_create("rows");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, every_section_is_numbered_as_pages_read_it);
  tcase_add_test(t, op_costs_add_up_to_the_plan_totals_costliest_first);
  tcase_add_test(t, op_compute_survives_the_json_round_trip);
  tcase_add_test(t, rows_without_origins_leave_them_to_the_origin_section);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return sp_test_run(suite()); }
