"""shardplan.Client against a daemon the test starts (build/bin/shardpland), and the errors a
JAX user can meet, each one exception naming its cause."""
from __future__ import annotations

import os
import socket

import pytest

import shardplan

EXAMPLE = os.path.join(os.environ.get("SP_SOURCE_DIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."), "examples", "mlp.mlir")


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _mlp() -> str:
    with open(EXAMPLE) as f:
        return f.read()


# ---------------------------------------------------------------- errors without a daemon

def test_an_address_without_a_port_is_a_bad_address():
    with pytest.raises(shardplan.BadAddress, match="expected HOST:PORT"):
        shardplan.Client("localhost")


def test_a_host_that_does_not_resolve_is_a_bad_address():
    with pytest.raises(shardplan.BadAddress, match="does not resolve"):
        shardplan.Client("no-such-host.invalid:50051")


def test_no_daemon_at_the_address_is_daemon_unavailable():
    c = shardplan.Client(f"127.0.0.1:{_free_port()}", timeout=5)
    with pytest.raises(shardplan.DaemonUnavailable, match="no shardplan daemon answers"):
        c.health()
    with pytest.raises(shardplan.DaemonUnavailable):
        c.plan(_mlp())


def test_local_planner_rejects_a_broken_module_naming_the_place():
    with pytest.raises(shardplan.ModuleRejected, match=r"bad\.mlir:1:"):
        shardplan.LocalPlanner().plan("func.func @main(%a: tensor<4xf32>) {", filename="bad.mlir")


# ---------------------------------------------------------------- against the daemon

def test_health_plan_get_list_stats_delete(daemon):
    c = shardplan.Client(daemon.address)
    assert c.health() == "SERVING"
    p = c.plan(_mlp())
    assert p.status == "propagated" and len(p.key) == 64 and not p.cache_hit
    assert p.arg_values and any(v.spec for v in p.values)
    again = c.plan(_mlp())
    assert again.cache_hit and again.key == p.key
    got = c.get(p.key)
    assert got.key == p.key and got.module_sdy == p.module_sdy
    assert p.key in [i.key for i in c.list()]
    st = c.stats()
    assert st.hits >= 1 and st.plans >= 1
    assert c.delete(p.key) is True
    with pytest.raises(shardplan.PlanNotFound):
        c.get(p.key)


def test_searched_plan_has_costs_and_streams_progress(daemon):
    c = shardplan.Client(daemon.address)
    events = list(c.plan_stream(_mlp(), search=True, cluster="one_machine_8gpu"))
    plan = events[-1]
    assert isinstance(plan, shardplan.Plan)
    assert all(isinstance(e, dict) and e["stage"] for e in events[:-1])
    assert plan.costs.total_seconds > 0 and plan.costs.peak_memory_bytes > 0


def test_a_module_the_engine_rejects_is_module_rejected(daemon):
    c = shardplan.Client(daemon.address)
    with pytest.raises(shardplan.ModuleRejected, match=r"model\.mlir:1:"):
        c.plan("func.func @main(%a: tensor<4xf32>) {", filename="model.mlir")


def test_a_wrong_or_missing_token_is_an_authentication_error(token_daemon):
    with pytest.raises(shardplan.AuthenticationError, match="bearer token"):
        shardplan.Client(token_daemon.address, token="wrong").plan(_mlp())
    with pytest.raises(shardplan.AuthenticationError):
        shardplan.Client(token_daemon.address).plan(_mlp())
    ok = shardplan.Client(token_daemon.address, token=token_daemon.token).plan(_mlp())
    assert ok.key
