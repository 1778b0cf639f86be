#!/bin/sh
# Compiler launcher of the -DSP_FUZZ=ON build: runs the compile from the checkout with the
# source file's path made relative to it ("server/ir/ir.c"), so that nothing of where the
# checkout lies enters the fuzz binaries (the other paths are absolute, so the dependency
# files CMake reads stay right; -ffile-prefix-map maps them in the debug info). clang 14 writes the source file's path as given into
# ASan's global metadata (module and global locations), which -ffile-prefix-map does not
# rewrite; those strings shift .rodata and every constant after them. With this launcher the
# same commit built at two paths gives byte-identical fuzz binaries (docs/fuzzing.md).
#   relative_cc.sh SRC COMPILER ARGS...
src=$1
shift
cd "$src" || exit 1
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  case "$a" in
  "$src"/*.c) a=${a#"$src"/} ;;
  esac
  set -- "$@" "$a"
  n=$((n - 1))
done
exec "$@"
