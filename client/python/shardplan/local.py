"""shardplan.LocalPlanner: the same plan() as Client, run by build/bin/shardplan-opt in a
subprocess instead of the daemon (for machines without a daemon, and for the corpus checks
that compare the two). Same Plan object; no cache, so the key is the SHA-256 of the input.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from typing import Optional

from . import errors
from .client import ClusterArg
from .plan import Plan

_EXAMPLES = ("one_machine_8gpu", "four_machines_32gpu", "eight_machines_64gpu")


def default_bin_dir() -> str:
    d = os.environ.get("SP_BIN_DIR")
    if d:
        return d
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "build", "bin"))


class LocalPlanner:
    def __init__(self, bin_dir: Optional[str] = None, examples_dir: Optional[str] = None):
        self.bin_dir = bin_dir or default_bin_dir()
        here = os.path.dirname(os.path.abspath(__file__))
        self.examples_dir = examples_dir or os.path.normpath(
            os.path.join(here, "..", "..", "..", "examples", "clusters"))
        self.opt = os.path.join(self.bin_dir, "shardplan-opt")
        if not os.access(self.opt, os.X_OK):
            raise errors.DaemonUnavailable(f"no planner: {self.opt} is not an executable "
                                           f"(build shardplan first)")

    def _cluster_file(self, cluster: ClusterArg, tmp: str) -> str:
        if cluster is None:
            cluster = "one_machine_8gpu"
        if isinstance(cluster, dict):
            cluster = json.dumps(cluster)
        if cluster.lstrip().startswith("{"):
            path = os.path.join(tmp, "cluster.json")
            with open(path, "w") as f:
                f.write(cluster)
            return path
        if os.path.exists(cluster):
            return cluster
        if cluster in _EXAMPLES:
            return os.path.join(self.examples_dir, cluster + ".json")
        raise errors.ModuleRejected(f"unknown cluster {cluster!r}: not a file, JSON text or "
                                    f"one of {', '.join(_EXAMPLES)}")

    def plan(self, module: str, *, search: bool = False, cluster: ClusterArg = None,
             mesh: Optional[str] = None, time_limit: float = 0.0, timeout: Optional[float] = None,
             filename: str = "module.mlir", **options) -> Plan:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, os.path.basename(filename) or "module.mlir")
            with open(src, "w") as f:
                f.write(module)
            # What the daemon runs: Shardy's pipeline; with the search, open dims are left open
            # for it and every sharding is closed after it (server/plan/plan.h). The daemon
            # takes ops of any dialect: so does this, as far as mlir-opt's flag goes (ops of
            # other dialects in the generic form, the form MLIR prints them in).
            args = [self.opt, src, "-allow-unregistered-dialect", "-sdy-propagation-pipeline" +
                    ("=keep-shardings-open=true" if search else "")]
            report = os.path.join(tmp, "report.json")
            if search:
                o = [f"cluster={self._cluster_file(cluster, tmp)}", "placement=given",
                     f"report={report}"]
                if mesh:
                    o.append(f"mesh={mesh}")
                if time_limit:
                    o.append(f"time-limit={time_limit}")
                if options.get("memory_limit_bytes"):
                    o.append(f"memory-limit={int(options['memory_limit_bytes'])}")
                args += ["-shardplan-search=" + " ".join(o), "-sdy-close-shardings"]
            p = subprocess.run(args, capture_output=True, text=True, timeout=timeout or 600)
            if p.returncode != 0:
                raise errors.ModuleRejected(f"shardplan-opt rejected the module: "
                                            f"{p.stderr.strip()}", "INVALID_ARGUMENT",
                                            p.stderr)
            rep = json.load(open(report)) if search and os.path.exists(report) else None
        warnings = [l for l in p.stderr.splitlines()
                    if "warning" in l and not l.startswith("shardplan-search:")]
        status = ("propagated" if not search else
                  (rep or {}).get("solver", {}).get("status", "unknown"))
        key = hashlib.sha256(("search" if search else "propagate").encode() + b"\0" +
                             module.encode()).hexdigest()
        return Plan.from_report(key=key, status=status, module_sdy=p.stdout, report=rep,
                                warnings=warnings, mesh_name=mesh)
