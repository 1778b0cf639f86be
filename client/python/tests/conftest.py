"""pytest set-up for the Python client and the JAX corpus.

- sys.path: the client package and the corpus (the venv's .pth file adds them too).
- `daemon` fixture: starts build/bin/shardpland on a free loopback port with a fresh data dir
  (and a token file when asked), waits for "shardpland: ready", stops it at the end. Skips,
  saying why, when the daemon is not built. `planner`: a shardplan.Client on it (or on the
  daemon at $SHARDPLAN_ADDRESS).
- `tables`: results the corpus tests record; printed as tables at the end of the run and
  written to $SP_BUILD_DIR/jax-corpus-results.md.
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

BIN = os.environ.get("SP_BIN_DIR") or os.path.normpath(os.path.join(HERE, "..", "..", "..",
                                                                    "build", "bin"))
TABLES: dict = {}


def _start_daemon(token=None):
    """The daemon of corpus/daemon.py; skips the test, saying why, when it is not built."""
    exe = os.path.join(BIN, "shardpland")
    if not os.access(exe, os.X_OK):
        pytest.skip(f"the daemon is not built ({exe} missing)")
    from corpus.daemon import Daemon as D
    return D(BIN, token=token)


@pytest.fixture(scope="session")
def daemon():
    d = _start_daemon()
    yield d
    d.stop()


@pytest.fixture(scope="session")
def planner(request):
    """A shardplan.Client on the daemon at $SHARDPLAN_ADDRESS when set, else on the daemon this
    session starts (build/bin/shardpland)."""
    import shardplan
    addr = os.environ.get("SHARDPLAN_ADDRESS")
    if addr:
        return shardplan.Client(addr, token=os.environ.get("SHARDPLAN_TOKEN") or None,
                                timeout=300)
    return shardplan.Client(request.getfixturevalue("daemon").address, timeout=300)


@pytest.fixture(scope="session")
def token_daemon():
    d = _start_daemon(token="s3cret-token")
    yield d
    d.stop()


@pytest.fixture(scope="session")
def tables():
    return TABLES


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not TABLES:
        return
    from corpus.checks import markdown_table
    body = "".join(f"\n### {title}\n\n" + markdown_table(header, rows)
                   for title, (header, rows) in TABLES.items())
    terminalreporter.write_sep("=", "JAX corpus")
    terminalreporter.write(body)
    build = os.environ.get("SP_BUILD_DIR")
    if build and os.path.isdir(build):
        with open(os.path.join(build, "jax-corpus-results.md"), "w") as f:
            f.write(body)
