"""gen_stubs.py PROTO_DIR OUT_DIR: the gRPC stubs of the shardplan client, generated from proto/
with grpcio-tools (messages, services and type stubs).

One generator for both ways the package is used:
- the build's venv (make_venv.sh) writes them to build/python, which the package's __path__
  reaches through the venv's .pth file (the source tree holds no generated code);
- a wheel (setup.py's build_py hook) writes them into the wheel's shardplan/ package.

Layout: shardplan/v1/*.proto become the modules shardplan.v1.*_pb2 and *_pb2_grpc.
grpc.health.v1's health.proto is compiled as shardplan/health/health.proto, so its module
(shardplan.health.health_pb2) does not shadow the grpc package; the proto package, and so the
service name /grpc.health.v1.Health/Check, is unchanged. With `packages=True` each generated
folder gets an empty __init__.py (a wheel's regular packages).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile


def _protoc(include_dirs: list, out_dir: str, proto: str) -> None:
    import grpc_tools
    from grpc_tools import protoc
    # protoc.main does not add grpc_tools' own include folder (google/protobuf/*.proto) the way
    # `python -m grpc_tools.protoc` does; add it so that well-known types resolve.
    builtin = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = ["grpc_tools.protoc", *[f"-I{d}" for d in include_dirs], f"-I{builtin}",
            f"--python_out={out_dir}", f"--grpc_python_out={out_dir}", f"--pyi_out={out_dir}",
            proto]
    if protoc.main(args) != 0:
        raise RuntimeError(f"grpc_tools.protoc failed on {proto} ({' '.join(args[1:])})")


def protos_of(proto_dir: str) -> list:
    """The shardplan/**/*.proto files under proto_dir, relative to it, sorted."""
    out = []
    for root, _, files in os.walk(os.path.join(proto_dir, "shardplan")):
        out += [os.path.relpath(os.path.join(root, f), proto_dir)
                for f in files if f.endswith(".proto")]
    return sorted(out)


def generate(proto_dir: str, out_dir: str, packages: bool = False) -> list:
    """Writes the stubs under out_dir/shardplan/; returns the folders written (relative to
    out_dir). Raises when proto_dir has no shardplan protos."""
    proto_dir = os.path.abspath(proto_dir)
    protos = protos_of(proto_dir)
    if not protos:
        raise FileNotFoundError(f"no shardplan/**/*.proto under {proto_dir}")
    os.makedirs(out_dir, exist_ok=True)
    for p in protos:
        _protoc([proto_dir], out_dir, p)
    dirs = {os.path.dirname(p) for p in protos}
    health = os.path.join(proto_dir, "grpc", "health", "v1", "health.proto")
    if os.path.exists(health):
        tmp = tempfile.mkdtemp()
        try:
            os.makedirs(os.path.join(tmp, "shardplan", "health"))
            shutil.copy(health, os.path.join(tmp, "shardplan", "health", "health.proto"))
            _protoc([tmp], out_dir, "shardplan/health/health.proto")
        finally:
            shutil.rmtree(tmp)
        dirs.add("shardplan/health")
    if packages:
        for d in dirs:
            init = os.path.join(out_dir, d, "__init__.py")
            if not os.path.exists(init):
                open(init, "w").close()
    return sorted(dirs)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: gen_stubs.py PROTO_DIR OUT_DIR")
    generate(sys.argv[1], sys.argv[2])
