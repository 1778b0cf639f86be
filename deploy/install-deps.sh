#!/bin/sh
# Installs every build and test dependency of shardplan on Debian 12 (bookworm).
# Idempotent and quiet: packages already present are skipped, apt's chatter goes to a log.
# Runs as root, or through sudo when it is available.
#   deploy/install-deps.sh                everything: build, tests, benchmarks, CI
#   deploy/install-deps.sh --build-only   only what compiling the programs needs (the Docker
#                                         image's build stage)
set -eu

# A library a program links against goes in BUILD_PKGS: the image's runtime stage installs the
# runtime packages of whatever the programs end up linked with (deploy/runtime-packages.sh).
BUILD_PKGS="build-essential cmake pkg-config ca-certificates \
  libgrpc-dev libprotobuf-c-dev protobuf-c-compiler \
  libsqlite3-dev libmicrohttpd-dev libglpk-dev check \
  libssl-dev zlib1g-dev libcjson-dev"
# Tests, benchmarks and CI: git, GLPK's and CBC's command-line solvers, FileCheck, Python (and
# its venv), clang with its runtimes (fuzzing), Chromium (dashboard browser tests); podman,
# runc, debootstrap, docker-compose, iproute2, curl and openssl build and run the Docker image
# (deploy/test-image.sh); systemd's systemd-analyze checks the unit file.
PKGS="$BUILD_PKGS git glpk-utils llvm-14-tools coinor-cbc python3 python3-venv \
  clang-14 libclang-rt-14-dev chromium \
  podman runc debootstrap docker-compose iproute2 curl openssl systemd"

if [ "${1:-}" = "--build-only" ]; then
  PKGS="$BUILD_PKGS"
fi

missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done

if [ -z "$missing" ]; then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root (or sudo) to install:$missing" >&2; exit 1
  fi
fi

log="${TMPDIR:-/tmp}/shardplan-install-deps.log"
echo "install-deps: installing$missing (log: $log)"
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -q && \
       $SUDO apt-get install -y -q --no-install-recommends $missing; } >"$log" 2>&1; then
  echo "install-deps: apt-get failed; last lines of $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
echo "install-deps: done"
