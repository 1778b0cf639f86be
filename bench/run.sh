#!/bin/sh
# bench/run.sh BUILD_DIR [NAME ...] - runs the benchmarks and rewrites their sections of
# bench/RESULTS.md.
#
# Each benchmark has a function below, named after its program, that prints its section of
# RESULTS.md (Markdown: what was run, on which machine, with which command, and the figures).
# The text between the lines "<!-- BEGIN name -->" and "<!-- END name -->" is replaced (the
# section is appended when absent); other sections are left as they are. With NAMEs, only those
# benchmarks run. Build with optimisation first (CMAKE_BUILD_TYPE=Release or RelWithDebInfo);
# the machine has 2 cores shared by everyone, so run it when nothing else is.
set -eu

if [ $# -lt 1 ]; then
  echo "usage: bench/run.sh BUILD_DIR [NAME ...]" >&2
  exit 2
fi
BUILD_ARG=$1
BUILD=$(cd "$1" && pwd)
shift
HERE=$(cd "$(dirname "$0")" && pwd)
RESULTS="$HERE/RESULTS.md"

machine() {
  model=$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)
  echo "Machine: ${model:-unknown CPU}, $(nproc) cores ($(uname -sr)); build: \`$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)\`, $(date -u +%Y-%m-%d)."
}

# Replaces (or appends) section $1 of RESULTS.md with the contents of file $2.
replace_section() {
  name=$1
  body=$2
  [ -f "$RESULTS" ] || printf '# Benchmark results\n\nWritten by `bench/run.sh BUILD_DIR`; one section per benchmark.\n' > "$RESULTS"
  tmp="$RESULTS.tmp.$$"
  if grep -q "^<!-- BEGIN $name -->\$" "$RESULTS"; then
    awk -v name="$name" -v body="$body" '
      $0 == "<!-- BEGIN " name " -->" { print; while ((getline line < body) > 0) print line; skip = 1; next }
      $0 == "<!-- END " name " -->" { skip = 0 }
      !skip { print }' "$RESULTS" > "$tmp"
  else
    { cat "$RESULTS"; printf '\n<!-- BEGIN %s -->\n' "$name"; cat "$body"; printf '<!-- END %s -->\n' "$name"; } > "$tmp"
  fi
  mv "$tmp" "$RESULTS"
}

# ---------------------------------------------------------------- benchmarks

bench_propagation() {
  cat <<'EOF'
## Sharding propagation (bench_propagation)

Generated GPT training graphs (`server/gen/model_gen.h`: forward and backward pass, hidden
1024, 16 heads, seq 512, batch 8, f32, megatron annotations on mesh data=2, model=4), layer
count chosen for about 10^3 .. 10^5 ops. Each size runs in its own process; every figure is
the best of 3 runs, each propagation on a freshly parsed module. "basic" and "aggressive" are
one `-sdy-basic-propagate` / `-sdy-aggressive-propagate` pass (type check, sharding groups,
fixed point, rule removal); "user-priority" is `-sdy-user-priority-propagate` (user priorities
over 5 op-priority rounds of aggressive fixed points: the propagation step of
`-sdy-propagation-pipeline`). Parse is `sp_mlir_parse`, print `sp_mlir_print` of the
propagated module. Arena MB: the module after parsing, and what user-priority propagation added
to it (new shardings, attached rules); peak RSS is the whole process (text, module, copies).
Constant ns/op down a column means linear growth.

EOF
  machine
  echo
  echo "Command: \`bench/run.sh $BUILD_ARG bench_propagation\`, which runs \`$BUILD_ARG/bin/bench_propagation --reps 3\`."
  echo
  "$BUILD/bin/bench_propagation" --reps 3
}

# ---------------------------------------------------------------- driver

ALL="bench_propagation"
[ $# -gt 0 ] && ALL="$*"
for name in $ALL; do
  if [ ! -x "$BUILD/bin/$name" ]; then
    echo "bench/run.sh: $BUILD/bin/$name is not built" >&2
    exit 1
  fi
  out=$(mktemp)
  echo "running $name ..." >&2
  if ! "$name" > "$out"; then
    rm -f "$out"
    echo "bench/run.sh: $name failed" >&2
    exit 1
  fi
  replace_section "$name" "$out"
  rm -f "$out"
done
echo "wrote $RESULTS" >&2
