"""The corpus checks, shared by the pytest suite and the benchmark.

Check 1 (propagation agrees with JAX): JAX's compiler runs the real Shardy. With XLA's
debug options `xla_dump_to=DIR` and `xla_dump_hlo_pass_re=shardy`, XLA writes the MLIR modules
of its Shardy pipeline under DIR/shardy/<module>/: 01.before_propagation.mlir (what propagation
starts from: the lowered text after XLA's round trip through HLO) and 02.after_propagation.mlir
(every value's sharding as JAX's Shardy chose it). The reference is 02 plus
`compiled.input_shardings` / `compiled.output_shardings`; ours is the daemon's
propagation-only plan (Client.plan, search off) of the lowered text itself
(`jax.jit(f).lower(...).as_text()`), matched to 02 value by value by corpus/correspond.py
(XLA's round trip inlines calls, folds constants and rewrites reshapes, so the two modules are
not the same list of ops). Every value of ours is either compared or listed with the reason it
has no counterpart. A second comparison gives the daemon XLA's own input (01) and aligns its
plan with 02 op by op (the same ops in the same order, up to the order of split constants).
"""
from __future__ import annotations

import dataclasses
import difflib
import glob
import os
import re
import tempfile
from typing import Optional

import jax

from shardplan import sdy_text


def spec_of_sharding(s) -> Optional[sdy_text.Spec]:
    """A JAX sharding as a Spec; None when it is not a NamedSharding (no per-axis form)."""
    if isinstance(s, jax.sharding.NamedSharding):
        dims = []
        for e in s.spec:
            if e is None:
                dims.append(())
            elif isinstance(e, str):
                dims.append((e,))
            else:
                dims.append(tuple(e))
        return sdy_text.normalise(dims)
    if getattr(s, "is_fully_replicated", False):
        return ()
    return None


@dataclasses.dataclass
class Diff:
    where: str
    jax: str
    ours: str
    cause: str = ""


@dataclasses.dataclass
class PropagationResult:
    values: int          # values of the daemon's plan of the lowered text (calls inlined)
    compared: int        # ... with a counterpart in JAX's module
    agree: int           # ... and the same sharding
    merged: int          # compared to a value JAX keeps once (duplicates of one computation)
    diffs: list          # Diff per value not agreeing or without a counterpart, with its cause
    sig_values: int
    sig_agree: int
    sig_diffs: list
    xla_values: int      # on XLA's own input (01): values aligned op by op with 02
    xla_agree: int
    xla_diffs: list
    warnings: list       # the plan's warnings (the daemon's)
    xla_warnings: list   # the warnings of the plan of XLA's input

    @property
    def rate(self) -> float:
        return self.agree / self.compared if self.compared else 1.0


def compile_with_dump(lowered, dump_dir: str):
    compiled = lowered.compile(compiler_options={"xla_dump_to": dump_dir,
                                                 "xla_dump_hlo_pass_re": "shardy"})
    mods = sorted(glob.glob(os.path.join(dump_dir, "shardy", "*")))
    if not mods:
        raise RuntimeError(f"XLA wrote no Shardy dump under {dump_dir}")
    return compiled, mods[-1]


def _named(mesh, spec):
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*[d or None for d in spec]))


# Why a value of the plan of the lowered text has no counterpart in XLA's module.
NO_COUNTERPART = {
    "const": "constant expression: XLA's HLO simplifier folds or rewrites it before Shardy runs "
             "(no value of its module computes it)",
    "view": "reshape: XLA merges a chain of reshapes (unit-dimension broadcasts included) into "
            "another one; the value they reshape is compared",
    "transpose": "intermediate transpose: XLA merges consecutive transposes into one",
    "chlo": "chlo op: XLA expands it into stablehlo ops and its result was not found",
}


def _no_counterpart_cause(g, n, matched: set) -> str:
    if n.op == "view" and (n.root in matched or not n.const):
        return NO_COUNTERPART["view"]
    if n.op == "stablehlo.transpose" and any(g.nodes[u].op == "stablehlo.transpose"
                                             for u in n.users):
        return NO_COUNTERPART["transpose"]
    if n.const:
        return NO_COUNTERPART["const"]
    if n.op.startswith("chlo."):
        return NO_COUNTERPART["chlo"]
    return "unexplained"


def _align(theirs, ours):
    """Pairs of values (JAX's, ours) of two modules that list the same ops, matched by op
    sequence, then the leftovers paired in order per op name (the splitter's copies of a
    constant expression come op by op in JAX's Shardy, expression by expression in
    shardplan's: the same values in another order). Returns (pairs, unpaired JAX values,
    unpaired values of ours)."""
    sm = difflib.SequenceMatcher(None, [v.op for v in theirs], [v.op for v in ours],
                                 autojunk=False)
    pairs, only_theirs, only_ours = [], [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            pairs += list(zip(theirs[i1:i2], ours[j1:j2]))
        else:
            only_theirs += theirs[i1:i2]
            only_ours += ours[j1:j2]
    left_t, left_o = [], list(only_ours)
    for t in only_theirs:
        o = next((o for o in left_o if o.op == t.op), None)
        if o is None:
            left_t.append(t)
        else:
            left_o.remove(o)
            pairs.append((t, o))
    return pairs, left_t, left_o


def check_propagation(lowered, mesh, client) -> PropagationResult:
    """Check 1 for one lowered function; `client` plans (a shardplan.Client on the daemon)."""
    from corpus import correspond
    with tempfile.TemporaryDirectory() as d:
        compiled, mod = compile_with_dump(lowered, d)
        before = open(os.path.join(mod, "01.before_propagation.mlir")).read()
        after = open(os.path.join(mod, "02.after_propagation.mlir")).read()
    plan = client.plan(lowered.as_text(), search=False, filename="lowered.mlir")

    # The lowered text, every value of ours matched to JAX's or given a reason.
    ours, theirs = correspond.graphs(plan.module_sdy, after)
    c = correspond.correspond(ours, theirs)
    diffs = []
    agree = 0
    for o, t in c.pairs:
        on, tn = ours.nodes[o], theirs.nodes[t]
        if on.spec == tn.spec:
            agree += 1
        else:
            diffs.append(Diff(on.where, f"{sdy_text.spec_str(tn.spec)} ({tn.where})",
                              sdy_text.spec_str(on.spec), "sharding"))
    matched = {o for o, _ in c.pairs}
    for o in c.unmatched:
        on = ours.nodes[o]
        diffs.append(Diff(on.where, "(no counterpart)", sdy_text.spec_str(on.spec),
                          _no_counterpart_cause(ours, on, matched)))
    values = sum(1 for n in ours.nodes if n.counted)

    # XLA's own input through the daemon, op by op.
    xplan = client.plan(before, search=False, filename="01.before_propagation.mlir")
    tv = sdy_text.module_values(after)
    ov = sdy_text.module_values(xplan.module_sdy)
    pairs, only_t, only_o = _align(tv, ov)
    xdiffs = [Diff(o.where, sdy_text.spec_str(t.spec), sdy_text.spec_str(o.spec), "sharding")
              for t, o in pairs if t.spec != o.spec]
    xdiffs += [Diff(v.where, "(absent)", sdy_text.spec_str(v.spec), "unexplained")
               for v in only_o]
    xdiffs += [Diff(v.where, sdy_text.spec_str(v.spec), "(absent)", "unexplained")
               for v in only_t]
    xtotal = len(pairs) + len(only_t) + len(only_o)

    # Arguments and results: the plan of JAX's lowered text vs what the executable reports
    # (compared as device assignments, so GSPMD and named shardings compare alike).
    args, results = sdy_text.func_signature_specs(plan.module_sdy, "main")
    jin = jax.tree_util.tree_leaves(compiled.input_shardings[0])
    jout = jax.tree_util.tree_leaves(compiled.output_shardings)
    in_nd = [a.ndim for a in jax.tree_util.tree_leaves(lowered.in_avals)]
    out_nd = [a.ndim for a in jax.tree_util.tree_leaves(lowered.out_info)]
    sig_diffs = []
    sig = [(f"arg {i}", j, o, n) for i, (j, o, n) in enumerate(zip(jin, args, in_nd))]
    sig += [(f"result {i}", j, o, n) for i, (j, o, n) in enumerate(zip(jout, results, out_nd))]
    if len(jin) != len(args) or len(jout) != len(results):
        sig_diffs.append(Diff("signature", f"{len(jin)} args, {len(jout)} results",
                              f"{len(args)} args, {len(results)} results", "unexplained"))
    for where, j, o, nd in sig:
        if not j.is_equivalent_to(_named(mesh, o), nd):
            js = spec_of_sharding(j)
            sig_diffs.append(Diff(where, str(j) if js is None else sdy_text.spec_str(js),
                                  sdy_text.spec_str(o), "sharding"))
    return PropagationResult(values, len(c.pairs), agree, len(c.merged), diffs, len(sig),
                             len(sig) - len(sig_diffs), sig_diffs, xtotal,
                             xtotal - len(xdiffs), xdiffs, list(plan.warnings),
                             list(xplan.warnings))


# ---------------------------------------------------------------- check 2: the plan runs


@dataclasses.dataclass
class RunResult:
    allclose: bool
    max_abs_err: float
    shardings_as_planned: int     # arguments and results whose compiled sharding is planned
    shardings_total: int
    mismatches: list
    sharded_values: int           # values of the plan with at least one sharded dimension
    values: int
    plan_seconds: float


def check_run(case, planned, plan, ref_out, plan_seconds: float) -> RunResult:
    import numpy as np
    out = planned(*case.args)
    leaves_o = jax.tree_util.tree_leaves(out)
    leaves_r = jax.tree_util.tree_leaves(ref_out)
    ok, err = len(leaves_o) == len(leaves_r), 0.0
    for a, b in zip(leaves_o, leaves_r):
        a, b = np.asarray(a), np.asarray(b)
        if a.size:
            err = max(err, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
        ok = ok and a.shape == b.shape and np.allclose(a, b, rtol=case.rtol, atol=case.atol)
    mism = []
    jin = jax.tree_util.tree_leaves(planned.input_shardings)
    jout = jax.tree_util.tree_leaves(planned.output_shardings)
    in_nd = [a.ndim for a in jax.tree_util.tree_leaves(case.args)]
    out_nd = [np.ndim(a) for a in leaves_o]
    pairs = list(zip(plan.arg_paths, jin, plan.arg_values, in_nd)) + \
        list(zip(plan.result_paths, jout, plan.result_values, out_nd))
    for path, j, v, nd in pairs:
        if not j.is_equivalent_to(_named(case.mesh, v.spec), nd):
            mism.append(Diff(path, str(getattr(j, "spec", j)), str(v.partition_spec)))
    sharded = sum(1 for v in plan.values if v.spec)
    return RunResult(ok, err, len(pairs) - len(mism), len(pairs), mism, sharded,
                     len(plan.values), plan_seconds)


# ---------------------------------------------------------------- check 3: communication

_COLL = re.compile(r"=\s*(\([^=]*?\)|[a-z0-9]+\[[0-9,]*\](?:\{[^}]*\})?)\s+"
                   r"(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
                   r"(-start)?\((.*)$")
_SHAPE = re.compile(r"([a-z]+[0-9]*)\[([0-9,]*)\]")
_BITS = {"pred": 8, "s8": 8, "u8": 8, "s16": 16, "u16": 16, "f16": 16, "bf16": 16, "s32": 32,
         "u32": 32, "f32": 32, "s64": 64, "u64": 64, "f64": 64, "c64": 64, "c128": 128}


def _shape_bytes(text: str) -> float:
    total = 0.0
    for ty, dims in _SHAPE.findall(text):
        n = 1
        for d in dims.split(","):
            if d:
                n *= int(d)
        total += n * _BITS.get(ty, 32) / 8
    return total


def _group_size(rest: str) -> int:
    m = re.search(r"replica_groups=mesh\[([^\]]*)\][^{]*\{([^}]*)\}", rest)
    if m:  # replica_groups=mesh['axis_0'=4,'axis_1'=2] {'axis_1'}
        sizes = dict((k.strip("' "), int(v)) for k, v in
                     (kv.split("=") for kv in m.group(1).split(",")))
        n = 1
        for a in m.group(2).split(","):
            n *= sizes.get(a.strip("' "), 1)
        return n
    m = re.search(r"replica_groups=\[(\d+),(\d+)\]<=", rest)
    if m:
        return int(m.group(2))
    m = re.search(r"replica_groups=\{\{([0-9,]*)\}", rest)
    if m:
        return len(m.group(1).split(","))
    return 1


@dataclasses.dataclass
class HloCollective:
    kind: str
    bytes: float     # B as the planner's model counts it (see cost_model.h)
    group: int


def hlo_collectives(hlo_text: str) -> list:
    """The collectives of a compiled (partitioned) HLO module with B, the bytes of the whole
    tensor the group moves as the planner counts them: all-reduce the reduced buffer,
    all-gather its result, reduce-scatter its operand, all-to-all the group's whole tensor
    (operand x group size), collective-permute its operand."""
    out = []
    for line in hlo_text.splitlines():
        m = _COLL.search(line)
        if not m or "-done" in line.split("=")[0]:
            continue
        result, kind, _, rest = m.groups()
        operands = rest.split(")")[0]
        n = _group_size(rest)
        res_b, op_b = _shape_bytes(result), _shape_bytes(operands)
        b = {"all-reduce": res_b, "all-gather": res_b, "reduce-scatter": op_b or res_b * n,
             "all-to-all": (op_b or res_b) * n, "collective-permute": op_b or res_b}[kind]
        out.append(HloCollective(kind, b, n))
    return out


# Bytes one device sends (= receives) in the ring algorithms the planner's alpha-beta model
# prices (server/search/cost_model.h), for a group of n devices and B as above: the model's
# bandwidth term times the bandwidth. An all-reduce moves twice what a reduce-scatter of the
# same B does; an all-slice moves nothing.
MOVED = {"all-gather": lambda n, b: (n - 1) / n * b,
         "reduce-scatter": lambda n, b: (n - 1) / n * b,
         "all-reduce": lambda n, b: 2 * (n - 1) / n * b,
         "all-to-all": lambda n, b: (n - 1) / (n * n) * b,
         "collective-permute": lambda n, b: b,
         "all-slice": lambda n, b: 0.0}


def moved_bytes(kind: str, n: int, b: float) -> float:
    return MOVED[kind](n, b) if n > 1 else 0.0


@dataclasses.dataclass
class CommResult:
    predicted: dict          # kind -> [count, B, moved bytes per device]
    real: dict               # the same for the compiled HLO
    predicted_moved: float   # bytes per device, summed over the collectives
    real_moved: float
    ratio: Optional[float]   # predicted_moved / real_moved; None when both are zero
    user: int                # collectives the program writes itself, left out of both

    @property
    def kinds_agree(self) -> bool:
        """Every kind carries the same B on both sides (within 1%, or 8 bytes: a scalar's
        reduction). Counts may differ: XLA's all-reduce combiner runs several reductions as
        one tuple-shaped all-reduce."""
        for k in set(self.predicted) | set(self.real):
            p = self.predicted.get(k, [0, 0.0, 0.0])[1]
            r = self.real.get(k, [0, 0.0, 0.0])[1]
            if abs(p - r) > max(8.0, 0.01 * r):
                return False
        return True


def mesh_axis_sizes(module_text: str) -> dict:
    """{axis: size} of the module's sdy.mesh ops (the first mesh that names an axis wins)."""
    sizes: dict = {}
    for m in re.finditer(r"sdy\.mesh @[\w.$-]+ = <\[([^\]]*)\]", module_text):
        for name, size in re.findall(r'"([^"]+)"=(\d+)', m.group(1)):
            sizes.setdefault(name, int(size))
    return sizes


def group_size(axes, sizes: dict) -> int:
    """Devices in one group of a collective over `axes` ('"x"', '"x":(2)4' for a sub-axis)."""
    n = 1
    for a in axes:
        m = re.fullmatch(r'"?([^":]+)"?(?::\((\d+)\)(\d+))?', a.strip())
        n *= int(m.group(3)) if m and m.group(3) else sizes.get(m.group(1) if m else a, 1)
    return n


_USER_COLL = re.compile(r"stablehlo\.(all_reduce|all_gather|reduce_scatter|all_to_all|"
                        r"collective_permute)\b.*?->\s*(tensor<[^>]*>)", re.S)
_MLIR_BITS = {"i1": 8, "i8": 8, "i16": 16, "f16": 16, "bf16": 16, "i32": 32, "f32": 32,
              "i64": 64, "f64": 64}


def user_collectives(module_text: str) -> list:
    """Collectives the program writes itself (shard_map's psum and the like, inside
    sdy.manual_computation): they are in the input, not chosen by the planner."""
    out = []
    for m in _USER_COLL.finditer(module_text):
        parts = m.group(2)[len("tensor<"):-1].split("x")
        n = 1
        for d in parts[:-1]:
            n *= int(d)
        out.append((m.group(1).replace("_", "-"), n * _MLIR_BITS.get(parts[-1], 32) / 8))
    return out


def _tally(items) -> tuple[dict, float]:
    out: dict = {}
    total = 0.0
    for kind, n, b in items:
        e = out.setdefault(kind, [0, 0.0, 0.0])
        mv = moved_bytes(kind, n, b)
        e[0] += 1
        e[1] += b
        e[2] += mv
        total += mv
    return out, total


def check_comm(plan, compiled_text: str) -> CommResult:
    """The plan's collectives vs the compiled module's, per kind, with the bytes each device
    moves (MOVED), less the collectives the program writes itself (matched by kind and size)."""
    real = hlo_collectives(compiled_text)
    user = 0
    for kind, b in user_collectives(plan.module_sdy):
        for i, c in enumerate(real):
            if c.kind == kind and abs(c.bytes - b) < 1:
                del real[i]
                user += 1
                break
    sizes = mesh_axis_sizes(plan.module_sdy)
    pk, pm = _tally((c.kind, group_size(c.axes, sizes), c.bytes)
                    for c in plan.communicating_collectives())
    rk, rm = _tally((c.kind, c.group, c.bytes) for c in real)
    ratio = None if pm == 0 and rm == 0 else (pm / rm if rm else float("inf"))
    return CommResult(pk, rk, pm, rm, ratio, user)


def price_collectives(colls, cluster_path: str) -> float:
    """Seconds for HLO collectives under the planner's alpha-beta model on one link kind (the
    single-machine cluster files the corpus uses)."""
    import json
    c = json.load(open(cluster_path))
    link = c["machines"][0]["link"]
    alpha, bw = link["latency"], link["bandwidth"]
    t = 0.0
    for x in colls:
        n = max(x.group, 1)
        if n <= 1:
            continue
        f = {"all-reduce": 2 * (n - 1) / n, "all-gather": (n - 1) / n,
             "reduce-scatter": (n - 1) / n, "all-to-all": (n - 1) / n / n,
             "collective-permute": 1.0}[x.kind]
        t += alpha + f * x.bytes / bw
    return t


def assert_planned_conservatively(plan, needle: str, warning: Optional[str]) -> None:
    """An op without a sharding rule (found by `needle` in its line of @main) is kept in the
    plan, reads its operands and writes its results replicated, and is named by `warning` in
    the plan's warnings (None: Shardy is silent about it on purpose, and so is the plan)."""
    ops = sdy_text.op_layouts(plan.module_sdy, needle)
    assert ops, f"{needle}: dropped from the plan"
    for line, operands, results in ops:
        assert all(s == () for s in operands + results), \
            f"{needle}: planned {operands} -> {results}, not replicated: {line}"
    named = [w for w in plan.warnings if "unknown to SDY sharding rule registry" in w]
    if warning:
        assert any(warning in w for w in named), f"{needle}: no warning {warning!r}: {named}"
    else:
        assert not named, f"{needle}: unexpected warnings {named}"


# ---------------------------------------------------------------- the tables (tests and bench)

CHECK1 = ("Check 1: propagation vs JAX's Shardy (the daemon's propagation-only plan of the "
          "lowered text vs 02.after_propagation.mlir; @main vs compiled.input/output_shardings; "
          "the plan of XLA's input 01 vs 02)",
          ["model", "values", "compared", "agree", "rate", "no counterpart (cause)",
           "@main agree", "on XLA's input (01)"])
CHECK2 = ("Check 2: the searched plan run on 8 CPU devices",
          ["model", "allclose", "max abs err", "@main shardings as planned", "sharded values",
           "axes used", "plan+compile s"])
CHECK3 = ("Check 3: predicted vs compiled collectives (per kind: count, B as in cost_model.h; "
          "moved = bytes one device sends, summed; the ratio is of moved bytes)",
          ["model", "predicted", "compiled HLO", "predicted moved", "HLO moved",
           "B per kind agrees", "ratio"])


CHECK1_DIFFS = ("Check 1: every value of the plan not compared or not agreeing, and why",
                ["model", "value", "JAX", "shardplan", "cause"])


def check1_diff_row(name: str, d: Diff) -> tuple:
    return (name, d.where.replace("|", "/"), d.jax.replace("|", "/"), d.ours, d.cause)


def check1_row(name: str, r: PropagationResult) -> tuple:
    causes: dict = {}
    for d in r.diffs:
        if d.jax == "(no counterpart)":
            k = d.cause.split(":")[0]
            causes[k] = causes.get(k, 0) + 1
    return (name, str(r.values), str(r.compared), str(r.agree), f"{100 * r.rate:.1f}%",
            "; ".join(f"{n} {k}" for k, n in sorted(causes.items())) or "none",
            f"{r.sig_agree}/{r.sig_values}", f"{r.xla_agree}/{r.xla_values}")


def axes_used(plan, mesh) -> list:
    """The mesh axes the planned module shards something over (values or reshards)."""
    body = plan.module_sdy.split("func.func", 1)[1]
    return [a for a in mesh.axis_names if f'"{a}"' in body]


def check2_row(name: str, r: RunResult, axes: list, secs: float) -> tuple:
    return (name, "yes" if r.allclose else "NO", f"{r.max_abs_err:.2e}",
            f"{r.shardings_as_planned}/{r.shardings_total}", f"{r.sharded_values}/{r.values}",
            ", ".join(axes) or "none", f"{secs:.1f}")


def check3_row(name: str, c: CommResult) -> tuple:
    def fmt(d):
        return ", ".join(f"{v[0]} {k} ({v[1]:.0f} B)" for k, v in sorted(d.items())) or "none"
    return (name, fmt(c.predicted), fmt(c.real) + (f"; {c.user} written by the program"
                                                     if c.user else ""),
            f"{c.predicted_moved:.0f}", f"{c.real_moved:.0f}", "yes" if c.kinds_agree else "NO",
            "-" if c.ratio is None else f"{c.ratio:.2f}")


def markdown_table(header: list, rows: list) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in sorted(rows)]
    return "\n".join(out) + "\n"
