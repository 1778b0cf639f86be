#!/bin/sh
# The image's health check (/usr/local/bin/shardplan-healthcheck; HEALTHCHECK in deploy/Dockerfile
# and deploy/compose.yaml): `shardplan health` against the daemon in the same container, over
# loopback, on the port SHARDPLAN_GRPC_LISTEN names. When the daemon serves TLS
# (SHARDPLAN_TLS_CERT), the check speaks TLS too, trusting SHARDPLAN_HEALTH_TLS_CA (default: the
# daemon's own certificate, right for a self-signed one) and expecting the name
# SHARDPLAN_HEALTH_SERVER_NAME (default: localhost) in the certificate.
# Exit status: 0 serving, 1 anything else (Docker counts every non-zero status as unhealthy).
listen=${SHARDPLAN_GRPC_LISTEN:-127.0.0.1:50051}
case "$listen" in
  unix:*) server=$listen ;;
  *) server="127.0.0.1:${listen##*:}" ;;
esac
if [ -n "${SHARDPLAN_TLS_CERT:-}" ]; then
  set -- --tls-ca "${SHARDPLAN_HEALTH_TLS_CA:-$SHARDPLAN_TLS_CERT}" \
         --tls-server-name "${SHARDPLAN_HEALTH_SERVER_NAME:-localhost}"
fi
shardplan --server "$server" --timeout 4 "$@" health || exit 1
