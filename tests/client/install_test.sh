#!/bin/sh
# install_test.sh BUILD_DIR CC: installs the client into a temporary prefix with
# `cmake --install`, builds a small program against it with pkg-config alone, and runs it and
# the installed `shardplan` against an address where nothing listens: both must report the
# server unreachable (library code SP_CLIENT_UNREACHABLE, command exit code 7).
set -eu
build=$1; cc=$2
tmp=$(mktemp -d /tmp/sp_client_install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
for f in include/shardplan/shardplan_client.h include/shardplan/shardplan/v1/planner.pb-c.h \
         include/shardplan/grpc/health/v1/health.pb-c.h bin/shardplan; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
pc=$(find "$tmp/prefix" -name shardplan_client.pc | head -n1)
[ -n "$pc" ] || { echo "FAIL: shardplan_client.pc not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir shardplan_client)
cat >"$tmp/app.c" <<'C'
#include <stdio.h>
#include <shardplan_client.h>
int main(void) {
  sp_client_options o = {.target = "unix:/nonexistent/shardplan.sock"};
  sp_client *c;
  sp_client_error e;
  if (sp_client_open(&o, &c, &e) != SP_CLIENT_OK) { printf("open: %s\n", e.message); return 1; }
  int status = 0;
  int rc = sp_client_health(c, "", 5000, &status, &e);
  Shardplan__V1__PlanRequest req = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  printf("%s %d %zu\n", sp_client_code_name(rc), sp_client_exit_code(rc),
         shardplan__v1__plan_request__get_packed_size(&req));
  sp_client_close(c);
  return rc == SP_CLIENT_UNREACHABLE ? 0 : 1;
}
C
# shellcheck disable=SC2046
"$cc" -std=c11 -Wall -Werror -o "$tmp/app" "$tmp/app.c" $(pkg-config --cflags --libs shardplan_client) \
  -Wl,-rpath,"$libdir" || { echo "FAIL: building against the installed library"; exit 1; }
out=$("$tmp/app") || { echo "FAIL: app printed: $out"; exit 1; }
[ "$out" = "unreachable 7 0" ] || { echo "FAIL: app printed: $out"; exit 1; }
set +e
"$tmp/prefix/bin/shardplan" --server unix:/nonexistent/shardplan.sock health 2>"$tmp/err"
code=$?
set -e
[ "$code" = 7 ] || { echo "FAIL: installed shardplan exit $code"; cat "$tmp/err"; exit 1; }
grep -q "cannot reach shardpland" "$tmp/err" || { echo "FAIL: message"; cat "$tmp/err"; exit 1; }
echo "PASS: installed into a prefix, built with pkg-config, unreachable reported (exit 7)"
