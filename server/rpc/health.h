/*
 * health.h - the standard gRPC health check (grpc.health.v1.Health/Check), public (no token).
 * `serving` is read on every check (1: SERVING, 0: NOT_SERVING); it is not owned and must
 * outlive the server. Watch is left unregistered: it gets UNIMPLEMENTED like any unknown method.
 */
#ifndef SP_RPC_HEALTH_H
#define SP_RPC_HEALTH_H

#include <stdatomic.h>

#include "ir/err.h"
#include "rpc/rpc_server.h"

int sp_rpc_health_register(sp_rpc_server *srv, const atomic_int *serving, sp_err *err);

#endif /* SP_RPC_HEALTH_H */
