"""bench/jax_fullsize.py - the JAX corpus's three checks on full-size models (not a CI test).

    build/venv/bin/python bench/jax_fullsize.py [--out FILE] [--time-limit S] [MODEL ...]

Runs the checks of client/python/tests/test_corpus.py on the full-size configurations of
client/python/corpus/full_models.py (GPT-2 small, BERT base, ViT-B/16, ResNet-50, a 271M
Llama; random weights), on 8 host CPU devices, against a daemon it starts (build/bin/shardpland):
  1. the daemon's propagation-only plan of the lowered text vs JAX's Shardy (XLA's dump),
     value by value (corpus/correspond.py), @main's shardings vs the executable's, and the
     plan of XLA's own input (01) vs 02 op by op;
  2. the searched plan (cluster client/python/corpus/cpu8.json) compiled and run by JAX,
     allclose to the unsharded run, the executable's @main shardings as planned;
  3. predicted vs compiled collective bytes.
Each model runs in its own process (one model's arrays and executables are freed before the
next). Prints the three tables as Markdown (and writes them to FILE), with each model's
parameter count, and the seconds each stage took. CI's corpus keeps the small configs.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = os.path.join(ROOT, "client", "python")
sys.path.insert(0, PY)
CLUSTER = os.path.join(PY, "corpus", "cpu8.json")


def run_one(name: str, address: str, time_limit: float) -> dict:
    """The three checks on one model; a dict of table rows and timings."""
    import jax
    import numpy as np

    import shardplan
    import shardplan.jax as sj
    from corpus import checks
    from corpus.full_models import FULL_MODELS

    out: dict = {"model": name}
    t = time.time()
    case = FULL_MODELS[name]()
    leaves = jax.tree_util.tree_leaves(case.args[0])
    out["params"] = int(sum(np.size(x) for x in leaves))
    out["build_s"] = time.time() - t

    client = shardplan.Client(address, timeout=3600)
    t = time.time()
    lowered = jax.jit(case.fn, in_shardings=case.in_shardings, keep_unused=True).lower(*case.args)
    r = checks.check_propagation(lowered, case.mesh, client)
    out["check1_s"] = time.time() - t
    out["check1"] = checks.check1_row(name, r)
    out["check1_diffs"] = [checks.check1_diff_row(name, d)
                           for d in r.diffs + r.sig_diffs + r.xla_diffs]
    out["warnings"] = r.warnings + r.xla_warnings

    t = time.time()
    ref = jax.jit(case.fn)(*case.args)
    jax.block_until_ready(ref)
    out["reference_s"] = time.time() - t

    t = time.time()
    planned, plan = sj.plan(case.fn, *case.args, mesh=case.mesh, in_shardings=case.in_shardings,
                            search=True, cluster=CLUSTER, client=client, time_limit=time_limit)
    secs = time.time() - t
    out["plan_compile_s"] = secs
    out["solver"] = {k: plan.solver.get(k) for k in ("status", "gap", "seconds", "variables")}
    out["values"] = len(plan.values)
    t = time.time()
    rr = checks.check_run(case, planned, plan, ref, secs)
    out["run_s"] = time.time() - t
    c = checks.check_comm(plan, planned.as_text())
    out["check2"] = checks.check2_row(name, rr, checks.axes_used(plan, case.mesh), secs)
    out["check2_mismatches"] = [(d.where, d.jax, d.ours) for d in rr.mismatches]
    out["check3"] = checks.check3_row(name, c)
    return out


def machine() -> str:
    cpu, mem = platform.machine(), 0
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) / 2**20
    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB "
            f"({platform.system()} {platform.release()})")


def render(results: list, failures: list, a) -> str:
    """The Markdown of the results: timings, the three tables, check 1's differences counted
    by model, op and cause."""
    import jax

    from corpus import checks
    md = [f"Machine: {machine()}; Python {platform.python_version()}, jax {jax.__version__}, "
          f"8 host CPU devices; command: `build/venv/bin/python "
          f"bench/jax_fullsize.py --time-limit {a.time_limit:g}"
          f"{' ' + ' '.join(a.models) if a.models else ''}`.\n"]
    md.append("| model | parameters | values planned | solver | build s | check 1 s | "
              "reference run s | plan + compile s | planned run s |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        s = r["solver"]
        gap = s.get("gap")
        md.append(f"| {r['model']} | {r['params'] / 1e6:.1f}M | {r['values']} | "
                  f"{s.get('status')}{'' if not gap else f' (gap {100 * gap:.1f}%)'} | "
                  f"{r['build_s']:.0f} | {r['check1_s']:.0f} | {r['reference_s']:.0f} | "
                  f"{r['plan_compile_s']:.0f} | {r['run_s']:.0f} |")
    for key, (title, header) in (("check1", checks.CHECK1), ("check2", checks.CHECK2),
                                 ("check3", checks.CHECK3)):
        md.append(f"\n### {title}\n")
        md.append(checks.markdown_table(header, [tuple(r[key]) for r in results]))
    # Every difference, counted by model, op and cause (the values are in --out's JSON).
    groups: dict = {}
    for r in results:
        for m, where, j, o, cause in r["check1_diffs"]:
            op = where.split("= ", 1)[1] if "= " in where else where
            key = (m, op, "no counterpart" if j == "(no counterpart)" else j,
                   cause.split(":")[0])
            groups[key] = groups.get(key, 0) + 1
    if groups:
        md.append(f"\n### {checks.CHECK1_DIFFS[0]}, counted by op\n")
        md.append(checks.markdown_table(["model", "op", "values", "JAX", "cause"],
                                        [(m, op, n, j, c) for (m, op, j, c), n in groups.items()]))
    mism = [(r["model"], w, j, o) for r in results for (w, j, o) in r["check2_mismatches"]]
    if mism:
        md.append("\nCheck 2 compiled shardings that differ from the plan:\n")
        md += [f"- {m}: {w}: compiled {j}, planned {o}" for m, w, j, o in mism]
    for n, err in failures:
        md.append(f"\n{n}: FAILED: " + " / ".join(err))
    return "\n".join(md) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--out", help="also write the Markdown here")
    ap.add_argument("--time-limit", type=float, default=60.0, help="search seconds per model")
    ap.add_argument("--one", help=argparse.SUPPRESS)      # child: NAME
    ap.add_argument("--address", help=argparse.SUPPRESS)  # child: the daemon
    ap.add_argument("--render", help="print the Markdown of an earlier run's --out JSON")
    a = ap.parse_args()
    if a.render:
        with open(a.render) as f:
            print(render(json.load(f), [], a))
        return 0
    if a.one:
        print(json.dumps(run_one(a.one, a.address, a.time_limit)))
        return 0

    from corpus.daemon import Daemon
    from corpus.full_models import FULL_MODELS
    names = a.models or list(FULL_MODELS)
    bad = [n for n in names if n not in FULL_MODELS]
    if bad:
        ap.error(f"unknown model(s) {', '.join(bad)}; known: {', '.join(FULL_MODELS)}")
    bin_dir = os.environ.get("SP_BIN_DIR") or os.path.join(ROOT, "build", "bin")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu", KERAS_BACKEND="jax", SP_BIN_DIR=bin_dir)
    d = Daemon(bin_dir)
    results, failures = [], []
    try:
        for n in names:
            t = time.time()
            p = subprocess.run([sys.executable, __file__, "--one", n, "--address", d.address,
                                "--time-limit", str(a.time_limit)],
                               capture_output=True, text=True, env=env)
            last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
            if p.returncode != 0 or not last.startswith("{"):
                failures.append((n, p.stderr.strip().splitlines()[-5:]))
                print(f"{n}: FAILED after {time.time() - t:.0f} s", file=sys.stderr)
                continue
            results.append(json.loads(last))
            print(f"{n}: done in {time.time() - t:.0f} s", file=sys.stderr)
    finally:
        d.stop()

    text = render(results, failures, a)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
        with open(a.out + ".json", "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
