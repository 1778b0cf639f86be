#!/bin/sh
# The README's main job: the daemon plans the bundled MLP example through the CLI.
#   1. start shardpland on its embedded default (SQLite plan cache in its data folder,
#      $XDG_STATE_HOME/shardplan or ~/.local/state/shardplan), gRPC and dashboard on free
#      loopback ports;
#   2. `shardplan plan examples/mlp.mlir --search`: propagation and the cost search on the
#      bundled one-machine 8-GPU cluster; prints the key, `cache: miss`, the status and the plan
#      summary; then the same request again: `cache: hit`;
#   3. print where the dashboard is, stop the daemon (SIGTERM), report its exit status.
set -eu
build="${1:-build}"
example="examples/mlp.mlir"
out=$(mktemp)
log=$(mktemp)
"$build/bin/shardpland" --grpc-listen 127.0.0.1:0 --http-listen 127.0.0.1:0 >"$out" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$out" "$log"' EXIT
i=0
until grep -q '^shardpland: ready' "$out"; do
  i=$((i + 1))
  if [ $i -gt 100 ] || ! kill -0 $pid 2>/dev/null; then
    echo "run-example: the daemon did not start:" >&2
    cat "$out" "$log" >&2
    exit 1
  fi
  sleep 0.1
done
cat "$out"
addr=$(sed -n 's/^shardpland: grpc listening on \([^ ]*\).*/\1/p' "$out")
echo
echo "== shardplan --server $addr plan $example --search =="
"$build/bin/shardplan" --server "$addr" --no-progress plan "$example" --search
echo
echo "== the same request again =="
"$build/bin/shardplan" --server "$addr" --no-progress plan "$example" --search
echo
dash=$(sed -n 's/^shardpland: dashboard \(.*\)$/\1/p' "$out")
echo "dashboard: ${dash:-none}"
kill -TERM $pid
status=0
wait $pid || status=$?
echo "daemon stopped (exit status $status); its log:"
cat "$log"
exit $status
