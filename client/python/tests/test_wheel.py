"""The package as a user installs it: `pip wheel` builds a wheel from a copy of the source tree
(client/python and proto/ only, as a checkout has them, no prior build), the wheel goes into a
fresh venv with its declared dependencies (versions held to requirements.txt's pins), and a
script run there, outside the source tree, imports shardplan from that venv and plans through
the daemon this session starts."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.dirname(HERE)                       # client/python
SRC = os.environ.get("SP_SOURCE_DIR") or os.path.normpath(os.path.join(PKG, "..", ".."))

# PyPI only, as make_venv.sh: no local wheel folders from the environment.
PIP_ENV = {k: v for k, v in os.environ.items()
           if k not in ("PIP_FIND_LINKS", "PIP_NO_INDEX", "PYTHONPATH")}


def _run(argv, cwd, env=PIP_ENV, timeout=600):
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{' '.join(argv)} failed ({p.returncode}):\n{p.stdout[-3000:]}\n" \
                              f"{p.stderr[-3000:]}"
    return p.stdout


def _copy_source(dst: str) -> str:
    """client/python and proto/ copied to dst in the repository's layout, without build
    leftovers; returns the copy of client/python."""
    skip = shutil.ignore_patterns("__pycache__", "build", "*.egg-info", ".pytest_cache")
    shutil.copytree(PKG, os.path.join(dst, "client", "python"), ignore=skip)
    shutil.copytree(os.path.join(SRC, "proto"), os.path.join(dst, "proto"))
    return os.path.join(dst, "client", "python")


USE = textwrap.dedent("""
    import os, sys, sysconfig
    import shardplan
    from shardplan.v1 import planner_pb2
    site = sysconfig.get_paths()["purelib"]
    assert shardplan.__file__.startswith(site), shardplan.__file__
    assert planner_pb2.__file__.startswith(site), planner_pb2.__file__
    c = shardplan.Client(sys.argv[1], timeout=60)
    assert c.health() == "SERVING"
    p = c.plan(open(sys.argv[2]).read())
    assert p.status == "propagated", p.status
    assert p.arg_values and p.result_values, p.summary()
    assert c.get(p.key).key == p.key
    try:
        c.plan("func.func @main(%a: tensor<4xf32>) {", filename="bad.mlir")
    except shardplan.ModuleRejected as e:
        assert "bad.mlir:1:" in str(e), str(e)
    else:
        raise AssertionError("a broken module was not rejected")
    print("OK", shardplan.__file__, p.summary())
""")


def test_the_wheel_builds_installs_in_a_fresh_venv_and_plans(daemon, tmp_path):
    src = _copy_source(str(tmp_path / "src"))
    dist = tmp_path / "dist"
    # The build's own pip; the build runs isolated, with pyproject's build requirements.
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check",
          "-w", str(dist), src], cwd=str(tmp_path))
    wheels = list(dist.glob("shardplan-*.whl"))
    assert len(wheels) == 1, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    for m in ("shardplan/v1/planner_pb2.py", "shardplan/v1/planner_pb2_grpc.py",
              "shardplan/v1/planner_pb2.pyi", "shardplan/health/health_pb2_grpc.py",
              "shardplan/py.typed", "shardplan/client.py"):
        assert m in names, f"{m} not in the wheel: {names}"
    assert not [n for n in names if n.startswith(("tests/", "corpus/", "gen_stubs", "setup"))]

    venv = tmp_path / "venv"
    _run(["/usr/bin/python3", "-m", "venv", str(venv)], cwd=str(tmp_path))
    py = str(venv / "bin" / "python")
    _run([py, "-m", "pip", "install", "--disable-pip-version-check", "-q",
          "-c", os.path.join(PKG, "requirements.txt"), str(wheels[0])], cwd=str(tmp_path))

    script = tmp_path / "use.py"
    script.write_text(USE)
    env = {k: v for k, v in PIP_ENV.items() if not k.startswith("SP_")}
    out = _run([py, str(script), daemon.address, os.path.join(SRC, "examples", "mlp.mlir")],
               cwd=str(tmp_path), env=env)
    assert out.startswith("OK "), out
