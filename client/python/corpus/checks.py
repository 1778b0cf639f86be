"""The corpus checks, shared by the pytest suite and the benchmark.

Check 1 (propagation agrees with JAX): JAX's compiler runs the real Shardy. With XLA's
debug options `xla_dump_to=DIR` and `xla_dump_hlo_pass_re=shardy`, XLA writes the MLIR modules
of its Shardy pipeline under DIR/shardy/<module>/: 01.before_propagation.mlir (what propagation
starts from, after XLA's import) and 02.after_propagation.mlir (every value's sharding as
JAX's Shardy chose it). shardplan-opt -sdy-propagation-pipeline runs on the same
01.before_propagation.mlir and the two outputs are compared value by value, in text order
(both print the same ops in the same order). Separately, the shardings shardplan propagates on
JAX's lowered text (`jit(f).lower(...).as_text()`) for the arguments and results of @main are
compared with `compiled.input_shardings` / `compiled.output_shardings`.
"""
from __future__ import annotations

import dataclasses
import difflib
import glob
import os
import subprocess
import tempfile
from typing import Optional

import jax

from shardplan import sdy_text


def bin_dir() -> str:
    d = os.environ.get("SP_BIN_DIR")
    if d:
        return d
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "build", "bin"))


def shardplan_opt(text: str, *flags: str) -> tuple[str, str]:
    """Runs build/bin/shardplan-opt on text; returns (stdout, stderr); raises on failure."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        p = subprocess.run([os.path.join(bin_dir(), "shardplan-opt"), path, *flags],
                           capture_output=True, text=True, timeout=300)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        raise RuntimeError(f"shardplan-opt {' '.join(flags)} failed ({p.returncode}): "
                           f"{p.stderr.strip()[:2000]}")
    return p.stdout, p.stderr


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


@dataclasses.dataclass
class PropagationResult:
    values: int
    agree: int
    sig_values: int
    sig_agree: int
    diffs: list
    sig_diffs: list
    warnings: str

    @property
    def rate(self) -> float:
        return self.agree / self.values if self.values else 1.0


def compile_with_dump(lowered, dump_dir: str):
    compiled = lowered.compile(compiler_options={"xla_dump_to": dump_dir,
                                                 "xla_dump_hlo_pass_re": "shardy"})
    mods = sorted(glob.glob(os.path.join(dump_dir, "shardy", "*")))
    if not mods:
        raise RuntimeError(f"XLA wrote no Shardy dump under {dump_dir}")
    return compiled, mods[-1]


def _align(theirs, ours):
    """Pairs of values (JAX's, ours) matched by op sequence, plus the unmatched ones. Both sides
    list the same ops in the same order except where JAX's constant-or-scalar merger (newer
    than the conformance files) merged duplicated constant expressions that shardplan keeps."""
    sm = difflib.SequenceMatcher(None, [v.op for v in theirs], [v.op for v in ours],
                                 autojunk=False)
    pairs, only_theirs, only_ours = [], [], []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            pairs += list(zip(theirs[i1:i2], ours[j1:j2]))
        else:
            only_theirs += theirs[i1:i2]
            only_ours += ours[j1:j2]
    return pairs, only_theirs, only_ours


def _named(mesh, spec):
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*[d or None for d in spec]))


def check_propagation(lowered, mesh) -> PropagationResult:
    with tempfile.TemporaryDirectory() as d:
        compiled, mod = compile_with_dump(lowered, d)
        before = open(os.path.join(mod, "01.before_propagation.mlir")).read()
        after = open(os.path.join(mod, "02.after_propagation.mlir")).read()
    ours_text, warnings = shardplan_opt(before, "-sdy-propagation-pipeline")
    theirs = sdy_text.module_values(after)
    ours = sdy_text.module_values(ours_text)
    pairs, only_theirs, only_ours = _align(theirs, ours)
    diffs = [Diff(t.where, sdy_text.spec_str(t.spec), sdy_text.spec_str(o.spec))
             for t, o in pairs if t.spec != o.spec]
    diffs += [Diff(v.where, "(merged away)", "kept: " + sdy_text.spec_str(v.spec))
              for v in only_ours]
    diffs += [Diff(v.where, "kept: " + sdy_text.spec_str(v.spec), "(absent)")
              for v in only_theirs]
    total = len(pairs) + len(only_ours) + len(only_theirs)

    # Arguments and results: our propagation of JAX's own lowered text vs what the executable
    # reports (compared as device assignments, so GSPMD and named shardings compare alike).
    sig_text, _ = shardplan_opt(lowered.as_text(), "-sdy-propagation-pipeline")
    args, results = sdy_text.func_signature_specs(sig_text, "main")
    jin = jax.tree_util.tree_leaves(compiled.input_shardings[0])
    jout = jax.tree_util.tree_leaves(compiled.output_shardings)
    in_nd = [a.ndim for a in jax.tree_util.tree_leaves(lowered.in_avals)]
    out_nd = [a.ndim for a in jax.tree_util.tree_leaves(lowered.out_info)]
    sig_diffs = []
    pairs = [(f"arg {i}", j, o, n) for i, (j, o, n) in enumerate(zip(jin, args, in_nd))]
    pairs += [(f"result {i}", j, o, n) for i, (j, o, n) in enumerate(zip(jout, results, out_nd))]
    if len(jin) != len(args) or len(jout) != len(results):
        sig_diffs.append(Diff("signature", f"{len(jin)} args, {len(jout)} results",
                              f"{len(args)} args, {len(results)} results"))
    for where, j, o, nd in pairs:
        if not j.is_equivalent_to(_named(mesh, o), nd):
            js = spec_of_sharding(j)
            sig_diffs.append(Diff(where, str(j) if js is None else sdy_text.spec_str(js),
                                  sdy_text.spec_str(o)))
    return PropagationResult(total, total - len(diffs), len(pairs),
                             len(pairs) - len(sig_diffs), diffs, sig_diffs, warnings.strip())
