"""The JAX model corpus, three checks per model (issue 11), on 8 host CPU devices.

1. Propagation agrees with JAX: shardplan's Shardy propagation vs JAX's own (XLA's Shardy
   dump), value by value, and @main's shardings vs the executable's; >= 95% of values agree,
   every difference is listed with its cause.
2. The searched plan runs as planned: compiled through JAX, outputs allclose to the unsharded
   run, the executable's argument/result shardings are the planned ones, and transformer plans
   shard something.
3. Predicted vs real communication: the plan's collectives beside the ones in the compiled
   HLO, per kind (B as the cost model counts it) and as bytes each device moves (the ring
   algorithms' volume: (n-1)/n B for all-gather and reduce-scatter, 2(n-1)/n B for
   all-reduce, (n-1)/n^2 B for all-to-all, B for collective-permute); every model
   communicates, each kind carries the predicted B, and the moved-bytes ratio lies in [0.5, 2].

The planner is the daemon the suite starts (build/bin/shardpland), or the one at
$SHARDPLAN_ADDRESS (conftest.py's `planner`).
"""
from __future__ import annotations

import os
import time

import jax
import pytest

import shardplan
import shardplan.jax as sj
from corpus import checks, models

CLUSTER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "corpus", "cpu8.json")


def _t(tables, title, header):
    return tables.setdefault(title, (header, []))[1]


@pytest.mark.parametrize("name", list(models.MODELS))
def test_propagation_agrees_with_jax(name, planner, tables):
    case = models.MODELS[name]()
    lowered = models.lower(case)
    r = checks.check_propagation(lowered, case.mesh, planner)
    _t(tables, *checks.CHECK1).append(checks.check1_row(name, r))
    diffs = _t(tables, *checks.CHECK1_DIFFS)
    for d in r.diffs + r.sig_diffs + r.xla_diffs:
        diffs.append(checks.check1_diff_row(name, d))
    # Every value compared agrees; every value not compared has its reason.
    disagree = [d for d in r.diffs if d.cause == "sharding"]
    assert not disagree, f"{name}: sharding differences with JAX: {disagree}"
    unexplained = [d for d in r.diffs if d.cause == "unexplained"]
    assert not unexplained, f"{name}: values without a counterpart, unexplained: {unexplained}"
    assert r.rate >= 0.95, f"{name}: only {100 * r.rate:.1f}% of the compared values agree"
    assert r.compared >= 0.85 * r.values, \
        f"{name}: only {r.compared} of {r.values} values have a counterpart in JAX's module"
    assert not r.sig_diffs, f"{name}: @main shardings differ from the executable's: {r.sig_diffs}"
    # On XLA's own input, every value aligned and agreeing.
    assert not r.xla_diffs, f"{name}: on XLA's input (01): {r.xla_diffs}"
    # No op without a rule, but those XLA's import makes (Shardy warns once per kind of op).
    assert not [w for w in r.warnings if "unknown to SDY sharding rule registry" in w], \
        f"{name}: the lowered text has ops without a rule: {r.warnings}"
    got = sorted(w.split("warning: ", 1)[1] for w in r.xla_warnings
                 if "unknown to SDY sharding rule registry" in w)
    assert got == sorted(case.xla_warnings), \
        f"{name}: warnings {got}, expected {list(case.xla_warnings)}"


@pytest.mark.parametrize("name", list(models.MODELS))
def test_searched_plan_runs_as_planned(name, planner, tables):
    case = models.MODELS[name]()
    ref = jax.jit(case.fn)(*case.args)
    t = time.time()
    planned, plan = sj.plan(case.fn, *case.args, mesh=case.mesh, in_shardings=case.in_shardings,
                            search=True, cluster=CLUSTER, client=planner)
    secs = time.time() - t
    r = checks.check_run(case, planned, plan, ref, secs)
    c = checks.check_comm(plan, planned.as_text())
    axes = checks.axes_used(plan, case.mesh)
    _t(tables, *checks.CHECK2).append(checks.check2_row(name, r, axes, secs))
    _t(tables, *checks.CHECK3).append(checks.check3_row(name, c))
    assert r.allclose, f"{name}: the planned run differs from the unsharded one " \
                       f"(max abs err {r.max_abs_err})"
    assert not r.mismatches, f"{name}: compiled shardings differ from the plan: {r.mismatches}"
    if case.transformer:
        # What a person would shard: the batch over "data" and the layers' matmuls over
        # "model" (tensor parallelism), both used somewhere in the plan.
        assert not plan.is_fully_replicated(), f"{name}: the plan shards nothing"
        assert axes == list(case.mesh.axis_names), f"{name}: the plan uses only {axes}"
    # Every model communicates (its annotations make it), per kind as predicted.
    assert c.ratio is not None, f"{name}: neither the plan nor XLA communicates"
    assert 0.5 <= c.ratio <= 2.0, f"{name}: predicted/real moved bytes {c.ratio}"
    assert c.kinds_agree, f"{name}: per kind, predicted {c.predicted}, compiled {c.real}"


def test_xla_auto_sharding_on_cpu(tables):
    """jax.sharding.AUTO (XLA's auto-sharding) beside the planner: quoted when it cannot run."""
    case = models.flax_mlp()
    rows = _t(tables, "XLA auto-sharding (jax.sharding.AUTO) on CPU", ["model", "result"])
    try:
        compiled = sj.auto_sharding_plan(case.fn, *case.args, mesh=case.mesh,
                                         in_shardings=case.in_shardings)
    except Exception as e:  # what XLA/JAX says is the result
        rows.append(("flax_mlp", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"))
        return
    colls = checks.hlo_collectives(compiled.as_text())
    rows.append(("flax_mlp", f"ran: {len(colls)} collectives, "
                             f"{checks.price_collectives(colls, CLUSTER) * 1e6:.1f} us priced"))
