#!/bin/sh
# Compiler launcher of the -DSP_FUZZ=ON build: gives clang the source file and the include
# folders inside the checkout by their paths relative to the folder it compiles in
# ("../../server/ir/ir.c", "-I../../server" from build/fuzz-clang), so
# that nothing of where the checkout lies enters the fuzz binaries. clang 14 writes the source
# path as given into ASan's global metadata (the module and each global's location), which
# -ffile-prefix-map does not rewrite; the longer strings shifted .rodata and every constant
# after them. With this launcher the same commit built at two paths, each in build/fuzz-clang
# of its checkout (as fuzz/run.sh and CTest's fuzz_build do), gives byte-identical fuzz
# binaries (docs/fuzzing.md). The header paths in the dependency files are then relative to the
# folder of the compile too, which is where CMake reads them from.
#   relative_cc.sh SRC COMPILER ARGS...
src=$1
shift
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  case "$a" in
  "$src"/*.c) a=$(realpath -s --relative-to=. "$a") ;;
  -I"$src"|-I"$src"/*) a=-I$(realpath -s --relative-to=. "${a#-I}") ;;
  esac
  set -- "$@" "$a"
  n=$((n - 1))
done
exec "$@"
