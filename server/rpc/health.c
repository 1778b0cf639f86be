/*
 * health.c - grpc.health.v1.Health/Check: SERVING for "" and "shardplan.v1.Planner" while the
 * service accepts work, NOT_SERVING once shutdown began, NOT_FOUND for any other service name.
 * Answered on the queue thread from one atomic flag: it never waits for anything.
 */
#include "rpc/health.h"

#include <stdio.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"

static void check(sp_rpc_call *call, void *data) {
  const atomic_int *serving = data;
  size_t len;
  const uint8_t *buf = sp_rpc_call_payload(call, &len);
  Grpc__Health__V1__HealthCheckRequest *req =
      grpc__health__v1__health_check_request__unpack(NULL, len, buf);
  if (!req) {
    sp_rpc_call_reply(call, SP_RPC_INVALID_ARGUMENT, NULL, 0,
                      "request is not a grpc.health.v1.HealthCheckRequest (malformed protobuf)",
                      0);
    return;
  }
  bool known = req->service[0] == '\0' || strcmp(req->service, "shardplan.v1.Planner") == 0;
  char msg[300];
  if (!known) snprintf(msg, sizeof msg, "unknown service \"%.200s\"", req->service);
  grpc__health__v1__health_check_request__free_unpacked(req, NULL);
  if (!known) {
    sp_rpc_call_reply(call, SP_RPC_NOT_FOUND, NULL, 0, msg, 0);
    return;
  }
  Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
  resp.status = atomic_load(serving)
                    ? GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
                    : GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
  uint8_t out[16];
  size_t n = grpc__health__v1__health_check_response__pack(&resp, out);
  sp_rpc_call_reply(call, SP_RPC_OK, out, n, NULL, 0);
}

int sp_rpc_health_register(sp_rpc_server *srv, const atomic_int *serving, sp_err *err) {
  return sp_rpc_server_add_method(srv, "/grpc.health.v1.Health/Check", true, check,
                                  (void *)serving, err);
}
