"""shardplan.jax.plan through the daemon the suite starts: the user's mesh (shape and device
order) is kept, PartitionSpecs are accepted as in_shardings, the results of JAX's func.call ops
(jax.nn.relu, nested jits) are planned by the daemon in one request, and a function with nothing
on a mesh is refused clearly."""
from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import shardplan
import shardplan.jax as sj
from corpus import checks
from shardplan import sdy_text

CLUSTER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "corpus", "cpu8.json")


def _f(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2


def _args():
    r = np.random.default_rng(0)
    return (jnp.asarray(r.standard_normal((32, 64), np.float32)),
            jnp.asarray(r.standard_normal((64, 128), np.float32) * 0.1),
            jnp.asarray(r.standard_normal((128, 16), np.float32) * 0.1))


def test_a_permuted_device_order_is_kept_by_the_plan_and_the_executable(planner):
    auto = jax.sharding.AxisType.Auto
    devs = np.array(jax.devices()[::-1]).reshape(4, 2)  # 7 6 / 5 4 / ...
    mesh = jax.sharding.Mesh(devs, ("data", "model"), axis_types=(auto, auto))
    args = _args()
    run, plan = sj.plan(_f, *args, mesh=mesh, in_shardings=(P("data"), None, None),
                        search=True, cluster=CLUSTER, client=planner)
    # JAX keeps the device order outside the module (the lowering's device assignment); the
    # plan keeps the module's mesh as given, and the executable runs on the user's order.
    assert "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>" in plan.module_sdy
    x_sharding = run.input_shardings[0]
    assert x_sharding.is_equivalent_to(NamedSharding(mesh, P("data")), 2)
    assert not x_sharding.is_equivalent_to(NamedSharding(jax.make_mesh(
        (4, 2), ("data", "model"), axis_types=(auto, auto)), P("data")), 2)
    np.testing.assert_allclose(np.asarray(run(*args)), np.asarray(_f(*args)), rtol=1e-4,
                               atol=1e-4)


def test_a_function_with_nothing_on_a_mesh_is_refused_naming_the_fix(planner):
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))
    with pytest.raises(ValueError, match="give at least one NamedSharding or PartitionSpec"):
        sj.plan(_f, *_args(), mesh=mesh, in_shardings=None, client=planner)


def test_plan_keys_arguments_and_results_by_pytree_path(planner):
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))
    x, w1, w2 = _args()

    def g(params, x):
        return {"y": _f(x, params["w1"], params["w2"])}

    run, plan = sj.plan(g, {"w1": w1, "w2": w2}, x, mesh=mesh,
                        in_shardings=({"w1": P(None, "model"), "w2": None}, P("data")),
                        client=planner)
    assert set(plan.args) == {"[0]['w1']", "[0]['w2']", "[1]"}
    assert plan.args["[0]['w1']"] == P(None, "model")
    assert plan.args["[1]"] == P("data")
    assert set(plan.results) == {"['y']"}
    assert plan.in_specs()[0]["w1"] == P(None, "model")
    np.testing.assert_allclose(np.asarray(run({"w1": w1, "w2": w2}, x)["y"]),
                               np.asarray(_f(x, w1, w2)), rtol=1e-4, atol=1e-4)


def test_a_custom_call_without_a_rule_is_planned_whole_and_named_in_a_warning(planner):
    """A custom call with a target no rule knows (an FFI target of the user's, here one that is
    never registered: the module is planned, not run) is kept, read and written replicated,
    and named in the plan's warnings; the ops around it are still planned."""
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))
    x, w, _ = _args()

    def f(x, w):
        h = jnp.tanh(x @ w)
        y = jax.ffi.ffi_call("shardplan_test_unknown", jax.ShapeDtypeStruct(h.shape, h.dtype))(h)
        return y * 2.0

    _, text = sj.lower(f, x, w, mesh=mesh, in_shardings=(P("data"), None))
    plan = planner.plan(text, search=True, cluster=CLUSTER)
    checks.assert_planned_conservatively(
        plan, "custom_call @shardplan_test_unknown",
        "custom call @shardplan_test_unknown is unknown to SDY sharding rule registry")
    dot = sdy_text.op_layouts(plan.module_sdy, "stablehlo.dot_general")
    # (its batch dim on "data" first; the search may split it further)
    spec = dot[0][2][0] if dot else ()
    assert spec and spec[0][0] == "data", f"the matmul before the custom call: {dot}"
    # The gather in front of it is priced (an all-gather of the 32x128 f32 tanh output).
    assert any(c.kind == "all-gather" for c in plan.collectives), plan.collectives


def test_a_host_callback_is_planned_on_its_device_and_runs_as_planned(planner):
    """jax.pure_callback lowers to custom_call @xla_ffi_python_cpu_callback on a maximal mesh
    (one device). Shardy has no rule for callbacks and is silent about them on purpose, so is
    the plan: the callback reads its operand whole, keeps its one-device sharding, and the
    module runs as planned."""
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))
    x, w1, _ = _args()

    def f(x, w):
        h = jnp.tanh(x @ w)
        y = jax.pure_callback(lambda a: np.asarray(a) * 2.0,
                              jax.ShapeDtypeStruct(h.shape, h.dtype), h)
        return y + 1.0

    run, plan = sj.plan(f, x, w1, mesh=mesh, in_shardings=(P("data"), None), search=True,
                        cluster=CLUSTER, client=planner)
    checks.assert_planned_conservatively(plan, "custom_call @xla_ffi_python_cpu_callback", None)
    assert "<@maximal_mesh_0, []>" in plan.module_sdy
    np.testing.assert_allclose(np.asarray(run(x, w1)), np.asarray(f(x, w1)), rtol=1e-5,
                               atol=1e-5)


@jax.jit
def _inner(h, w):
    return jnp.tanh(h @ w)


def _calls(x, w1, w2):
    # jax.nn.relu and the nested jit lower to private functions called from @main.
    return _inner(jax.nn.relu(x @ w1), w2)


def _call_results(module: str) -> list:
    main = module.split("func.func public @main", 1)[1].split("\n  }\n", 1)[0]
    return [line for line in main.splitlines() if " = call @" in line]


def test_the_daemon_plans_func_call_results_in_one_search_request(planner):
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))
    args = _args()
    before = planner.stats().misses
    run, plan = sj.plan(_calls, *args, mesh=mesh, in_shardings=(P("data"), P(None, "model"), None),
                        search=True, cluster=CLUSTER, client=planner)
    assert planner.stats().misses == before + 1, "the search took more than one request"
    calls = _call_results(plan.module_sdy)
    assert len(calls) == 2, plan.module_sdy
    # Propagation went through the callees: relu keeps the dot's ("data", "model") layout and
    # the nested jit's result is batch-sharded, as Shardy's pipeline has them (not replicated).
    assert '@relu' in calls[0] and '[{"data"}, {"model"}]' in calls[0], calls[0]
    assert '@_inner' in calls[1] and '[{"data"}, {}]' in calls[1], calls[1]
    assert "?" not in plan.module_sdy.split("func.func public @main", 1)[1], \
        "a sharding of the plan is left open"
    assert plan.results["result"] == P("data")
    np.testing.assert_allclose(np.asarray(run(*args)), np.asarray(_calls(*args)), rtol=1e-4,
                               atol=1e-4)


def test_local_planner_gives_the_daemons_search_plan(planner):
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))
    _, text = sj.lower(_calls, *_args(), mesh=mesh,
                       in_shardings=(P("data"), P(None, "model"), None))
    daemon = planner.plan(text, search=True, cluster=CLUSTER)
    local = shardplan.LocalPlanner().plan(text, search=True, cluster=CLUSTER)
    assert local.module_sdy == daemon.module_sdy
