/*
 * dashboard.h - the daemon's dashboard: web/ served on --http-listen from the same service,
 * with the service's events counted in the /metrics registry.
 *
 * Memory: sp_dashboard_start allocates the dashboard and its metrics registry; the service
 * must outlive it; sp_dashboard_stop (NULL is a no-op) stops serving and frees both.
 */
#ifndef SP_DAEMON_DASHBOARD_H
#define SP_DAEMON_DASHBOARD_H

#include "daemon/daemon_config.h"
#include "ir/err.h"
#include "rpc/service.h"

typedef struct sp_dashboard sp_dashboard;

/* Starts serving; *address is the bound "HOST:PORT" (valid until stop). Call before the gRPC
 * server starts answering so that every call is counted. */
int sp_dashboard_start(const sp_daemon_config *cfg, sp_service *svc, const char *version,
                       sp_dashboard **out, const char **address, sp_err *err);
void sp_dashboard_stop(sp_dashboard *d);

#endif /* SP_DAEMON_DASHBOARD_H */
