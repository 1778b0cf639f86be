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
import select
import signal
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

BIN = os.environ.get("SP_BIN_DIR") or os.path.normpath(os.path.join(HERE, "..", "..", "..",
                                                                    "build", "bin"))
TABLES: dict = {}


class Daemon:
    def __init__(self, token=None):
        exe = os.path.join(BIN, "shardpland")
        if not os.access(exe, os.X_OK):
            pytest.skip(f"the daemon is not built ({exe} missing)")
        self.dir = tempfile.mkdtemp(prefix="sp-pytest-")
        args = [exe, "--grpc-listen", "127.0.0.1:0", "--http-listen", "off",
                "--data-dir", self.dir]
        self.token = token
        if token:
            tf = os.path.join(self.dir, "token")
            with open(tf, "w") as f:
                f.write(token + "\n")
            os.chmod(tf, 0o600)
            args += ["--token-file", tf]
        self.log = open(os.path.join(self.dir, "daemon.log"), "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log)
        self.address = None
        out, deadline = "", time.time() + 30
        fd = self.proc.stdout.fileno()
        while time.time() < deadline:
            r, _, _ = select.select([fd], [], [], 0.2)
            if not r:
                if self.proc.poll() is not None:
                    break
                continue
            chunk = os.read(fd, 4096).decode(errors="replace")
            if not chunk:
                break
            out += chunk
            if "grpc listening on " in out and not self.address:
                self.address = out.split("grpc listening on ")[1].split()[0]
            if "shardpland: ready\n" in out and self.address:
                return
        self.stop()
        raise RuntimeError(f"shardpland did not come up; stdout: {out!r}; log: "
                           f"{open(os.path.join(self.dir, 'daemon.log')).read()[-2000:]}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session")
def daemon():
    d = Daemon()
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
    d = Daemon(token="s3cret-token")
    yield d
    d.stop()


@pytest.fixture(scope="session")
def tables():
    return TABLES


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not TABLES:
        return
    text = []
    for title, (header, rows) in TABLES.items():
        text.append(f"\n### {title}\n")
        text.append("| " + " | ".join(header) + " |")
        text.append("|" + "---|" * len(header))
        for r in sorted(rows):
            text.append("| " + " | ".join(str(x) for x in r) + " |")
    body = "\n".join(text) + "\n"
    terminalreporter.write_sep("=", "JAX corpus")
    terminalreporter.write(body)
    build = os.environ.get("SP_BUILD_DIR")
    if build and os.path.isdir(build):
        with open(os.path.join(build, "jax-corpus-results.md"), "w") as f:
            f.write(body)
