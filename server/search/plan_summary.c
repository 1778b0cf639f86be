/*
 * plan_summary.c - the search's cost summary as text for stderr and as JSON for the
 * report=FILE option (see plan_search.h: sp_plan_summary_print, sp_plan_summary_to_json).
 * Split out of plan_search.c along its "reporting" banner: it reads only the summary.
 */
#include "search/plan_search.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#define MIB (1024.0 * 1024.0)

/* ------------------------------------------------------------------ reporting */

static void put_seconds(sp_strbuf *sb, double s) {
  if (s >= 1.0) sp_strbuf_printf(sb, "%.3f s", s);
  else if (s >= 1e-3) sp_strbuf_printf(sb, "%.3f ms", s * 1e3);
  else sp_strbuf_printf(sb, "%.3f us", s * 1e6);
}

static void put_bytes(sp_strbuf *sb, double b) {
  if (b >= 1024.0 * MIB) sp_strbuf_printf(sb, "%.2f GiB", b / (1024.0 * MIB));
  else if (b >= MIB) sp_strbuf_printf(sb, "%.2f MiB", b / MIB);
  else if (b >= 1024.0) sp_strbuf_printf(sb, "%.2f KiB", b / 1024.0);
  else sp_strbuf_printf(sb, "%.0f B", b);
}

/* The mesh, where its axes run and what crosses them; then the configurations tried. */
static void print_placement(sp_strbuf *sb, const sp_plan_summary *s) {
  if (!s->mesh) return;
  sp_strbuf_printf(sb, "shardplan-search: mesh @%s, placement %s:", s->mesh_name ? s->mesh_name : "",
                   s->placement_auto ? "by traffic" : "as given");
  for (int i = 0; i < s->mesh->naxes && i < SP_MAX_MESH_AXES_CLUSTER; i++) {
    sp_strbuf_printf(sb, "%s \"%s\"=%lld on %s, ", i ? ";" : "", s->mesh->axes[i].name,
                     (long long)s->mesh->axes[i].size, s->axis[i].kind);
    put_bytes(sb, s->axis_traffic[i]);
    sp_strbuf_puts(sb, " sent per device");
  }
  sp_strbuf_puts(sb, "; devices ");
  bool identity = true;
  for (int64_t i = 0; s->device_of && i < s->ndevices; i++) identity &= s->device_of[i] == i;
  if (identity) sp_strbuf_printf(sb, "0..%lld in mesh order", (long long)(s->ndevices - 1));
  for (int64_t i = 0; !identity && i < s->ndevices; i++)
    sp_strbuf_printf(sb, "%s%lld", i ? "," : "", (long long)s->device_of[i]);
  sp_strbuf_putc(sb, '\n');
  if (s->ntrials < 2) return;
  for (int i = 0; i < s->ntrials; i++) {
    const sp_plan_trial *t = &s->trials[i];
    sp_strbuf_printf(sb, "shardplan-search: %s [%s] on %s: ",
                     t->chosen ? "chosen" : t->probe ? " probe" : " tried", t->shape, t->devices);
    if (t->error) {
      sp_strbuf_printf(sb, "no plan: %s\n", t->error);
      continue;
    }
    if (t->probe) {
      sp_strbuf_puts(sb, "uniform links, traffic measured\n");
      continue;
    }
    put_seconds(sb, t->total_s);
    sp_strbuf_printf(sb, " per step, cost %lld (%s)\n", (long long)t->cost,
                     sp_sg_status_name(t->status));
  }
}

void sp_plan_summary_print(sp_strbuf *sb, const sp_plan_summary *s) {
  sp_strbuf_puts(sb, "shardplan-search: compute ");
  put_seconds(sb, s->compute_s);
  sp_strbuf_puts(sb, ", communication ");
  put_seconds(sb, s->comm_s);
  sp_strbuf_puts(sb, " (collectives ");
  put_seconds(sb, s->collective_s);
  sp_strbuf_puts(sb, ", resharding ");
  put_seconds(sb, s->reshard_s);
  sp_strbuf_puts(sb, "), total ");
  put_seconds(sb, s->total_s);
  sp_strbuf_puts(sb, " per step; peak memory per device ");
  put_bytes(sb, s->peak_memory_bytes);
  if (s->memory_limit_bytes > 0) {
    sp_strbuf_puts(sb, " of ");
    put_bytes(sb, s->memory_limit_bytes);
  }
  sp_strbuf_putc(sb, '\n');
  sp_strbuf_printf(sb, "shardplan-search: solver %s, cost %lld", sp_sg_status_name(s->status),
                   (long long)s->cost);
  if (s->bound != INT64_MIN) sp_strbuf_printf(sb, ", bound %lld", (long long)s->bound);
  sp_strbuf_printf(sb, ", gap %.4g%%; %d ops, %d nodes (%d followers merged, %d fixed), %d edges, "
                   "%lld strategies, %lld pairs, ilp %lld cols x %lld rows; build %.3f s, "
                   "solve %.3f s\n", s->gap * 100, s->ops, s->nodes, s->followers, s->fixed_nodes,
                   s->edges, (long long)s->strategies, (long long)s->pairs,
                   (long long)s->ilp_cols, (long long)s->ilp_rows, s->build_s, s->solve_s);
  sp_strbuf_printf(sb, "shardplan-search: reduced to %d nodes, %d edges, %lld strategies, %lld "
                   "pairs (%d nodes merged, %lld dominated strategies dropped); layer sharing: %d "
                   "tie groups, %d tied nodes\n", s->red_nodes, s->red_edges,
                   (long long)s->red_strategies, (long long)s->red_pairs, s->merged,
                   (long long)s->dominated, s->ntie_groups, s->tied_nodes);
  print_placement(sb, s);
}

static bool add_trials(cJSON *mesh, const sp_plan_summary *s) {
  cJSON *arr = cJSON_AddArrayToObject(mesh, "trials");
  if (!arr) return false;
  for (int i = 0; i < s->ntrials; i++) {
    const sp_plan_trial *t = &s->trials[i];
    cJSON *x = cJSON_CreateObject();
    if (!x) return false;
    cJSON_AddItemToArray(arr, x);
    cJSON_AddStringToObject(x, "shape", t->shape);
    cJSON_AddStringToObject(x, "devices", t->devices);
    cJSON_AddBoolToObject(x, "chosen", t->chosen);
    cJSON_AddBoolToObject(x, "probe", t->probe);
    if (t->error) {
      cJSON_AddStringToObject(x, "error", t->error);
      continue;
    }
    cJSON_AddNumberToObject(x, "total_s", t->total_s);
    cJSON_AddNumberToObject(x, "cost", (double)t->cost);
    cJSON_AddStringToObject(x, "status", sp_sg_status_name(t->status));
  }
  return true;
}

cJSON *sp_plan_summary_to_json(const sp_plan_summary *s) {
  cJSON *j = cJSON_CreateObject();
  if (!j) return NULL;
  cJSON *costs = cJSON_AddObjectToObject(j, "costs");
  cJSON *solver = cJSON_AddObjectToObject(j, "solver");
  cJSON *problem = cJSON_AddObjectToObject(j, "problem");
  cJSON *mesh = cJSON_AddObjectToObject(j, "mesh");
  cJSON *colls = cJSON_AddArrayToObject(j, "collectives");
  if (!costs || !solver || !problem || !mesh || !colls) goto fail;
  cJSON_AddNumberToObject(costs, "compute_s", s->compute_s);
  cJSON_AddNumberToObject(costs, "collective_s", s->collective_s);
  cJSON_AddNumberToObject(costs, "reshard_s", s->reshard_s);
  cJSON_AddNumberToObject(costs, "communication_s", s->comm_s);
  cJSON_AddNumberToObject(costs, "total_s", s->total_s);
  cJSON_AddNumberToObject(costs, "peak_memory_bytes", s->peak_memory_bytes);
  cJSON_AddNumberToObject(costs, "memory_limit_bytes", s->memory_limit_bytes);
  cJSON_AddStringToObject(solver, "status", sp_sg_status_name(s->status));
  cJSON_AddNumberToObject(solver, "cost", (double)s->cost);
  if (s->bound != INT64_MIN) cJSON_AddNumberToObject(solver, "bound", (double)s->bound);
  else cJSON_AddNullToObject(solver, "bound");
  cJSON_AddNumberToObject(solver, "gap", s->gap);
  cJSON_AddNumberToObject(solver, "variables", (double)(s->strategies + s->pairs));
  cJSON_AddNumberToObject(solver, "ilp_cols", (double)s->ilp_cols);
  cJSON_AddNumberToObject(solver, "ilp_rows", (double)s->ilp_rows);
  cJSON_AddNumberToObject(solver, "build_s", s->build_s);
  cJSON_AddNumberToObject(solver, "solve_s", s->solve_s);
  cJSON_AddNumberToObject(problem, "ops", s->ops);
  cJSON_AddNumberToObject(problem, "nodes", s->nodes);
  cJSON_AddNumberToObject(problem, "edges", s->edges);
  cJSON_AddNumberToObject(problem, "followers", s->followers);
  cJSON_AddNumberToObject(problem, "fixed_nodes", s->fixed_nodes);
  cJSON_AddNumberToObject(problem, "strategies", (double)s->strategies);
  cJSON_AddNumberToObject(problem, "pairs", (double)s->pairs);
  cJSON *red = cJSON_AddObjectToObject(problem, "reduced");
  if (!red) goto fail;
  cJSON_AddNumberToObject(red, "nodes", s->red_nodes);
  cJSON_AddNumberToObject(red, "edges", s->red_edges);
  cJSON_AddNumberToObject(red, "strategies", (double)s->red_strategies);
  cJSON_AddNumberToObject(red, "pairs", (double)s->red_pairs);
  cJSON_AddNumberToObject(red, "merged_nodes", s->merged);
  cJSON_AddNumberToObject(red, "dominated_strategies", (double)s->dominated);
  cJSON_AddNumberToObject(problem, "tie_groups", s->ntie_groups);
  cJSON_AddNumberToObject(problem, "tied_nodes", s->tied_nodes);
  cJSON_AddStringToObject(mesh, "name", s->mesh_name ? s->mesh_name : "");
  cJSON *axes = cJSON_AddArrayToObject(mesh, "axes");
  cJSON *devs = cJSON_AddArrayToObject(mesh, "device_of");
  if (!axes || !devs) goto fail;
  for (int i = 0; i < s->mesh_axes && i < SP_MAX_MESH_AXES_CLUSTER; i++) {
    cJSON *a = cJSON_CreateObject();
    if (!a) goto fail;
    cJSON_AddItemToArray(axes, a);
    if (s->mesh && i < s->mesh->naxes) {
      cJSON_AddStringToObject(a, "name", s->mesh->axes[i].name);
      cJSON_AddNumberToObject(a, "size", (double)s->mesh->axes[i].size);
    }
    cJSON_AddStringToObject(a, "link", s->axis[i].kind);
    cJSON_AddNumberToObject(a, "alpha_s", s->axis[i].alpha);
    cJSON_AddNumberToObject(a, "bandwidth", s->axis[i].bandwidth);
    cJSON_AddNumberToObject(a, "traffic_bytes", s->axis_traffic[i]);
  }
  cJSON_AddStringToObject(mesh, "placement", s->placement_auto ? "by traffic" : "as given");
  cJSON_AddBoolToObject(mesh, "shape_searched", s->shape_auto);
  if (s->ntrials > 0 && !add_trials(mesh, s)) goto fail;
  for (int64_t i = 0; s->device_of && i < s->ndevices; i++)
    cJSON_AddItemToArray(devs, cJSON_CreateNumber((double)s->device_of[i]));
  for (int i = 0; i < s->ncollectives; i++) {
    const sp_search_collective *pc = &s->collectives[i];
    cJSON *c = cJSON_CreateObject();
    if (!c) goto fail;
    cJSON_AddItemToArray(colls, c);
    cJSON_AddStringToObject(c, "kind", sp_collective_name(pc->c.kind));
    cJSON_AddStringToObject(c, "value", pc->value);
    cJSON_AddStringToObject(c, "op", pc->op);
    cJSON_AddNumberToObject(c, "line", pc->line);
    if (pc->operand >= 0) cJSON_AddNumberToObject(c, "operand", pc->operand);
    cJSON_AddNumberToObject(c, "group_size", (double)pc->c.n);
    cJSON_AddNumberToObject(c, "bytes", pc->c.bytes);
    cJSON_AddNumberToObject(c, "seconds", pc->c.seconds);
    cJSON_AddStringToObject(c, "axes", pc->axes);
  }
  return j;
fail:
  cJSON_Delete(j);
  return NULL;
}
