"""shardplan: the Python client of the shardplan sharding planner.

    import shardplan
    client = shardplan.Client("127.0.0.1:50051")          # the daemon, shardpland
    run, plan = shardplan.jax.plan(f, x, w, mesh=mesh, in_shardings=(s, None), client=client)
    y = run(x, w)                                          # the whole plan, compiled by JAX

Modules: client (gRPC Client), plan (Plan), errors (one exception per cause), local
(LocalPlanner: the same API through build/bin/shardplan-opt), sdy_text (shardings out of
Shardy text), jax (plan a jitted function), keras (a Keras LayoutMap from a plan). The gRPC
stubs (shardplan.v1.*_pb2, shardplan.health.health_pb2) are generated from proto/ at build
time into build/python, which this package's __path__ reaches.
"""
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from .client import Client  # noqa: E402
from .errors import (AuthenticationError, BadAddress, DaemonUnavailable,  # noqa: E402
                     DeadlineExceeded, ModuleRejected, PlanNotFound, PlanningFailed,
                     RequestTooLarge, ServerBusy, ShardplanError)
from .local import LocalPlanner  # noqa: E402
from .plan import Collective, Costs, Plan, Value  # noqa: E402

__all__ = ["Client", "LocalPlanner", "Plan", "Costs", "Collective", "Value", "ShardplanError",
           "BadAddress", "DaemonUnavailable", "AuthenticationError", "ModuleRejected",
           "PlanNotFound", "RequestTooLarge", "ServerBusy", "DeadlineExceeded",
           "PlanningFailed", "jax", "keras"]


def __getattr__(name):  # shardplan.jax / shardplan.keras import JAX or Keras only when used
    if name in ("jax", "keras"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(name)
