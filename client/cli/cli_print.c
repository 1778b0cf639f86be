/*
 * cli_print.c - rendering of the daemon's answers for the `shardplan` command (see
 * cli_print.h). Pure formatting: reads the messages, writes text.
 */
#include "cli_print.h"

#include <string.h>
#include <time.h>

const char *sp_cli_bytes(double b, char *buf, size_t cap) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    u++;
  }
  if (u == 0) snprintf(buf, cap, "%.0f B", b);
  else snprintf(buf, cap, "%.*f %s", b < 10 ? 2 : 1, b, unit[u]);
  return buf;
}

const char *sp_cli_seconds(double s, char *buf, size_t cap) {
  if (s < 1e-6) snprintf(buf, cap, "%.0f ns", s * 1e9);
  else if (s < 1e-3) snprintf(buf, cap, "%.0f us", s * 1e6);
  else if (s < 1) snprintf(buf, cap, "%.3g ms", s * 1e3);
  else snprintf(buf, cap, "%.3g s", s);
  return buf;
}

const char *sp_cli_status_text(Shardplan__V1__PlanStatus st, bool provisional, double gap,
                               char *buf, size_t cap) {
  switch (st) {
    case SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_PROPAGATED:
      snprintf(buf, cap, "propagated (propagation only)");
      break;
    case SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_OPTIMAL: snprintf(buf, cap, "optimal"); break;
    case SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_FEASIBLE:
      snprintf(buf, cap, "feasible, gap %.2f%%", 100 * gap);
      break;
    case SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_CUT_SHORT:
      snprintf(buf, cap, "cut short%s, gap %.2f%%", provisional ? " (provisional)" : "",
               100 * gap);
      break;
    default: snprintf(buf, cap, "unspecified"); break;
  }
  return buf;
}

static void print_mesh(FILE *f, const Shardplan__V1__MeshPlan *m) {
  fprintf(f, "mesh:        @%s <[", m->name);
  for (size_t i = 0; i < m->n_axes; i++)
    fprintf(f, "%s\"%s\"=%lld", i ? ", " : "", m->axes[i]->name, (long long)m->axes[i]->size);
  fprintf(f, "]>");
  if (m->n_device_ids) {
    fprintf(f, " devices [");
    size_t shown = m->n_device_ids < 16 ? m->n_device_ids : 16;
    for (size_t i = 0; i < shown; i++)
      fprintf(f, "%s%lld", i ? "," : "", (long long)m->device_ids[i]);
    fprintf(f, "%s]", shown < m->n_device_ids ? ",..." : "");
  }
  fprintf(f, "\n");
}

static void print_collectives(FILE *f, const Shardplan__V1__Plan *p) {
  static const char *const kinds[] = {"all-gather", "reduce-scatter", "all-reduce",
                                      "all-to-all", "collective-permute", "all-slice"};
  enum { NKINDS = sizeof kinds / sizeof kinds[0] };
  int count[NKINDS + 1] = {0};
  double bytes = 0, secs = 0;
  char b1[32], b2[32];
  for (size_t i = 0; i < p->n_collectives; i++) {
    const Shardplan__V1__Collective *c = p->collectives[i];
    int k = NKINDS;
    for (int j = 0; j < NKINDS; j++)
      if (strcmp(c->kind, kinds[j]) == 0) k = j;
    count[k]++;
    bytes += c->bytes;
    secs += c->seconds;
  }
  fprintf(f, "collectives: %zu", p->n_collectives);
  if (p->n_collectives) {
    const char *sep = " (";
    for (int j = 0; j <= NKINDS; j++)
      if (count[j]) {
        fprintf(f, "%s%s %d", sep, j < NKINDS ? kinds[j] : "other", count[j]);
        sep = ", ";
      }
    fprintf(f, "), %s per device, %s", sp_cli_bytes(bytes, b1, sizeof b1),
            sp_cli_seconds(secs, b2, sizeof b2));
  }
  fprintf(f, "\n");
}

static const char *kind_name(Shardplan__V1__ValueAddress__Kind k) {
  switch (k) {
    case SHARDPLAN__V1__VALUE_ADDRESS__KIND__ARGUMENT: return "arg";
    case SHARDPLAN__V1__VALUE_ADDRESS__KIND__RESULT: return "result";
    default: return "op";
  }
}

void sp_cli_print_plan(FILE *f, const Shardplan__V1__PlanResponse *r, int max_values) {
  char st[96], b1[32], b2[32], b3[32], b4[32];
  fprintf(f, "key:         %s\n", r->key);
  fprintf(f, "cache: %s\n", r->cache_hit ? "hit" : "miss");
  fprintf(f, "status:      %s\n",
          sp_cli_status_text(r->status, r->provisional, r->gap, st, sizeof st));
  const Shardplan__V1__Plan *p = r->plan;
  if (!p) return;
  for (size_t i = 0; i < p->n_meshes; i++) print_mesh(f, p->meshes[i]);
  if (p->costs) {
    const Shardplan__V1__Costs *c = p->costs;
    fprintf(f, "cost:        %s per step (compute %s, communication %s)\n",
            sp_cli_seconds(c->total_seconds, b1, sizeof b1),
            sp_cli_seconds(c->compute_seconds, b2, sizeof b2),
            sp_cli_seconds(c->communication_seconds, b3, sizeof b3));
    fprintf(f, "memory:      %s peak per device", sp_cli_bytes(c->peak_memory_bytes, b1, sizeof b1));
    if (c->memory_limit_bytes > 0)
      fprintf(f, " (limit %s)", sp_cli_bytes(c->memory_limit_bytes, b4, sizeof b4));
    fprintf(f, "\n");
  }
  print_collectives(f, p);
  if (p->solver && p->solver->status[0]) {
    const Shardplan__V1__SolverStats *sv = p->solver;
    fprintf(f, "solver:      %s, %lld variables", sv->status, (long long)sv->variables);
    if (sv->rows) fprintf(f, ", %lld rows", (long long)sv->rows);
    if (sv->seconds > 0) fprintf(f, ", %s", sp_cli_seconds(sv->seconds, b1, sizeof b1));
    fprintf(f, "\n");
  }
  if (p->n_conflicts) fprintf(f, "conflicts:   %zu\n", p->n_conflicts);
  fprintf(f, "planner:     %s (server %.2f ms%s)\n", p->planner_version, r->server_ms,
          r->coalesced ? ", coalesced" : "");
  for (size_t i = 0; i < r->n_warnings; i++) fprintf(f, "warning:     %s\n", r->warnings[i]);
  /* The shardings of function arguments and results: what a caller applies. */
  size_t shown = 0, io = 0;
  for (size_t i = 0; i < p->n_values; i++) {
    const Shardplan__V1__ValueSharding *v = p->values[i];
    if (!v->address || v->address->kind == SHARDPLAN__V1__VALUE_ADDRESS__KIND__OP_RESULT)
      continue;
    io++;
    if ((int)shown >= max_values) continue;
    if (shown++ == 0) fprintf(f, "shardings:\n");
    char where[160];
    snprintf(where, sizeof where, "@%s %s %u%s%s", v->address->function,
             kind_name(v->address->kind), v->address->index, v->label[0] ? " " : "", v->label);
    fprintf(f, "  %-32s %s\n", where, v->sdy[0] ? v->sdy : "(no sharding)");
  }
  if (io > shown)
    fprintf(f, "  ... %zu more (shardplan export %s --format sdy)\n", io - shown, r->key);
}

void sp_cli_print_list(FILE *f, const Shardplan__V1__ListPlansResponse *l, bool header) {
  char st[96], b1[32], t[32];
  if (header)
    fprintf(f, "%-64s  %-28s %6s %10s  %-19s  %s\n", "KEY", "STATUS", "HITS", "SIZE",
            "LAST USED (UTC)", "SUMMARY");
  for (size_t i = 0; i < l->n_plans; i++) {
    const Shardplan__V1__PlanInfo *p = l->plans[i];
    time_t tt = (time_t)p->last_used_unix;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(t, sizeof t, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(f, "%-64s  %-28s %6lld %10s  %-19s  %s\n", p->key,
            sp_cli_status_text(p->status, p->provisional, 0, st, sizeof st),
            (long long)p->hits, sp_cli_bytes((double)p->size_bytes, b1, sizeof b1), t,
            p->summary);
  }
}

void sp_cli_print_stats(FILE *f, const Shardplan__V1__Stats *s) {
  char b1[32], b2[32];
  fprintf(f, "plans:              %lld\n", (long long)s->plans);
  fprintf(f, "cache size:         %s of %s\n", sp_cli_bytes((double)s->cache_bytes, b1, sizeof b1),
          s->cache_max_bytes ? sp_cli_bytes((double)s->cache_max_bytes, b2, sizeof b2)
                             : "no limit");
  fprintf(f, "hits:               %lld\n", (long long)s->hits);
  fprintf(f, "misses:             %lld\n", (long long)s->misses);
  fprintf(f, "searches run:       %lld\n", (long long)s->searches_run);
  fprintf(f, "searches in flight: %lld of %lld\n", (long long)s->searches_in_flight,
          (long long)s->max_searches);
  fprintf(f, "queue length:       %lld\n", (long long)s->queue_length);
  fprintf(f, "coalesced:          %lld\n", (long long)s->coalesced);
  fprintf(f, "requests:           %lld (%lld errors)\n", (long long)s->requests,
          (long long)s->errors);
  fprintf(f, "uptime:             %.0f s\n", s->uptime_seconds);
  fprintf(f, "planner version:    %s\n", s->planner_version);
}

/* The values of one kind of one function, in index order, as `what` strings. */
static void export_tuple(FILE *f, const Shardplan__V1__Plan *p, const char *func,
                         Shardplan__V1__ValueAddress__Kind kind, bool jax) {
  uint32_t max = 0;
  bool any = false;
  for (size_t i = 0; i < p->n_values; i++) {
    const Shardplan__V1__ValueAddress *a = p->values[i]->address;
    if (a && a->kind == kind && strcmp(a->function, func) == 0) {
      any = true;
      if (a->index > max) max = a->index;
    }
  }
  if (!any) return;
  for (uint32_t k = 0; k <= max; k++)
    for (size_t i = 0; i < p->n_values; i++) {
      const Shardplan__V1__ValueSharding *v = p->values[i];
      const Shardplan__V1__ValueAddress *a = v->address;
      if (!a || a->kind != kind || a->index != k || strcmp(a->function, func) != 0) continue;
      if (jax)
        fprintf(f, "    %s,  # %s %u%s%s\n", v->partition_spec, kind_name(kind), k,
                v->label[0] ? " " : "", v->label);
      else
        fprintf(f, "@%s %s %u%s%s: %s\n", func, kind_name(kind), k, v->label[0] ? " " : "",
                v->label, v->gspmd);
      break;
    }
}

bool sp_cli_export(FILE *f, const Shardplan__V1__PlanResponse *r, const char *format,
                   char *why, size_t cap) {
  const Shardplan__V1__Plan *p = r->plan;
  if (!p) {
    snprintf(why, cap, "the answer carries no plan");
    return false;
  }
  if (strcmp(format, "sdy") == 0 || strcmp(format, "json") == 0) {
    const char *text = format[0] == 's' ? p->module_sdy : p->json;
    if (!text || !text[0]) {
      snprintf(why, cap, "the server sent no %s text for this plan", format);
      return false;
    }
    fputs(text, f);
    if (text[strlen(text) - 1] != '\n') fputc('\n', f);
    return true;
  }
  bool jax = strcmp(format, "jax") == 0;
  if (!jax && strcmp(format, "gspmd") != 0) {
    snprintf(why, cap, "unknown export format \"%s\" (sdy, jax, gspmd, json)", format);
    return false;
  }
  /* Functions in order of first appearance. */
  const char *funcs[256];
  size_t nf = 0;
  for (size_t i = 0; i < p->n_values && nf < 256; i++) {
    const Shardplan__V1__ValueAddress *a = p->values[i]->address;
    if (!a || a->kind == SHARDPLAN__V1__VALUE_ADDRESS__KIND__OP_RESULT) continue;
    bool seen = false;
    for (size_t j = 0; j < nf; j++) seen = seen || strcmp(funcs[j], a->function) == 0;
    if (!seen) funcs[nf++] = a->function;
  }
  if (jax) fprintf(f, "# shardplan plan %s\nfrom jax.sharding import PartitionSpec\n", r->key);
  for (size_t j = 0; j < nf; j++) {
    if (jax) fprintf(f, "\n%s_in_shardings = (\n", funcs[j]);
    export_tuple(f, p, funcs[j], SHARDPLAN__V1__VALUE_ADDRESS__KIND__ARGUMENT, jax);
    if (jax) fprintf(f, ")\n%s_out_shardings = (\n", funcs[j]);
    export_tuple(f, p, funcs[j], SHARDPLAN__V1__VALUE_ADDRESS__KIND__RESULT, jax);
    if (jax) fprintf(f, ")\n");
  }
  return true;
}
