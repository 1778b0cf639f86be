#!/bin/sh
# Prints, one a line, the Debian packages that hold the shared libraries the given programs load
# (their ldd closure), so that the image's runtime stage installs exactly those and nothing of
# the -dev packages the build stage needed.
#   deploy/runtime-packages.sh [--own DIR] PROGRAM...
# Libraries under DIR are the project's own (copied into the image with the programs) and are
# skipped. Fails, naming the library, when a library is missing or belongs to no package.
set -eu

own=""
if [ "${1:-}" = "--own" ]; then
  own=$(readlink -f "$2")
  shift 2
fi
if [ "$#" -eq 0 ]; then
  echo "usage: $0 [--own DIR] PROGRAM..." >&2
  exit 2
fi

libs=""
for prog in "$@"; do
  if [ ! -x "$prog" ]; then
    echo "runtime-packages: $prog: not an executable file" >&2
    exit 1
  fi
  out=$(ldd "$prog") || { echo "runtime-packages: ldd $prog failed" >&2; exit 1; }
  missing=$(printf '%s\n' "$out" | grep 'not found' || true)
  if [ -n "$missing" ]; then
    echo "runtime-packages: $prog needs a library that is not installed:" $missing >&2
    exit 1
  fi
  libs="$libs $(printf '%s\n' "$out" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }')"
done

owners=""
for lib in $(printf '%s\n' $libs | sort -u); do
  # dpkg records the path a package ships, which under Debian's merged /usr may be /lib/...
  # while ldd prints /usr/lib/... (or the other way round): try the path, its target, and both
  # without the /usr prefix.
  real=$(readlink -f "$lib")
  case "$real" in "$own"/*) [ -n "$own" ] && continue;; esac
  owner=""
  for path in "$lib" "$real" "${lib#/usr}" "${real#/usr}" "/usr$lib" "/usr$real"; do
    owner=$(dpkg-query -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$owner" ] && break
  done
  if [ -z "$owner" ]; then
    echo "runtime-packages: $lib ($real) belongs to no Debian package" >&2
    exit 1
  fi
  owners="$owners $owner"
done
printf '%s\n' $owners | sort -u
