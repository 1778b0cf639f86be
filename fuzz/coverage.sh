#!/bin/sh
# Line coverage of server/ (and store/, web/) by the fuzz inputs, per folder.
#
#   fuzz/coverage.sh DIR [EXTRA_CORPUS_ROOT]
#
# Builds the replay drivers with gcc --coverage into DIR, replays each target's committed
# inputs: its seeds (fuzz/corpus/, and the conformance chunks of ../shared that run.sh seeds
# it with, when that folder exists), its regressions (fuzz/regressions/) and, when given,
# EXTRA_CORPUS_ROOT/<target>/ (e.g. build/fuzz-clang/corpus, what libFuzzer runs found). The
# pseudo-target `daemon` replays the proto inputs through the real daemon built with
# coverage (fuzz_daemon_replay: server/daemon and the gRPC service, the cache and the
# dashboard as the daemon runs them). Then sums gcov's line counts per source folder and
# prints a table: folder, lines executed, lines, percent. TARGETS="..." replays only those
# targets (default: all of them). Without EXTRA_CORPUS_ROOT the figures depend only on the
# checkout (and ../shared): docs/fuzzing.md gives them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
dir=${1:?usage: coverage.sh DIR [EXTRA_CORPUS_ROOT]}
extra=${2:-}
cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="--coverage -O0" \
  -DCMAKE_EXE_LINKER_FLAGS=--coverage >/dev/null
targets=${TARGETS:-"mlir mlir_struct mlir_diff einsum cluster iopddl proto web cache_row export daemon"}
cmake --build "$dir" -j"${JOBS:-2}" --target $(for t in $targets; do
  if [ "$t" = daemon ]; then printf 'fuzz_daemon_replay shardpland '; else printf 'fuzz_replay_%s ' "$t"; fi
done) >/dev/null
find "$dir" -name '*.gcda' -delete
for t in $targets; do
  if [ "$t" = daemon ]; then
    "$dir/bin/fuzz_daemon_replay" "$here/regressions/proto" "$here/corpus/proto" \
      ${extra:+"$extra/proto"} >/dev/null 2>&1 || echo "coverage.sh: the daemon replay failed" >&2
    continue
  fi
  case "$t" in mlir*|export) seeds=mlir ;; *) seeds=$t ;; esac
  set --
  for d in "$here/corpus/$seeds" "$here/regressions/$t" ${extra:+"$extra/$t"} \
           $("$here/run.sh" chunks "$dir" "$t"); do
    [ -d "$d" ] && set -- "$@" "$d"
  done
  [ $# -gt 0 ] && "$dir/bin/fuzz_replay_$t" "$@" >/dev/null 2>&1 || echo "coverage.sh: replay of $t failed" >&2
done
python3 - "$dir" "$src" <<'PY'
import os, subprocess, sys, collections
build, src = os.path.abspath(sys.argv[1]), os.path.realpath(sys.argv[2])
tot = collections.defaultdict(lambda: [0, 0])
seen = {}
for root, _, files in os.walk(build):
    for f in files:
        if not f.endswith('.gcda'): continue
        out = subprocess.run(['gcov', '-n', '-o', root, os.path.join(root, f)],
                             capture_output=True, text=True, cwd=root).stdout
        name = None
        for line in out.splitlines():
            if line.startswith("File '"): name = os.path.realpath(os.path.join(root, line[6:-1]))
            elif line.startswith('Lines executed:') and name and name.endswith('.c'):
                pct, n = line[len('Lines executed:'):].split('% of ')
                n = int(n); hit = round(float(pct) * n / 100)
                if name.startswith(src + '/') and (name not in seen or seen[name][0] < hit):
                    seen[name] = (hit, n)
for name, (hit, n) in seen.items():
    rel = os.path.relpath(name, src)
    folder = os.path.dirname(rel)
    if folder.startswith(('server', 'store', 'web')):
        tot[folder][0] += hit; tot[folder][1] += n
print('%-22s %8s %8s %7s' % ('folder', 'executed', 'lines', 'percent'))
for folder in sorted(tot):
    hit, n = tot[folder]
    print('%-22s %8d %8d %6.1f%%' % (folder, hit, n, 100.0 * hit / n if n else 0))
PY
