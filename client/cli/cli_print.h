/*
 * cli_print.h - how the `shardplan` command shows the daemon's answers: a plan's summary, the
 * plan list, statistics, and the export formats (sdy, jax, gspmd, json). Everything goes to
 * the FILE given; nothing here talks to the server.
 */
#ifndef SP_CLI_PRINT_H
#define SP_CLI_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "shardplan_client.h"

/* "optimal", "cut short (provisional), gap 2.10%", ... into buf. */
const char *sp_cli_status_text(Shardplan__V1__PlanStatus st, bool provisional, double gap,
                               char *buf, size_t cap);
/* key, cache hit/miss, status, then the summary (costs, mesh, collectives, solver, warnings,
 * the shardings of function arguments and results: at most `max_values` lines). */
void sp_cli_print_plan(FILE *f, const Shardplan__V1__PlanResponse *r, int max_values);
/* One page of the plan list; `header` prints the column names first. */
void sp_cli_print_list(FILE *f, const Shardplan__V1__ListPlansResponse *l, bool header);
void sp_cli_print_stats(FILE *f, const Shardplan__V1__Stats *s);
/* The plan in an export format: "sdy", "jax", "gspmd" or "json". false: unknown format or
 * the answer lacks the part (the message names it, in `why`). */
bool sp_cli_export(FILE *f, const Shardplan__V1__PlanResponse *r, const char *format,
                   char *why, size_t cap);

/* Bytes as "512 B", "12.3 KiB", "1.5 GiB"; seconds as "40 ns", "850 us", "12.3 ms", "1.2 s". */
const char *sp_cli_bytes(double b, char *buf, size_t cap);
const char *sp_cli_seconds(double s, char *buf, size_t cap);

#endif /* SP_CLI_PRINT_H */
