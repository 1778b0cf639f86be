"""Reading shardings out of Shardy's textual form (StableHLO + sdy), value by value.

`module_values(text)` lists every value of the module in text order: each func's arguments,
then every op result in the order the ops appear (regions included), then the func's results,
each with its sharding normalised to a `Spec`: per dimension the tuple of mesh axes (sub-axes
kept as written, `"x":(1)2`), open/closed marks, priorities and `replicated={...}` dropped. A
value with no sharding has the empty spec (fully replicated), so two specs compare equal exactly
when they shard the same dimensions along the same axes.

This is a reader of the printed form both JAX's Shardy and shardplan-opt produce, not an MLIR
parser: it relies on one op per line, as both print.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

Spec = tuple  # tuple of per-dimension tuples of axis names; () for no sharding


def _match(text: str, i: int, open_c: str, close_c: str) -> int:
    """Index just past the bracket that closes text[i] (== open_c), skipping strings."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced {open_c}{close_c} in {text[:80]!r}")


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split at separators outside brackets and strings."""
    out, depth, cur, i = [], 0, [], 0
    while i < len(s):
        c = s[i]
        if c == '"':
            j = s.index('"', i + 1)
            cur.append(s[i:j + 1])
            i = j + 1
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        out.append("".join(cur))
    return out


_DIM = re.compile(r'\{([^{}]*)\}')


def parse_sharding(s: str) -> tuple[str, Spec]:
    """`<@mesh, [{"a"}, {"b", ?}p1], replicated={"c"}>` (the part after #sdy.sharding) ->
    (mesh name, spec). An inline mesh gives the mesh name ''."""
    s = s.strip()
    assert s.startswith("<"), s
    body = s[1:_match(s, 0, "<", ">") - 1].strip()
    if body.startswith("@"):
        m = re.match(r"@([\w.$-]+)\s*,\s*", body)
        mesh, rest = m.group(1), body[m.end():]
    else:  # mesh<[...]> or an inline <[...]>
        j = body.index("<")
        end = _match(body, j, "<", ">")
        mesh, rest = "", body[end:].lstrip(" ,")
    end = _match(rest, 0, "[", "]")
    dims = []
    for d in _DIM.findall(rest[1:end - 1]):
        axes = tuple(a.strip() for a in _split_top(d) if a.strip() and a.strip() != "?")
        dims.append(tuple(a.replace('"', "") for a in axes))
    return mesh, normalise(tuple(dims))


def normalise(dims) -> Spec:
    """Drop trailing unsharded dimensions: () means fully replicated whatever the rank."""
    dims = [tuple(d) for d in dims]
    while dims and not dims[-1]:
        dims.pop()
    return tuple(dims)


def spec_str(spec: Spec) -> str:
    if not spec:
        return "replicated"
    return "[" + ", ".join("{" + ",".join(d) + "}" for d in spec) + "]"


@dataclasses.dataclass
class Value:
    kind: str      # "arg", "result" (of an op) or "return" (a func result)
    where: str     # "@main arg 3", "%12 = stablehlo.dot_general", "@main result 0"
    op: str        # op name, "func.func" for arguments and results
    spec: Spec


def _attr_sharding(attrs: str) -> Optional[Spec]:
    k = attrs.find("sdy.sharding = #sdy.sharding<")
    if k < 0:
        return None
    return parse_sharding(attrs[k + len("sdy.sharding = #sdy.sharding"):])[1]


def _func_values(line: str, out: list[Value]) -> None:
    name = re.search(r"func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)", line).group(1)
    lp = line.index("(", line.index("@" + name))
    rp = _match(line, lp, "(", ")")
    for i, a in enumerate(_split_top(line[lp + 1:rp - 1])):
        out.append(Value("arg", f"@{name} arg {i}", "func.func", _attr_sharding(a) or ()))
    rest = line[rp:]
    results = []
    if rest.lstrip().startswith("->"):
        r = rest[rest.index("->") + 2:].lstrip()
        if r.startswith("("):
            results = _split_top(r[1:_match(r, 0, "(", ")") - 1])
        else:  # one result, then maybe `attributes {...}` and the body's `{`
            results = [r.split(" attributes ")[0].rstrip(" {")]
    return [(name, i, res) for i, res in enumerate(results)]


_INLINE = re.compile(r"sdy\.(?:reshard|sharding_constraint)\s+%[\w#.$-]+\s+<")
_RESULTS = re.compile(r"^\s*((?:%[\w#.$-]+(?::\d+)?\s*,\s*)*%[\w#.$-]+(?::\d+)?)\s*=\s*\"?([\w.]+)")


def module_values(text: str, funcs: Optional[set] = None) -> list[Value]:
    """Every value of every func (or of the named funcs) in text order."""
    out: list[Value] = []
    pending_returns: list = []
    cur = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("func.func"):
            cur = re.search(r"@([\w.$-]+)", s).group(1)
            if funcs is None or cur in funcs:
                pending_returns = _func_values(s, out)
            continue
        if funcs is not None and cur not in funcs:
            continue
        if s.startswith("return ") or s.startswith("func.return") or s == "return":
            for name, i, res in pending_returns:
                out.append(Value("return", f"@{name} result {i}", "func.func",
                                 _attr_sharding(res) or ()))
            pending_returns = []
            continue
        m = _RESULTS.match(line)
        if not m:
            continue
        names = [n.strip() for n in m.group(1).split(",")]
        count = sum(int(n.split(":")[1]) if ":" in n else 1 for n in names)
        op = m.group(2)
        k = line.find("sdy.sharding = #sdy.sharding_per_value<[")
        specs: list[Spec] = [()] * count
        inline = _INLINE.search(line) if op in ("sdy.reshard", "sdy.sharding_constraint") \
            else None
        if inline:  # `%1 = sdy.reshard %0 <@mesh, [...]> : type`: the sharding it gives
            specs = [parse_sharding(line[inline.end() - 1:])[1]]
        elif k >= 0:
            j = k + len("sdy.sharding = #sdy.sharding_per_value<")
            lst = line[j:_match(line, j, "[", "]")]
            items = _split_top(lst[1:-1])
            specs = [parse_sharding(it)[1] for it in items]
        for r, spec in enumerate(specs):
            out.append(Value("result", f"{names[0]}#{r} = {op}" if count > 1 else f"{names[0]} = {op}",
                             op, spec))
    return out


def func_signature_specs(text: str, func: str = "main") -> tuple[list[Spec], list[Spec]]:
    """The argument and result shardings of one func."""
    vals = module_values(text, {func})
    return ([v.spec for v in vals if v.kind == "arg"], [v.spec for v in vals if v.kind == "return"])


def op_layouts(text: str, needle: str, func: str = "main") -> list[tuple[str, list, list]]:
    """For each op of `func` whose line contains `needle` (`custom_call @foo`, `chlo.top_k`):
    (its line, the specs of its operands as their values are sharded, the specs of its
    results). An operand that is not a value of the function (a constant folded away) is left
    out."""
    specs: dict = {}
    cur, out = None, []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("func.func"):
            cur = re.search(r"@([\w.$-]+)", s).group(1)
            if cur == func:
                names = re.findall(r"(%[\w.$-]+):", s[:s.index("->")] if "->" in s else s)
                vals = [v for v in module_values(line + "\n}", {func}) if v.kind == "arg"]
                specs.update({n: v.spec for n, v in zip(names, vals)})
            continue
        if cur != func:
            continue
        m = _RESULTS.match(line)
        if not m:
            continue
        vals = module_values(f"func.func @{func}() {{\n{line}\n}}", {func})
        names = [n.strip() for n in m.group(1).split(",")]
        if len(names) == 1 and len(vals) > 1:  # %0:2 = ... -> %0#0, %0#1
            base = names[0].split(":")[0]
            names = [f"{base}#{i}" for i in range(len(vals))]
        results = [v.spec for v in vals]
        specs.update(zip(names, results))
        if needle in line:
            rhs = line.split("=", 1)[1]
            operands = [specs[n] for n in re.findall(r"%[\w.$-]+(?:#\d+)?", rhs) if n in specs]
            out.append((s, operands, results))
    return out
