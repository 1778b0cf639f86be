"""A shardpland the caller starts and stops: on a free loopback port, with a fresh data
folder (and a token file when asked), no dashboard. Used by the pytest suite (conftest.py) and
by the benchmark (bench/jax_fullsize.py).

    d = Daemon("build/bin")          # returns once the daemon printed "shardpland: ready"
    client = shardplan.Client(d.address)
    ...
    d.stop()                         # SIGTERM, then SIGKILL after 15 s

The data folder (a temporary one) keeps daemon.log, the daemon's stderr.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import tempfile
import time
from typing import Optional


class Daemon:
    def __init__(self, bin_dir: str, token: Optional[str] = None, *args: str):
        exe = os.path.join(bin_dir, "shardpland")
        if not os.access(exe, os.X_OK):
            raise RuntimeError(f"the daemon is not built ({exe} missing)")
        self.dir = tempfile.mkdtemp(prefix="sp-daemon-")
        argv = [exe, "--grpc-listen", "127.0.0.1:0", "--http-listen", "off",
                "--data-dir", self.dir, *args]
        self.token = token
        if token:
            tf = os.path.join(self.dir, "token")
            with open(tf, "w") as f:
                f.write(token + "\n")
            os.chmod(tf, 0o600)
            argv += ["--token-file", tf]
        self.log = open(os.path.join(self.dir, "daemon.log"), "w")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log)
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

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
