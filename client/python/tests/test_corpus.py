"""The JAX model corpus, three checks per model (issue 11), on 8 host CPU devices.

1. Propagation agrees with JAX: shardplan's Shardy propagation vs JAX's own (XLA's Shardy
   dump), value by value, and @main's shardings vs the executable's; >= 95% of values agree,
   every difference is listed with its cause.
2. The searched plan runs as planned: compiled through JAX, outputs allclose to the unsharded
   run, the executable's argument/result shardings are the planned ones, and transformer plans
   shard something.
3. Predicted vs real communication: the plan's collective bytes beside the collectives in the
   compiled HLO; the ratio lies in [0.5, 2] (or both are zero).

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

# Differences between JAX's Shardy and shardplan whose cause is known, by model: the check
# accepts only these (and at most 5% of values).
KNOWN_CAUSE = ("JAX's constant-or-scalar merger (newer than the conformance files) also merges "
               "duplicated element-wise expressions of constants (convert, subtract, compare, "
               "select, reshape of constants); shardplan's merger, per "
               "shardy-export/constant_or_scalar_merger.mlir, merges only sdy.constant and "
               "scalar broadcasts, so it keeps those duplicates (each unsharded, as JAX's "
               "merged one is)")


def _t(tables, title, header):
    return tables.setdefault(title, (header, []))[1]


@pytest.mark.parametrize("name", list(models.MODELS))
def test_propagation_agrees_with_jax(name, tables):
    case = models.MODELS[name]()
    lowered = models.lower(case)
    r = checks.check_propagation(lowered, case.mesh)
    rows = _t(tables, "Check 1: propagation vs JAX's Shardy (values in 02.after_propagation.mlir; "
                      "@main vs compiled.input/output_shardings)",
              ["model", "values agree", "rate", "@main agree", "differences (cause)"])
    causes = {}
    for d in r.diffs:
        if "(merged away)" in d.jax or "(absent)" in d.ours:
            causes["constant-expression merge"] = causes.get("constant-expression merge", 0) + 1
        else:
            causes["sharding"] = causes.get("sharding", 0) + 1
    rows.append((name, f"{r.agree}/{r.values}", f"{100 * r.rate:.1f}%",
                 f"{r.sig_agree}/{r.sig_values}",
                 ", ".join(f"{n} {k}" for k, n in sorted(causes.items())) or "none"))
    for d in r.diffs:
        print(f"  {name}: {d.where}: JAX {d.jax}, shardplan {d.ours}")
    unexplained = [d for d in r.diffs if not ("(merged away)" in d.jax or "(absent)" in d.ours)]
    assert not unexplained, f"{name}: sharding differences with JAX: {unexplained}"
    assert not r.sig_diffs, f"{name}: @main shardings differ from the executable's: {r.sig_diffs}"
    assert r.rate >= 0.95, f"{name}: only {100 * r.rate:.1f}% of values agree"
    assert "unknown to SDY sharding rule registry" not in r.warnings, r.warnings


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
    rows = _t(tables, "Check 2: the searched plan run on 8 CPU devices",
              ["model", "allclose", "max abs err", "@main shardings as planned",
               "sharded values", "axes used", "plan+compile s"])
    axes = [a for a in case.mesh.axis_names if f'"{a}"' in plan.module_sdy.split("func.func", 1)[1]]
    rows.append((name, "yes" if r.allclose else "NO", f"{r.max_abs_err:.2e}",
                 f"{r.shardings_as_planned}/{r.shardings_total}",
                 f"{r.sharded_values}/{r.values}", ", ".join(axes) or "none", f"{secs:.1f}"))
    rows3 = _t(tables, "Check 3: predicted vs compiled collectives (B per collective as in "
                       "cost_model.h, summed)",
               ["model", "predicted", "predicted bytes", "compiled HLO", "HLO bytes",
                "ratio"])
    fmt = lambda d: ", ".join(f"{n} {k}" for k, n in sorted(d.items())) or "none"
    rows3.append((name, fmt(c.predicted), f"{c.predicted_bytes:.0f}", fmt(c.real),
                  f"{c.real_bytes:.0f}", "-" if c.ratio is None else f"{c.ratio:.2f}"))
    assert r.allclose, f"{name}: the planned run differs from the unsharded one " \
                       f"(max abs err {r.max_abs_err})"
    assert not r.mismatches, f"{name}: compiled shardings differ from the plan: {r.mismatches}"
    if case.transformer:
        # What a person would shard: the batch over "data" and the layers' matmuls over
        # "model" (tensor parallelism), both used somewhere in the plan.
        assert not plan.is_fully_replicated(), f"{name}: the plan shards nothing"
        assert axes == list(case.mesh.axis_names), f"{name}: the plan uses only {axes}"
    assert c.ratio is None or 0.5 <= c.ratio <= 2.0, \
        f"{name}: predicted/real collective bytes {c.ratio}"


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
