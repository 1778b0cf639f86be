#!/bin/sh
# The README's main job: run shardplan-opt on the MLP example the project carries, printing
# the module as Shardy's sdy_opt would. (Once the daemon exists this starts it instead.)
set -eu
build="${1:-build}"
example="examples/mlp.mlir"
echo "== shardplan-opt $example =="
"$build/bin/shardplan-opt" "$example"
