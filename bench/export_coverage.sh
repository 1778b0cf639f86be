#!/bin/sh
# Line coverage of server/export/ (the export passes), per file: by the unit tests of the
# export modules alone, then with the two export conformance folders replayed as well.
#
#   bench/export_coverage.sh DIR [CONFORMANCE_ROOT]
#
# Builds shardplan-opt and the tests below with gcc --coverage into DIR (Debug, -O0), runs the
# tests, prints a table (file, lines executed, lines, percent, total last), runs
# tests/conformance/run_conformance.py on shardy-export/ and shardy-explicit-reshards/ of
# CONFORMANCE_ROOT (default ../shared/conformance next to the repo) with that shardplan-opt and
# prints the table again. Lines are gcov's (`gcov --json-format`): executable lines only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
dir=${1:?usage: export_coverage.sh DIR [CONFORMANCE_ROOT]}
root=${2:-$src/../shared/conformance}
tests="test_data_flow_reshards test_explicit_reshards test_export_passes test_export_shardings
  test_factor_dependencies test_halo_exchange test_manual_reshards test_pad_halo
  test_permutation_factors test_pipeline test_prop_passes test_remove_ag_rs_cmv1
  test_reshape_halo test_reshard_layout test_reshard_to_collectives test_resolve_single_device
  test_reverse_halo test_single_device test_unreduced_reshards"
cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="--coverage -O0" \
  -DCMAKE_EXE_LINKER_FLAGS=--coverage >/dev/null
# shellcheck disable=SC2086
cmake --build "$dir" -j"${JOBS:-2}" --target shardplan-opt $tests >/dev/null
find "$dir" -name '*.gcda' -delete

table() {
  echo "== $1"
  find "$dir" -path '*export*' -name '*.gcda' | python3 -c '
import json, os, subprocess, sys
src = os.path.realpath(sys.argv[1])
best = {}
for gcda in sys.stdin.read().split():
    out = subprocess.run(["gcov", "--json-format", "--stdout", "-o", os.path.dirname(gcda), gcda],
                         capture_output=True, text=True).stdout
    for doc in out.splitlines():
        for f in json.loads(doc)["files"]:
            name = os.path.realpath(f["file"])
            if not name.startswith(os.path.join(src, "server", "export") + os.sep):
                continue
            hit = sum(1 for line in f["lines"] if line["count"] > 0)
            if name not in best or best[name][0] < hit:
                best[name] = (hit, len(f["lines"]))
total = [0, 0]
for name in sorted(best):
    hit, n = best[name]
    total[0] += hit
    total[1] += n
    print("%-42s %6d %6d %6.1f%%" % (os.path.relpath(name, src), hit, n, 100.0 * hit / n if n else 0))
print("%-42s %6d %6d %6.1f%%" % ("server/export total", total[0], total[1],
                                 100.0 * total[0] / total[1] if total[1] else 0))
' "$src"
}

for t in $tests; do
  "$dir/bin/$t" >/dev/null 2>&1 || echo "export_coverage.sh: $t failed" >&2
done
table "unit tests"
python3 "$src/tests/conformance/run_conformance.py" --opt "$dir/bin/shardplan-opt" --root "$root" \
  --folder shardy-export --folder shardy-explicit-reshards >/dev/null ||
  echo "export_coverage.sh: conformance run below 100% or failed (coverage still counted)" >&2
table "unit tests + shardy-export + shardy-explicit-reshards conformance"
