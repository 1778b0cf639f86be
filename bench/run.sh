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

# IOPDDL: our solver on B, G, V, P, then Debian's CBC on the same one-hot models (the reduced
# model our solver hands to GLPK, and the unreduced one), one run at a time.
SHARED=${SP_SHARED_DIR:-$HERE/../../shared}
CBC_SECONDS=${CBC_SECONDS:-300}

# One CBC run on an LP file: prints "cost | status | wall s".
cbc_run() {
  log=$(mktemp)
  t0=$(date +%s.%N)
  timeout $((CBC_SECONDS + 60)) cbc "$1" -sec "$CBC_SECONDS" -solve -quit > "$log" 2>&1 || true
  t1=$(date +%s.%N)
  result=$(sed -n 's/^Result - //p' "$log" | head -n 1)
  obj=$(sed -n 's/^Objective value: *//p' "$log" | head -n 1)
  if grep -q 'No feasible solution found' "$log"; then obj=""; fi
  [ -n "$result" ] || result="no result (killed or failed)"
  cost=$(printf '%s' "$obj" | awk '{ if ($1 == "") print "none"; else printf "%.0f", $1 }')
  printf '%s | %s | %.1f' "${cost:-none}" "$result" "$(echo "$t1 - $t0" | bc)"
  rm -f "$log"
}

# "columns / rows" of a CPLEX LP file written by GLPK (one bound line per column).
lp_size() {
  awk '/^Subject To/ { s = 1 } /^Bounds/ { s = 0; b = 1 } /^Generals/ { b = 0 }
       s && /^ [^ ]+:/ { r++ } b && /<=|>=| = / { c++ }
       END { printf "%d / %d", c, r }' "$1"
}

bench_iopddl() {
  dir="$SHARED/benchmarks/iopddl"
  cat <<'EOF'
## IOPDDL contest problems (bench_iopddl)

The strategy-graph solver (`server/solver/solver.h`) on the public problems of the ASPLOS
2025 IOPDDL contest (`shared/benchmarks/iopddl/`): exact reductions, greedy plan and local
search, Lagrangian relaxation of the usage rows (TRW-S labellings repaired by the heuristic,
MPLP bound), iterated local search, and GLPK on the one-hot ILP where it fits. Every plan is
checked on the input graph. One run per problem, one thread, one run at a time (the 2 cores
are shared with other engineers' work, so times can be a little noisy).

EOF
  machine
  echo
  echo "Command: \`bench/run.sh $BUILD_ARG bench_iopddl\`, which runs \`$BUILD_ARG/bin/bench_iopddl --dir \$SHARED/benchmarks/iopddl\` (B, G: 120 s; V, P: 300 s), then CBC (\`cbc FILE -sec $CBC_SECONDS -solve\`) on LP files written by \`shardplan-solve PROBLEM 1 --write-lp R.lp --write-lp-unreduced U.lp\`."
  echo
  "$BUILD/bin/bench_iopddl" --dir "$dir"
  echo
  echo "CBC $(cbc -quit 2>/dev/null | sed -n 's/^Version: *//p' | head -n 1) on the same problems, one run at a time, capped at $CBC_SECONDS s. \"reduced\" is the model our solver gives GLPK, before any pruning by an incumbent; its constant cost is a column fixed at 1, so CBC's objective is the full cost. \"unreduced\" has every strategy and pair and a usage row at every interval start. Pairs and strategies with a forbidden cost (1e18) have no column in either."
  echo
  echo "| problem | model | columns / rows | CBC cost | CBC status | CBC wall s |"
  echo "|---|---|---:|---:|---|---:|"
  lpdir=$(mktemp -d)
  for p in B G V; do
    "$BUILD/bin/shardplan-solve" "$dir/asplos-2025-iopddl-$p.json.gz" 1 \
      --write-lp "$lpdir/$p-reduced.lp" --write-lp-unreduced "$lpdir/$p-unreduced.lp" \
      > /dev/null 2>&1 || true
    for kind in reduced unreduced; do
      f="$lpdir/$p-$kind.lp"
      echo "| $p | $kind | $(lp_size "$f") | $(cbc_run "$f") |"
    done
    rm -f "$lpdir/$p-reduced.lp" "$lpdir/$p-unreduced.lp"
  done
  rmdir "$lpdir"
  echo "| P | both | - | not run | - | - |"
  echo
  echo "P is not given to CBC: its reduced model alone has 33,260 usage rows with about 50 million entries (each row lists the hundreds of nodes live at that time)."
}

# The search end to end: GPT training steps against Megatron, layer sharing, placement and mesh
# shapes.
SEARCH_SECONDS=${SEARCH_SECONDS:-60}

bench_search() {
  cat <<'EOF'
## The search end to end (bench_search)

Generated GPT training steps (`server/gen/model_gen.h`: forward and backward, hidden 4096, 32
heads, sequence 2048, batch 8, bf16), propagated (aggressive), then planned by
`sp_plan_search_module` / `sp_placement_search` (what `-shardplan-search` runs) against the
example cluster files; each weight's gradient is a training-state pair. "Megatron" is the
hand plan (first MLP matmul and q/k/v column-split on "model", second MLP matmul and output
projection row-split, batch on "data") priced by the same cost model. Wall seconds include
building the strategy graph; the time limit is per run (a placement or shape run shares it
among its trials).

EOF
  machine
  echo
  echo "Command: \`bench/run.sh $BUILD_ARG bench_search\`, which runs \`$BUILD_ARG/bin/bench_search --seconds $SEARCH_SECONDS --source .\`."
  echo
  "$BUILD/bin/bench_search" --seconds "$SEARCH_SECONDS" --source "$HERE/.."
}

bench_store() {
  cat <<'EOF'
## Plan cache (bench_store)

The SQLite plan cache (`store/store.h`) on its own, in one process, on a temporary database in
/tmp: 2,000 plans of a 20 KB answer, a 2 KB request and 100 rows each, put one transaction
per plan (WAL, synchronous=NORMAL; then 200 more with synchronous=FULL); 20,000 cache-hit gets
of random plans (answer blob loaded, hit counted: counts are batched and written by the
store's background thread) from 1 thread and from 8 threads sharing the store (8 threads on
2 cores: the p99 is scheduling); pages of 50 rows of a 5,000-row plan (each page also counts
the matching rows); pages of the plan list; open with and without `PRAGMA integrity_check`;
eviction to half the size (LRU, then incremental vacuum).

EOF
  machine
  echo
  echo "Command: \`bench/run.sh $BUILD_ARG bench_store\`, which runs \`$BUILD_ARG/bin/bench_store 2000\`."
  echo
  "$BUILD/bin/bench_store" 2000
}

bench_web() {
  cat <<'EOF'
## Dashboard on a 100,000-op plan (bench_web)

A generated GPT training step (forward and backward, Megatron annotations on a data=2 x
model=4 mesh) of about 100,000 ops, planned with propagation only, turned into the cache's rows
and stored as the daemon does (the rows, the answer, then every value's provenance as rows of
its own; the line below times the answer path before and after that split); then each dashboard page is
rendered 20 times through `sp_web_handle` (the whole router and page, reading the store; no
socket). A searched 8-layer GPT gives the plan page with its cost chart. Target: every page
under 50 ms.

EOF
  machine
  echo
  echo "Command: \`bench/run.sh $BUILD_ARG bench_web\`, which runs \`$BUILD_ARG/bin/bench_web 100000\`."
  echo
  "$BUILD/bin/bench_web" 100000
}

bench_daemon() {
  cat <<'EOF'
## The daemon over loopback (bench_daemon)

The real daemon (`build/bin/shardpland`, default flags: 2 search threads on this machine, 2 gRPC
threads, SQLite cache in a fresh temporary folder) on 127.0.0.1, driven by a gRPC C-core client
on the same machine (one channel per client thread, unary calls; client and server share the 2
cores). First the cold plans: the first Plan of each request (parse, verify, propagate, search
with the bundled cluster, store; no time limit, the daemon's default since issue 14's work
limits: the search is bounded by work, not by the clock). Then, for 3 s per row, in one run against the same server:
a bare `grpc.health.v1.Health/Check`, and cache-hit Plan calls (the same request bytes again,
answered from the daemon's in-memory copy of the stored answer) for the MLP example and a
generated GPT of about 1,000 ops (`shardplan-gen --model gpt --ops 1000 --backward`), from 1 and
from 16 concurrent clients. Latency is per call at the client (p50, p99); requests/s is calls
answered over the wall time of the row.

EOF
  machine
  echo
  echo "Command: \`bench/run.sh $BUILD_ARG bench_daemon\`, which runs \`$BUILD_ARG/bin/bench_daemon 3\`."
  echo
  "$BUILD/bin/bench_daemon" 3
}

bench_soak() {
  cat <<'EOF'
## Soak: the daemon under a mixed load for 10 minutes (bench_soak)

The real daemon (default flags) on 127.0.0.1 and 16 client threads on the same machine (one
gRPC channel each) for 600 s. Each call is drawn at random: 60% cache hits (four warmed
requests: the MLP example and a 1-layer GPT, propagation only and searched), 15% misses (the
MLP example searched with a fresh seed: a new key, planned and stored), 10% bad requests
(random bytes, or MLIR that does not parse), 8% cancellations (a fresh 4-layer GPT search
cancelled after 5 ms), 7% deadlines (the same with a 30 ms deadline). Every answer is checked
against the statuses its kind allows; afterwards Health must be SERVING and the warmed plans
must still be hits with the same answer bytes. RSS is the daemon's VmRSS.

EOF
  machine
  echo
  echo "Command: \`bench/run.sh $BUILD_ARG bench_soak\` (not in the default list: it takes 10 minutes), which runs \`$BUILD_ARG/bin/bench_soak 600 16\`."
  echo
  "$BUILD/bin/bench_soak" 600 16
}

bench_rpc() {
  cat <<'EOF'
## Request memory: the estimate against the measured peak (bench_rpc)

What `--max-request-memory-mb` compares (server/rpc/plan_request.h): before reading, the
input's bytes x 16; after reading, the module arena's bytes x (1 + 240) with the search, x (1 +
10) with propagation alone. Each request (GPT training steps, `sp_gen_gpt_training_options`,
as MLIR text and as a structured graph of the same module; the bundled cluster, 30 s) runs in
a child process of its own as the daemon runs it: decode, prepare (read and verify), then
`sp_plan_run`. "read" and "plan" are the child's peak RSS (VmHWM) over its RSS before the
request, in MiB, after preparing and after planning; ratio = plan estimate / plan measured
(above 1: on the safe side). Below about 1,000 ops the process's fixed costs (about 3 MiB)
dominate, and no limit the daemon accepts (16 MiB or more) is near them. The factors were 64
and 4 until 2026-11-28 (from a read RSS, not the arena's bytes): the search's estimate was
then 0.32 to 0.39 of the measured peak at 4 to 48 layers, in both forms, so a limit let through
requests three times its size; 240 and 10 were chosen from this table.

EOF
  machine
  echo
  echo "Command: \`$BUILD_ARG/bin/bench_rpc 1 4 16 48\` (the search), then with \`--propagate\`."
  echo
  echo '```'
  "$BUILD/bin/bench_rpc" 1 4 16 48
  echo
  "$BUILD/bin/bench_rpc" --propagate 1 4 16 48
  echo '```'
}

# ---------------------------------------------------------------- driver

ALL="bench_propagation bench_iopddl bench_search bench_store bench_web bench_daemon bench_rpc"
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
