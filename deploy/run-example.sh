#!/bin/sh
# The README's main job (until the daemon exists): plan the bundled MLP example.
#   1. Shardy's propagation pipeline (import, user-priority propagation, export), as sdy_opt
#      would print it;
#   2. propagation followed by the cost search against a one-machine, 8-GPU cluster file: every
#      value gets a sharding, and the cost summary goes to stderr.
set -eu
build="${1:-build}"
example="examples/mlp.mlir"
cluster="examples/clusters/one_machine_8gpu.json"
echo "== shardplan-opt $example -sdy-propagation-pipeline =="
"$build/bin/shardplan-opt" "$example" -sdy-propagation-pipeline
echo
echo "== shardplan-opt $example -sdy-user-priority-propagate -shardplan-search=\"cluster=$cluster\" =="
"$build/bin/shardplan-opt" "$example" -sdy-user-priority-propagate \
  -shardplan-search="cluster=$cluster time-limit=10"
