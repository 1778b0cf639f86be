#!/usr/bin/env bash
# exact_collectives.sh BEFORE_BIN AFTER_BIN [RUNS]: the search on generated GPT training steps
# with the cost model before and after it priced exactly the collectives the export inserts,
# in one session (the two bench_search binaries alternate, so both see the same machine load).
#   - 1, 4 and 8 layers (one 8-GPU machine, data=2 x model=4): plan and Megatron ms/step from
#     each binary, the instructions (callgrind, collection on inside
#     sp_plan_search_module only, one dump per call: sharing on, then off) of each search, and
#     the wall seconds of each run (bench_search's, natively, one run of each binary);
#   - 96 layers over 64 devices: plan and Megatron ms/step, and the search's build and solve
#     wall seconds, the best of RUNS runs of each binary (default 3); then the instructions of
#     the search without its time limit (--deep-limit 0: bounded by work, so callgrind's slowness
#     does not cut it short).
# Prints a markdown section on stdout. Needs valgrind.
set -euo pipefail
before=$1; after=$2; runs=${3:-3}
src=${SP_SOURCE:-$(cd "$(dirname "$0")/.." && pwd)}   # holds examples/clusters/
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Instructions of each sp_plan_search_module call, in call order.
search_ir() {   # BIN TAG
  valgrind --tool=callgrind --toggle-collect=sp_plan_search_module \
    --dump-after=sp_plan_search_module --callgrind-out-file="$tmp/$2.%p" \
    "$1" --seconds 600 --source "$src" --only layers > "$tmp/$2.out" 2> "$tmp/$2.err"
  for f in $(ls "$tmp/$2".* | grep -E '\.[0-9]+\.[0-9]+$' | sort -t. -k3 -n); do
    grep -E '^(summary|totals):' "$f" | head -1 | awk '{print $2}'
  done
}
search_ir "$before" before > "$tmp/before.ir"
search_ir "$after" after > "$tmp/after.ir"
# Wall seconds of each layers run (last column of bench_search's table), natively.
layers_wall() {   # BIN
  "$1" --seconds 600 --source "$src" --only layers 2>/dev/null |
    grep -E '^\| [0-9]+ \| (on|off) ' | awk -F'|' '{ gsub(/ /, "", $(NF-1)); print $(NF-1) }'
}
layers_wall "$before" > "$tmp/before.wall"
layers_wall "$after" > "$tmp/after.wall"

echo "### 1, 4 and 8 layers (one 8-GPU machine, mesh data=2 x model=4)"
echo
echo "| layers | sharing | plan ms/step before | after | Megatron ms/step before | after | search instructions before | after | after / before | wall s before | after |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
paste -d' ' <(grep -E '^\| [0-9]+ \| (on|off) ' "$tmp/before.out") <(grep -E '^\| [0-9]+ \| (on|off) ' "$tmp/after.out") \
  <(cat "$tmp/before.ir") <(cat "$tmp/after.ir") <(cat "$tmp/before.wall") <(cat "$tmp/after.wall") | awk -F'|' '
  function t(s) { gsub(/ /, "", s); return s }
  {
    n = split($0, w, " "); irb = w[n-3]; ira = w[n-2]; wb = w[n-1]; wa = w[n];
    printf("| %s | %s | %s | %s | %s | %s | %.0f | %.0f | %.3f | %s | %s |\n", t($2), t($3), t($4),
           t($16), t($5), t($17), irb, ira, ira / irb, wb, wa) }'
echo

deep() {   # BIN -> "| 8161 | ..." line
  "$1" --seconds 60 --source "$src" --only deep 2>/dev/null | grep -E '^\| [0-9]+ \|'
}
for i in $(seq "$runs"); do
  deep "$before" >> "$tmp/deep.before"
  deep "$after" >> "$tmp/deep.after"
done
echo "### 96 layers over 64 devices (eight 8-GPU machines, mesh data=8 x model=8, 8 s limit)"
echo
echo "| | plan ms/step | Megatron ms/step | status | best build s | best solve s | best build + solve s | runs (build + solve s) |"
echo "|---|---:|---:|---|---:|---:|---:|---|"
for tag in before after; do
  awk -F'|' -v tag="$tag" '{
      b = $10 + 0; s = $11 + 0; t = b + s; all = all sprintf("%s%.2f", NR > 1 ? ", " : "", t);
      if (NR == 1 || b < bb) bb = b; if (NR == 1 || s < bs) bs = s; if (NR == 1 || t < bt) bt = t;
      plan = $3; meg = $4; st = $6 }
    END { printf("| %s |%s|%s|%s| %.2f | %.2f | %.2f | %s |\n", tag, plan, meg, st, bb, bs, bt, all) }' \
    "$tmp/deep.$tag"
done

# Instructions of the 96-layer search (collection on inside sp_plan_search_module only).
deep_ir() {   # BIN TAG
  valgrind --tool=callgrind --toggle-collect=sp_plan_search_module \
    --callgrind-out-file="$tmp/$2.deep" "$1" --source "$src" --only deep --deep-limit 0 \
    > "$tmp/$2.deep.out" 2> "$tmp/$2.deep.err"
  grep -E '^(summary|totals):' "$tmp/$2.deep" | head -1 | awk '{print $2}'
}
irb=$(deep_ir "$before" before)
ira=$(deep_ir "$after" after)
echo
echo "96 layers without a time limit (bounded by the solver's work), under callgrind:"
echo
echo "| | plan ms/step | status | search instructions |"
echo "|---|---:|---|---:|"
for tag in before after; do
  ir=$irb; [ "$tag" = after ] && ir=$ira
  grep -E '^\| [0-9]+ \|' "$tmp/$tag.deep.out" | awk -F'|' -v tag="$tag" -v ir="$ir" \
    '{ printf("| %s |%s|%s| %.0f |\n", tag, $3, $6, ir) }'
done
awk -v b="$irb" -v a="$ira" 'BEGIN { printf("\nafter / before: %.3f\n", a / b) }'
