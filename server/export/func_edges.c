/*
 * func_edges.c - sinks sdy.func_data_flow_edge ops (see func_edges.h); the work is the
 * propagation stage's (propagation/func_data_flow_edges.h), which its pipeline also runs.
 */
#include "export/func_edges.h"

#include "propagation/func_data_flow_edges.h"

int sp_export_sink_func_data_flow_edges(sp_module *m, sp_err *err) {
  return sp_func_data_flow_edges_sink(m, err);
}
