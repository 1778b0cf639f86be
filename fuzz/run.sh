#!/bin/sh
# Builds and runs the libFuzzer targets of fuzz/ (clang-14 with libFuzzer, ASan, UBSan).
#
#   fuzz/run.sh build DIR                   configure (CC=clang-14, -DSP_FUZZ=ON) and build
#                                           every target into DIR/bin
#   fuzz/run.sh run DIR TARGET SECONDS [libFuzzer flags...]
#                                           run DIR/bin/fuzz_TARGET for SECONDS
#   fuzz/run.sh ci DIR TARGET SECONDS [libFuzzer flags...]
#                                           the same from an empty work corpus
#                                           (DIR/ci-corpus/TARGET, emptied first), without
#                                           re-reading it, without compared-value mutations
#                                           and without address randomization: with -seed=N
#                                           -runs=M a run replays the same inputs on any
#                                           machine of the same kind
#   fuzz/run.sh chunks DIR TARGET           split the conformance files that seed TARGET
#                                           (below) and print the chunk folders
#   fuzz/run.sh check-paths DIR             fail if a fuzz binary in DIR/bin holds the
#                                           checkout's path (the same commit built elsewhere
#                                           would then differ, and so would its seeded runs)
#
# A run reads its seeds from fuzz/corpus/ and fuzz/regressions/ (never written) and, for the
# MLIR targets, the `// -----` chunks of ../shared/conformance/shardy/*.mlir (for `export`:
# shardy-export/ and shardy-explicit-reshards/) when those folders exist (split at run time
# into DIR/shared-chunks/FOLDER; nothing of ../shared enters the repo).
# New inputs go to DIR/corpus/TARGET, crashes to DIR/artifacts/TARGET/. A crash makes the
# run fail; its input belongs in fuzz/regressions/TARGET/ with the fix.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
usage="usage: run.sh build DIR | run|ci DIR TARGET SECONDS [flags] | chunks DIR TARGET | check-paths DIR"
cmd=${1:?$usage}
dir=${2:?build directory}
CLANG=${CLANG:-clang-14}

# The seed corpus of fuzz/corpus/ a target reads (the MLIR targets share one).
seed_name() {
  case "$1" in
  mlir*|export) echo mlir ;;
  *) echo "$1" ;;
  esac
}

# The conformance folders whose chunks seed a target.
shared_folders() {
  case "$1" in
  mlir*) echo shardy ;;
  export) echo shardy-export shardy-explicit-reshards ;;
  esac
}

# Splits each of `shared_folders TARGET` that exists into DIR/shared-chunks/FOLDER (once) and
# prints the chunk folders, one a line.
shared_chunks() {
  for folder in $(shared_folders "$2"); do
    [ -d "$src/../shared/conformance/$folder" ] || continue
    chunks="$1/shared-chunks/$folder"
    if [ ! -d "$chunks" ]; then
      mkdir -p "$chunks.tmp"
      for f in "$src/../shared/conformance/$folder"/*.mlir; do
        awk -v out="$chunks.tmp/$(basename "$f" .mlir)" '
          /^\/\/ -----/ { n++; next } { print > (out "." n ".mlir") }' "$f"
      done
      mv "$chunks.tmp" "$chunks"
    fi
    echo "$chunks"
  done
}

case "$cmd" in
build)
  command -v "$CLANG" >/dev/null || { echo "run.sh: $CLANG not found (deploy/install-deps.sh installs it)" >&2; exit 1; }
  CC=$CLANG cmake -S "$src" -B "$dir" -DSP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$dir" --target fuzz_all -j"${JOBS:-2}"
  ;;
chunks)
  shared_chunks "$dir" "${3:?target}"
  ;;
check-paths)
  bad=$(grep -l -a -F "$src" "$dir"/bin/fuzz_*) || true
  if [ -n "$bad" ]; then
    echo "run.sh: these fuzz binaries hold the checkout's path $src (a new __FILE__, a path" >&2
    echo "define or an unmapped source?): $bad" >&2
    exit 1
  fi
  echo "run.sh: no fuzz binary in $dir/bin holds $src"
  ;;
run|ci)
  target=${3:?target}
  seconds=${4:?seconds}
  shift 4
  # Everything runs from DIR, and every path libFuzzer is given is relative to it (the seed
  # folders through the links DIR/seeds/{corpus,regressions,dict}): libFuzzer keeps
  # those paths in its heap, so a checkout elsewhere would shift what the engine allocates
  # after them, and the engine's pointer-keyed tables (ir/ptr_map.h) probe by address.
  cd "$dir"
  bin="bin/fuzz_$target"
  [ -x "$bin" ] || { echo "run.sh: $dir/$bin not built (run.sh build $dir)" >&2; exit 1; }
  mkdir -p seeds
  ln -sfn "$here/corpus" seeds/corpus
  ln -sfn "$here/regressions" seeds/regressions
  ln -sfn "$here/dict" seeds/dict
  work="corpus/$target"
  art="artifacts/$target"
  norand=
  if [ "$cmd" = ci ]; then
    # Nothing but the seed may steer a CI run: an empty work corpus, no re-reading of it, no
    # mutations from compared values (they include stack and heap addresses), and no address
    # randomization (pointer-keyed hash tables probe by address, which coverage counts).
    work="ci-corpus/$target"
    rm -rf "$work"
    set -- -reload=0 -use_cmp=0 "$@"
    if setarch "$(uname -m)" -R true 2>/dev/null; then
      norand="setarch $(uname -m) -R"
    else
      echo "run.sh: setarch -R is not permitted here: addresses stay randomized" >&2
    fi
  fi
  mkdir -p "$work" "$art"
  set --  "$@" "$work"
  seeds=$(seed_name "$target")
  own="seeds/corpus/$target"
  [ "$target" = "$seeds" ] && own=   # the shared corpus once
  for d in "seeds/corpus/$seeds" $own "seeds/regressions/$target" $(shared_chunks . "$target"); do
    [ -d "$d" ] && set -- "$@" "$d"
  done
  dict="seeds/dict/$seeds.dict"
  [ -f "$dict" ] && set -- "-dict=$dict" "$@"
  echo "run.sh: fuzz_$target for ${seconds}s (in $dir)"
  SP_FUZZ_STATS=1 $norand "./$bin" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" "$@"
  ;;
*)
  echo "$usage" >&2; exit 2 ;;
esac
