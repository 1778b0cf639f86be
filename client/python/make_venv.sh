#!/bin/sh
# make_venv.sh VENV_DIR GEN_DIR PROTO_DIR: builds the Python virtual environment of shardplan's
# client and JAX corpus (Debian's python3-venv, /usr/bin/python3 = 3.11), installs the pinned
# closure in requirements.txt with --no-deps from PyPI, generates the gRPC stubs from PROTO_DIR
# into GEN_DIR with grpcio-tools, and points the venv at the client package and the stubs with a
# .pth file. Called by the CMake target `pyvenv`; re-runs only when its inputs change.
# Prints how long the install took (the CI budget counts it).
set -eu
venv=$1; gen=$2; protos=$3
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)

if [ ! -x "$venv/bin/python" ]; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
fi
# PyPI only: no local wheel folders from the environment.
PIP_FIND_LINKS= PIP_NO_INDEX= "$venv/bin/python" -m pip install --quiet --no-deps \
  --disable-pip-version-check -r "$here/requirements.txt"
mid=$(date +%s)

# gRPC stubs (messages, services, type stubs) from proto/, when the protos exist.
rm -rf "$gen"
mkdir -p "$gen"
# shardplan/v1/*.proto become the modules shardplan.v1.*_pb2 (the client package's __path__
# reaches $gen). grpc.health.v1's health.proto is compiled as shardplan/health/health.proto so
# that its module (shardplan.health.health_pb2) does not shadow the grpc package; the proto
# package, and so the service name /grpc.health.v1.Health/Check, is unchanged.
protoc() { "$venv/bin/python" -m grpc_tools.protoc "$@"; }
if [ -d "$protos/shardplan" ]; then
  (cd "$protos" && find shardplan -name '*.proto' | sort | while read -r f; do
     protoc -I . --python_out="$gen" --grpc_python_out="$gen" --pyi_out="$gen" "$f" || exit 1
   done)
fi
if [ -f "$protos/grpc/health/v1/health.proto" ]; then
  tmp=$(mktemp -d)
  mkdir -p "$tmp/shardplan/health"
  cp "$protos/grpc/health/v1/health.proto" "$tmp/shardplan/health/health.proto"
  protoc -I "$tmp" --python_out="$gen" --grpc_python_out="$gen" --pyi_out="$gen" \
    "$tmp/shardplan/health/health.proto"
  rm -rf "$tmp"
fi

site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
printf '%s\n%s\n' "$here" "$gen" > "$site/shardplan-dev.pth"
echo "pyvenv: packages installed in $((mid - start)) s, stubs generated in $(( $(date +%s) - mid )) s"
