"""shardplan.jax.plan: plan a JAX function and run the whole plan.

    client = shardplan.Client("127.0.0.1:50051")
    run, plan = shardplan.jax.plan(f, x, w, mesh=mesh, in_shardings=(P("data"), None),
                                   search=True, client=client)
    y = run(x, w)

How the plan is applied: the planned module itself is compiled by JAX's compiler. The function
is lowered by jax.jit (Shardy text with the user's mesh and partial shardings), the planner
returns the same module with a sharding on every value (closed, so XLA's own propagation has
nothing left to decide), and that module replaces the lowered one before `.compile()`. Every
value then runs as planned, not only the arguments and results. The alternative, re-tracing the
function with a sharding constraint at each planned value, needs a map from MLIR values back to
jaxpr equations that JAX does not expose (one equation lowers to several ops, and
shardplan's import splits constants), so it could only pin a subset of values.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Callable, Optional

import jax
from jax.sharding import NamedSharding, PartitionSpec

from . import errors
from .plan import Plan


@dataclasses.dataclass
class Planned:
    """A compiled, planned function: call it like the original (same pytree arguments)."""
    compiled: Any          # jax.stages.Compiled
    plan: Plan
    lowered: Any           # the jax.stages.Lowered the plan was made from

    def __call__(self, *args):
        return self.compiled(*args)

    @property
    def input_shardings(self):
        return self.compiled.input_shardings[0]

    @property
    def output_shardings(self):
        return self.compiled.output_shardings

    def as_text(self) -> str:
        return self.compiled.as_text()


def _named(mesh, in_shardings):
    """PartitionSpec leaves become NamedSharding(mesh, spec); None stays unspecified."""
    return jax.tree_util.tree_map(
        lambda s: NamedSharding(mesh, s) if isinstance(s, PartitionSpec) else s, in_shardings,
        is_leaf=lambda s: s is None or isinstance(s, (PartitionSpec, jax.sharding.Sharding)))


def lower(fn: Callable, *args, mesh, in_shardings=None, **jit_kwargs):
    """jax.jit(fn).lower(*args) with the partial shardings, every argument kept (so the
    module's arguments are the flattened args, one to one)."""
    if in_shardings is None:
        in_shardings = jax.tree_util.tree_map(lambda _: None, args)
    lowered = jax.jit(fn, in_shardings=_named(mesh, in_shardings), keep_unused=True,
                      **jit_kwargs).lower(*args)
    text = lowered.as_text()
    if "sdy.mesh" not in text or "mhlo.num_partitions = 1 :" in text:
        raise ValueError("the lowered module has no mesh to plan on: give at least one "
                         "NamedSharding or PartitionSpec in in_shardings (or a "
                         "with_sharding_constraint in the function) on the mesh")
    return lowered, text


def paths(lowered, args) -> tuple[list, list]:
    """The pytree paths of the flat arguments and results, as jax.tree_util.keystr writes them
    (`[0]['params']['w']`: argument 0, key 'params', key 'w')."""
    arg_paths = [jax.tree_util.keystr(kp) for kp, _ in jax.tree_util.tree_flatten_with_path(args)[0]]
    n_out = lowered.out_tree.num_leaves
    out = jax.tree_util.tree_unflatten(lowered.out_tree, list(range(n_out)))
    res_paths = [jax.tree_util.keystr(kp) or "result"
                 for kp, _ in jax.tree_util.tree_flatten_with_path(out)[0]]
    return arg_paths, res_paths


def pin_every_value(module) -> int:
    """Adds a closed sdy.sharding_constraint after every op result the plan shards (its
    `sdy.sharding` attribute) and routes the result's uses through it. XLA's import keeps
    sharding constraints but drops the shardings of ordinary ops, so without this only the
    arguments and results of the planned module would stay as planned and XLA's own
    propagation would re-decide the rest. Returns how many constraints were added."""
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import sdy
    skip = {"sdy.sharding_constraint", "sdy.reshard", "func.func", "sdy.mesh",
            "sdy.manual_computation", "sdy.data_flow_edge"}
    added = 0

    def walk(op):
        nonlocal added
        for region in op.regions:
            for block in region.blocks:
                ops = list(block.operations)
                for k, o in enumerate(ops):
                    walk(o.operation)
                    if o.operation.name in skip or "sdy.sharding" not in o.attributes:
                        continue
                    per = o.attributes["sdy.sharding"]
                    if not sdy.TensorShardingPerValueAttr.isinstance(per) or k + 1 >= len(ops):
                        continue
                    shardings = sdy.TensorShardingPerValueAttr(per).shardings
                    for r, sh in zip(o.results, shardings):
                        if not isinstance(r.type, ir.RankedTensorType):
                            continue
                        c = sdy.ShardingConstraintOp(r, sh, ip=ir.InsertionPoint(ops[k + 1]))
                        r.replace_all_uses_except(c.result, c.operation)
                        added += 1
                    # The constraints carry it now; JAX's canonicalisation may drop results of
                    # a while (loop-invariant operands) without updating the attribute.
                    del o.attributes["sdy.sharding"]

    walk(module.operation)
    # XLA's import has no sdy.reshard (shardplan's export turns constraints into reshards): a
    # closed constraint pins the same sharding.
    reshards = []

    def find(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    find(o.operation)
                    if o.operation.name == "sdy.reshard":
                        reshards.append(o)

    find(module.operation)
    for o in reshards:
        c = sdy.ShardingConstraintOp(o.operands[0], o.attributes["sharding"],
                                     ip=ir.InsertionPoint(o))
        o.results[0].replace_all_uses_with(c.result)
        o.operation.erase()
        added += 1
    return added


def compile_planned(lowered, module_text: str):
    """Compiles `module_text` (the planned module) with the compile arguments of `lowered`."""
    try:
        from jax._src.interpreters import mlir as jmlir
        from jax._src.lib.mlir import ir
    except ImportError as e:  # a JAX without these internals
        raise errors.PlanningFailed(f"this JAX ({jax.__version__}) does not expose the MLIR "
                                    f"context needed to compile a planned module: {e}") from None
    try:
        ctx = jmlir.make_ir_context()
        with ctx:
            module = ir.Module.parse(module_text)
    except Exception as e:
        raise errors.PlanningFailed(f"JAX's MLIR parser rejected the planned module: {e}") from None
    with ctx, ir.Location.unknown():
        pin_every_value(module)
    lowering = getattr(lowered, "_lowering", None)
    if lowering is None or not hasattr(lowering, "_hlo"):
        raise errors.PlanningFailed(f"this JAX ({jax.__version__}) lowers in a way shardplan "
                                    f"cannot substitute a module into")
    lowering._hlo = module
    return lowered.compile()


def plan(fn: Callable, *args, mesh, in_shardings=None, search: bool = False, cluster=None,
         client=None, time_limit: float = 0.0, memory_limit: float = 0.0,
         **jit_kwargs) -> tuple[Planned, Plan]:
    """Lowers fn(*args) with the partial in_shardings on `mesh`, plans it (search=False:
    Shardy propagation only; True: the cost search for `cluster` too; the mesh shape and device
    order stay the user's), compiles the planned module with JAX and returns (callable, plan).
    `client` is a shardplan.Client (default: Client() on 127.0.0.1:50051) or LocalPlanner;
    `memory_limit` the bytes per device the plan must fit (0: the cluster's device memory)."""
    if client is None:
        from .client import Client
        client = Client()
    lowered, text = lower(fn, *args, mesh=mesh, in_shardings=in_shardings, **jit_kwargs)
    name = getattr(fn, "__name__", "fn")
    if not re.fullmatch(r"[\w.-]+", name):
        name = "fn"
    p = client.plan(text, search=search, cluster=cluster, time_limit=time_limit,
                    filename=f"{name}.mlir", memory_limit_bytes=memory_limit)
    arg_paths, res_paths = paths(lowered, args)
    p.label(arg_paths, res_paths, jax.tree_util.tree_structure(args), lowered.out_tree)
    compiled = compile_planned(lowered, p.module_sdy)
    return Planned(compiled, p, lowered), p


def auto_sharding_plan(fn: Callable, *args, mesh, in_shardings=None):
    """XLA's own auto-sharding (jax.sharding.AUTO) for the arguments left unspecified: returns
    the compiled executable, or raises what XLA raises (it needs a backend that supports it)."""
    if in_shardings is None:
        in_shardings = jax.tree_util.tree_map(lambda _: None, args)
    auto = jax.sharding.AUTO(mesh)
    shard = jax.tree_util.tree_map(
        lambda s: auto if s is None else (NamedSharding(mesh, s) if isinstance(s, PartitionSpec)
                                          else s),
        in_shardings, is_leaf=lambda s: s is None or isinstance(s, (PartitionSpec,
                                                                     jax.sharding.Sharding)))
    return jax.jit(fn, in_shardings=shard, out_shardings=auto).lower(*args).compile()


def env_client():
    """The client the tests use: a daemon at $SHARDPLAN_ADDRESS if set, else LocalPlanner."""
    addr = os.environ.get("SHARDPLAN_ADDRESS")
    if addr:
        from .client import Client
        return Client(addr, token=os.environ.get("SHARDPLAN_TOKEN") or None)
    from .local import LocalPlanner
    return LocalPlanner()
