"""The wheel's build hook: the gRPC stubs are generated from proto/ into the package while the
wheel is built (build_py), so `pip wheel client/python` and `pip install client/python` give an
importable package without a prior build. The protos are found at $SHARDPLAN_PROTO_DIR, else
./proto (inside an sdist, which this hook fills), else ../../proto (the source tree). Everything
else about the package is in pyproject.toml."""
import os
import shutil
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_stubs  # noqa: E402  (beside this file; not part of the package)


def proto_dir() -> str:
    for d in (os.environ.get("SHARDPLAN_PROTO_DIR"), os.path.join(HERE, "proto"),
              os.path.join(HERE, "..", "..", "proto")):
        if d and gen_stubs.protos_of(d):
            return os.path.abspath(d)
    raise FileNotFoundError("the shardplan protos are not found: set SHARDPLAN_PROTO_DIR to "
                            "the repository's proto/ folder")


class BuildPyWithStubs(build_py):
    def run(self):
        super().run()
        if not self.dry_run:
            gen_stubs.generate(proto_dir(), self.build_lib, packages=True)


class SdistWithProtos(sdist):
    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        src = proto_dir()
        for rel in gen_stubs.protos_of(src) + ["grpc/health/v1/health.proto"]:
            if os.path.exists(os.path.join(src, rel)):
                os.makedirs(os.path.dirname(os.path.join(base_dir, "proto", rel)), exist_ok=True)
                shutil.copy(os.path.join(src, rel), os.path.join(base_dir, "proto", rel))
        shutil.copy(os.path.join(HERE, "gen_stubs.py"), os.path.join(base_dir, "gen_stubs.py"))


setup(cmdclass={"build_py": BuildPyWithStubs, "sdist": SdistWithProtos})
