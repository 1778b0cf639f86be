"""The Plan object: what the planner decided, in terms a JAX user reads.

A Plan holds the planned module (Shardy text), one sharding per value, the predicted
collectives and costs. Function arguments and results are keyed by the pytree paths of the
function that was planned (`"[0]['params']['Dense_0']['kernel']"`, as
`jax.tree_util.keystr` writes them) once `label()` has been given those paths; intermediate
values are listed by position (text order of the planned module, which is the order of
ValueAddress.index for op results).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional, Sequence

from . import sdy_text


@dataclasses.dataclass(frozen=True)
class Costs:
    compute_seconds: float = 0.0
    communication_seconds: float = 0.0
    total_seconds: float = 0.0
    peak_memory_bytes: float = 0.0
    memory_limit_bytes: float = 0.0


@dataclasses.dataclass(frozen=True)
class Collective:
    kind: str           # all-gather, reduce-scatter, all-reduce, all-to-all, all-slice (local)
    axes: tuple         # mesh axes it runs over
    bytes: float        # per device (the planner's model)
    seconds: float
    value: str          # the value moved ("%12")
    op: str             # the op where it happens


@dataclasses.dataclass(frozen=True)
class Value:
    position: int       # index in Plan.values
    kind: str           # "arg", "result" (an op result) or "return" (a function result)
    where: str          # "@main arg 0", "%3 = stablehlo.dot_general", "@main result 0"
    op: str
    spec: tuple         # per-dimension tuples of mesh axes; () = replicated

    @property
    def partition_spec(self):
        return to_partition_spec(self.spec)


def to_partition_spec(spec: tuple):
    """A sdy_text spec as a jax.sharding.PartitionSpec (trailing replicated dimensions
    omitted, as PartitionSpec allows)."""
    from jax.sharding import PartitionSpec
    return PartitionSpec(*[None if not d else (d[0] if len(d) == 1 else tuple(d)) for d in spec])


def _axes(s: str) -> tuple:
    return tuple(a.strip().strip('"') for a in s.split(",") if a.strip()) if s else ()


class Plan:
    """One plan. Build with Plan.from_text (module text plus summary fields) or through a
    client; `label()` attaches the caller's pytree paths."""

    def __init__(self, *, key: str, status: str, module_sdy: str, costs: Costs,
                 collectives: Sequence[Collective] = (), warnings: Sequence[str] = (),
                 cache_hit: bool = False, solver: Optional[dict] = None,
                 mesh_name: Optional[str] = None, raw: Any = None):
        self.key = key
        self.status = status
        self.module_sdy = module_sdy
        self.costs = costs
        self.collectives = list(collectives)
        self.warnings = list(warnings)
        self.cache_hit = cache_hit
        self.solver = solver or {}
        self.mesh_name = mesh_name
        self.raw = raw  # the PlanResponse message (daemon) or the report dict (local)
        vals = sdy_text.module_values(module_sdy, {"main"}) if module_sdy else []
        self.values = [Value(i, v.kind, v.where, v.op, v.spec) for i, v in enumerate(vals)]
        self.arg_values = [v for v in self.values if v.kind == "arg"]
        self.result_values = [v for v in self.values if v.kind == "return"]
        self.intermediates = [v for v in self.values if v.kind == "result"]
        self.arg_paths: list = [f"arg {i}" for i in range(len(self.arg_values))]
        self.result_paths: list = [f"result {i}" for i in range(len(self.result_values))]
        self._in_tree = None
        self._out_tree = None

    # ---------------------------------------------------------------- naming

    def label(self, arg_paths: Sequence[str], result_paths: Sequence[str],
              in_tree=None, out_tree=None) -> "Plan":
        if len(arg_paths) != len(self.arg_values) or len(result_paths) != len(self.result_values):
            raise ValueError(f"the plan's @main has {len(self.arg_values)} arguments and "
                             f"{len(self.result_values)} results; got {len(arg_paths)} argument "
                             f"and {len(result_paths)} result paths")
        self.arg_paths = list(arg_paths)
        self.result_paths = list(result_paths)
        self._in_tree, self._out_tree = in_tree, out_tree
        return self

    @property
    def args(self) -> dict:
        """{pytree path of each argument leaf: PartitionSpec}."""
        return {p: v.partition_spec for p, v in zip(self.arg_paths, self.arg_values)}

    @property
    def results(self) -> dict:
        """{pytree path of each result leaf: PartitionSpec}."""
        return {p: v.partition_spec for p, v in zip(self.result_paths, self.result_values)}

    def in_specs(self):
        """The argument PartitionSpecs as the arguments' pytree (after label with in_tree)."""
        import jax
        specs = [v.partition_spec for v in self.arg_values]
        return jax.tree_util.tree_unflatten(self._in_tree, specs) if self._in_tree else specs

    def out_specs(self):
        import jax
        specs = [v.partition_spec for v in self.result_values]
        return jax.tree_util.tree_unflatten(self._out_tree, specs) if self._out_tree else specs

    def is_fully_replicated(self) -> bool:
        return all(not v.spec for v in self.values)

    def communicating_collectives(self) -> list:
        """The collectives that move data between devices (an all-slice is local: each device
        keeps its part of a value it holds whole)."""
        return [c for c in self.collectives if c.kind != "all-slice"]

    def predicted_collective_bytes(self) -> float:
        return sum(c.bytes for c in self.communicating_collectives())

    # ---------------------------------------------------------------- display

    def summary(self) -> str:
        c = self.costs
        sharded = sum(1 for v in self.values if v.spec)
        return (f"plan {self.key[:12]} {self.status}: {len(self.values)} values, {sharded} "
                f"sharded; compute {c.compute_seconds * 1e6:.1f} us, communication "
                f"{c.communication_seconds * 1e6:.1f} us, peak memory "
                f"{c.peak_memory_bytes / 2**20:.2f} MiB per device; "
                f"{len(self.collectives)} collectives")

    def __repr__(self) -> str:
        return f"<shardplan.Plan {self.summary()}>"

    # ---------------------------------------------------------------- builders

    @classmethod
    def from_report(cls, *, key: str, status: str, module_sdy: str, report: Optional[dict],
                    warnings: Sequence[str] = (), mesh_name: Optional[str] = None) -> "Plan":
        """From shardplan-opt's output text and its -shardplan-search report JSON."""
        costs, colls, solver = Costs(), [], {}
        if report:
            rc = report.get("costs", {})
            costs = Costs(rc.get("compute_s", 0.0), rc.get("communication_s", 0.0),
                          rc.get("total_s", 0.0), rc.get("peak_memory_bytes", 0.0),
                          rc.get("memory_limit_bytes", 0.0))
            colls = [Collective(c["kind"], _axes(c.get("axes", "")), c.get("bytes", 0.0),
                                c.get("seconds", 0.0), c.get("value", ""), c.get("op", ""))
                     for c in report.get("collectives", [])]
            solver = report.get("solver", {})
        return cls(key=key, status=status, module_sdy=module_sdy, costs=costs,
                   collectives=colls, warnings=warnings, solver=solver, mesh_name=mesh_name,
                   raw=report)

    @classmethod
    def from_response(cls, resp) -> "Plan":
        """From a shardplan.v1.PlanResponse (Detail FULL carries module_sdy)."""
        from .v1 import planner_pb2
        p = resp.plan
        c = p.costs
        costs = Costs(c.compute_seconds, c.communication_seconds, c.total_seconds,
                      c.peak_memory_bytes, c.memory_limit_bytes)
        colls = [Collective(x.kind, tuple(x.axes), x.bytes, x.seconds, x.value, x.op)
                 for x in p.collectives]
        s = p.solver
        solver = {"status": s.status, "variables": s.variables, "rows": s.rows,
                  "seconds": s.seconds, "objective": s.objective, "bound": s.bound,
                  "gap": s.gap}
        status = planner_pb2.PlanStatus.Name(resp.status).replace("PLAN_STATUS_", "").lower()
        mesh = p.meshes[0].name if len(p.meshes) else None
        return cls(key=resp.key, status=status, module_sdy=p.module_sdy, costs=costs,
                   collectives=colls, warnings=list(resp.warnings), cache_hit=resp.cache_hit,
                   solver=solver, mesh_name=mesh, raw=resp)
