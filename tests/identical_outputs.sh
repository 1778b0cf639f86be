#!/bin/sh
# identical_outputs.sh - compares two builds of shardplan-opt byte for byte: every conformance
# module (../shared/conformance/*/*.mlir, run with its RUN-line flags) and generated GPT and MLP
# models (shardplan-gen), propagated and searched. stdout, stderr (wall-clock timings in the
# search summary masked), exit status and the -report-json / report= files are compared.
#
#   tests/identical_outputs.sh BASE_BIN_DIR NEW_BIN_DIR [SHARED_DIR]
#
# BASE_BIN_DIR holds the reference shardplan-opt and shardplan-gen (e.g. a build of the commit a
# change started from), NEW_BIN_DIR the ones under test. Prints one line per difference and a
# count; exit 0 when everything is identical, 1 otherwise, 2 on usage errors.
set -u
base="$(cd "${1:?usage: identical_outputs.sh BASE_BIN_DIR NEW_BIN_DIR [SHARED_DIR]}" && pwd)"
new="$(cd "${2:?usage: identical_outputs.sh BASE_BIN_DIR NEW_BIN_DIR [SHARED_DIR]}" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${3:-$here/../shared}"
for b in "$base" "$new"; do
  [ -x "$b/shardplan-opt" ] && [ -x "$b/shardplan-gen" ] || { echo "no shardplan-opt/gen in $b" >&2; exit 2; }
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cases=0
diffs=0

# run BIN_DIR OUT_PREFIX ARGS...: stdout, stderr (timings masked), exit status, report files.
run() {
  bin="$1"; out="$2"; shift 2
  rm -f "$tmp/report.json" "$tmp/search.json"
  (cd "$tmp" && "$bin/shardplan-opt" "$@" >"$out.stdout" 2>"$out.stderr"; echo "exit $?" >"$out.status")
  sed -i -e 's/build [0-9.]* s, solve [0-9.]* s/build T s, solve T s/' \
         -e 's/"\(build_s\|solve_s\)":[^,}]*/"\1":T/g' "$out.stderr"
  for f in report.json search.json; do
    if [ -f "$tmp/$f" ]; then
      sed -e 's/"\(build_s\|solve_s\)":[^,}]*/"\1":T/g' "$tmp/$f" >"$out.$f"
    else
      : >"$out.$f"
    fi
  done
}

# compare NAME ARGS...: runs both binaries and reports any difference.
compare() {
  name="$1"; shift
  cases=$((cases + 1))
  run "$base" "$tmp/a" "$@"
  run "$new" "$tmp/b" "$@"
  for s in stdout stderr status report.json search.json; do
    if ! cmp -s "$tmp/a.$s" "$tmp/b.$s"; then
      echo "DIFFERENT $s: $name"
      diff "$tmp/a.$s" "$tmp/b.$s" | head -5
      diffs=$((diffs + 1))
    fi
  done
}

# Conformance modules: the flags of each RUN line between `sdy_opt` and the first '|'.
if [ -d "$shared/conformance" ]; then
  for f in "$shared"/conformance/*/*.mlir; do
    grep -h '^// RUN:' "$f" | while IFS= read -r line; do
      flags="$(printf '%s\n' "$line" | sed -e 's|^// RUN: *sdy_opt||' -e 's/|.*//' -e 's/2>&1//' \
                                          -e "s|%s|$f|g")"
      echo "$flags"
    done >"$tmp/runs"
    while IFS= read -r flags; do
      # shellcheck disable=SC2086
      eval "set -- $flags"
      compare "$f $flags" "$@" -report-json=report.json
    done <"$tmp/runs"
  done
else
  echo "note: $shared/conformance not found; conformance modules skipped"
fi

# Generated models: propagation, and propagation followed by the search.
cluster="$here/examples/clusters/one_machine_8gpu.json"
cluster64="$here/examples/clusters/eight_machines_64gpu.json"
gen() { # gen NAME ARGS...
  n="$1"; shift
  "$base/shardplan-gen" "$@" -o "$tmp/$n.mlir" || { echo "shardplan-gen $* failed"; exit 1; }
  "$new/shardplan-gen" "$@" -o "$tmp/$n.new.mlir"
  cases=$((cases + 1))
  cmp -s "$tmp/$n.mlir" "$tmp/$n.new.mlir" || { echo "DIFFERENT shardplan-gen $*"; diffs=$((diffs + 1)); }
}
gen mlp1 --model mlp --layers 2 --hidden 256 --batch 16 --annotate data
gen mlp2 --model mlp --layers 4 --hidden 512 --annotate megatron
gen gpt1 --model gpt --layers 1 --hidden 256 --heads 4 --seq 64 --annotate megatron
gen gpt2 --model gpt --layers 2 --hidden 256 --heads 4 --seq 64 --annotate data --backward
gen gpt3 --model gpt --layers 2 --hidden 512 --heads 8 --seq 128 --annotate none
gen gpt4 --model gpt --layers 4 --hidden 256 --heads 4 --seq 64 --mesh data=8,model=8 --annotate megatron
for n in mlp1 mlp2 gpt1 gpt2 gpt3; do
  compare "gen $n pipeline" "$tmp/$n.mlir" -sdy-propagation-pipeline -report-json=report.json
  compare "gen $n search" "$tmp/$n.mlir" -sdy-user-priority-propagate \
    "-shardplan-search=cluster=$cluster report=search.json" -report-json=report.json
done
compare "gen gpt2 search shapes" "$tmp/gpt2.mlir" -sdy-user-priority-propagate \
  "-shardplan-search=cluster=$cluster mesh-shape=auto report=search.json"
compare "gen gpt4 search 64" "$tmp/gpt4.mlir" -sdy-user-priority-propagate \
  "-shardplan-search=cluster=$cluster64 report=search.json"
compare "example mlp pipeline" "$here/examples/mlp.mlir" -sdy-propagation-pipeline
compare "example mlp search" "$here/examples/mlp.mlir" -sdy-user-priority-propagate \
  "-shardplan-search=cluster=$cluster report=search.json"

echo "identical_outputs: $cases cases, $diffs differences"
[ "$diffs" -eq 0 ]
