#!/bin/sh
# Builds and runs the libFuzzer targets of fuzz/ (clang-14 with libFuzzer, ASan, UBSan).
#
#   fuzz/run.sh build DIR                   configure (CC=clang-14, -DSP_FUZZ=ON) and build
#                                           every target into DIR/bin
#   fuzz/run.sh run DIR TARGET SECONDS [libFuzzer flags...]
#                                           run DIR/bin/fuzz_TARGET for SECONDS
#
# A run reads its seeds from fuzz/corpus/ and fuzz/regressions/ (never written) and, for the
# MLIR targets, the `// -----` chunks of ../shared/conformance/shardy/*.mlir when that folder
# exists (split at run time into DIR/shared-chunks; nothing of ../shared enters the repo).
# New inputs go to DIR/corpus/TARGET, crashes to DIR/artifacts/TARGET/. A crash makes the
# run fail; its input belongs in fuzz/regressions/TARGET/ with the fix.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
cmd=${1:?usage: run.sh build DIR | run DIR TARGET SECONDS}
dir=${2:?build directory}
CLANG=${CLANG:-clang-14}

case "$cmd" in
build)
  command -v "$CLANG" >/dev/null || { echo "run.sh: $CLANG not found (deploy/install-deps.sh installs it)" >&2; exit 1; }
  CC=$CLANG cmake -S "$src" -B "$dir" -DSP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$dir" --target fuzz_all -j"${JOBS:-2}"
  ;;
run)
  target=${3:?target}
  seconds=${4:?seconds}
  shift 4
  bin="$dir/bin/fuzz_$target"
  [ -x "$bin" ] || { echo "run.sh: $bin not built (run.sh build $dir)" >&2; exit 1; }
  work="$dir/corpus/$target"
  art="$dir/artifacts/$target"
  mkdir -p "$work" "$art"
  set --  "$@" "$work"
  case "$target" in
  mlir*) seedname=mlir; dict="$here/dict/mlir.dict" ;;
  *) seedname=$target; dict="$here/dict/$target.dict" ;;
  esac
  for d in "$here/corpus/$seedname" "$here/corpus/$target" "$here/regressions/$target"; do
    [ -d "$d" ] && set -- "$@" "$d"
  done
  shared="$src/../shared/conformance/shardy"
  if [ "$seedname" = mlir ] && [ -d "$shared" ]; then
    chunks="$dir/shared-chunks"
    if [ ! -d "$chunks" ]; then
      mkdir -p "$chunks.tmp"
      for f in "$shared"/*.mlir; do
        awk -v out="$chunks.tmp/$(basename "$f" .mlir)" '
          /^\/\/ -----/ { n++; next } { print > (out "." n ".mlir") }' "$f"
      done
      mv "$chunks.tmp" "$chunks"
    fi
    set -- "$@" "$chunks"
  fi
  [ -f "$dict" ] && set -- "-dict=$dict" "$@"
  echo "run.sh: fuzz_$target for ${seconds}s"
  SP_FUZZ_STATS=1 "$bin" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$art/" "$@"
  ;;
*)
  echo "usage: run.sh build DIR | run DIR TARGET SECONDS" >&2; exit 2 ;;
esac
