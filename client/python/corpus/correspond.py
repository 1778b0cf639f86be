"""Which value of XLA's module is which value of JAX's lowered text (check 1).

JAX's Shardy does not propagate on the text `jax.jit(f).lower(...).as_text()`: XLA first turns
it into HLO and back (DIR/shardy/<module>/00.input_module.mlir, 01.before_propagation.mlir), and
that round trip rewrites the module:
- every func.call is inlined (one copy of the callee per call);
- dot_general without batch dimensions becomes stablehlo.dot;
- a broadcast_in_dim that also expands unit dimensions becomes reshape -> broadcast (identity)
  -> reshape -> broadcast_in_dim;
- chlo ops are expanded into stablehlo ops (erf and top_k become mhlo.erf and mhlo.topk);
- operands of commutative ops may swap.
The daemon plans the lowered text as it is, so comparing the two value by value needs a map.
`correspond(ours, theirs)` builds it from the two parsed modules (JAX's own MLIR bindings) in
two steps:
1. Structural keys: a value's key is its canonical op, result type, a few op attributes and the
   keys of its operands (sorted for commutative ops), computed with calls inlined and the
   rewrites above undone (unit-dimension reshapes and identity broadcasts are looked through,
   dot and dot_general are one op, mhlo.X is chlo.X). Values with equal keys compute the same
   tensor; duplicates on one side (a split constant expression JAX's merger merged) map to the
   other side's copies in order, the surplus to the last copy.
2. Neighbours, to a fixed point: an unmatched value whose op and type match a value of the other
   side whose operands are the images of its matched operands is matched (same computation, an
   operand rewritten upstream); an unmatched operand of a matched pair's op is matched to the
   other op's operand at the same place when the types agree (how a chlo op's result finds the
   last op of XLA's expansion).
What stays unmatched is reported with its op, never silently dropped.

Values are the ones check 1 counts: @main's arguments and results, and every op result (a
callee's results once per call, as XLA inlines them). Block arguments (loop-carried values)
carry no sharding of their own and are not counted.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from shardplan import sdy_text

COMMUTATIVE = {"stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum",
               "stablehlo.and", "stablehlo.or", "stablehlo.xor"}
ALIASES = {"stablehlo.dot": "stablehlo.dot_general", "sdy.constant": "constant",
           "stablehlo.constant": "constant", "mhlo.topk": "chlo.top_k"}
# x op e == x for these identity elements (XLA's algebraic simplifier removes such ops).
IDENTITY = {"stablehlo.add": 0.0, "stablehlo.subtract": 0.0, "stablehlo.multiply": 1.0,
            "stablehlo.divide": 1.0, "stablehlo.and": "true", "stablehlo.or": "false"}
SCALAR_BODIES = {"stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter",
                 "stablehlo.select_and_scatter", "stablehlo.sort", "stablehlo.all_reduce",
                 "stablehlo.reduce_scatter"}
# Attributes that tell apart ops of one kind with the same operands and result type.
KEY_ATTRS = {"constant": ("value",), "stablehlo.iota": ("iota_dimension",),
             "stablehlo.compare": ("comparison_direction",),
             "stablehlo.slice": ("start_indices", "limit_indices", "strides"),
             "stablehlo.reduce": ("dimensions",),
             "stablehlo.dynamic_slice": ("slice_sizes",), "stablehlo.concatenate": ("dimension",),
             "stablehlo.pad": ("edge_padding_low", "edge_padding_high", "interior_padding"),
             "stablehlo.custom_call": ("call_target_name",), "stablehlo.gather": ("slice_sizes",),
             "stablehlo.reduce_window": ("window_dimensions", "window_strides")}


@dataclasses.dataclass
class Node:
    index: int
    kind: str             # "arg", "result" (of an op), "return" (of @main), "block" (region arg)
    where: str            # "@main arg 0", "%3 = stablehlo.add", "@relu: %1 = stablehlo.maximum"
    op: str               # canonical op: "func.func" (args, returns), "view" (see below), ...
    type: str
    spec: tuple           # sdy_text spec; () = replicated
    operands: list        # Node indices
    key: int = -1
    root: int = -1        # a view (or call result) looks through to this node; else itself
    const: bool = False   # a constant expression (constants, iotas, ops of those only)
    sig: tuple = ()       # the op attributes that tell apart ops of one kind (KEY_ATTRS)
    tsrc: int = -1        # a transpose (or a chain of them): the value transposed
    tmap: tuple = ()      # ... and for each result dimension, the dimension of tsrc it is
    users: list = dataclasses.field(default_factory=list)

    @property
    def counted(self) -> bool:
        return self.kind != "block"


def canon(name: str) -> str:
    name = ALIASES.get(name, name)
    if name.startswith("mhlo."):
        return "chlo." + name[len("mhlo."):]
    return name


def _dims(ty: str) -> Optional[list]:
    if not ty.startswith("tensor<"):
        return None
    parts = ty[len("tensor<"):-1].split("x")
    try:
        return [int(p) for p in parts[:-1]]
    except ValueError:
        return None


def _unit_view(a: str, b: str) -> bool:
    """Types a and b hold the same elements in the same order up to unit dimensions."""
    da, db = _dims(a), _dims(b)
    if da is None or db is None or a.rsplit("x", 1)[-1] != b.rsplit("x", 1)[-1]:
        return False
    return [d for d in da if d != 1] == [d for d in db if d != 1]


class Graph:
    """The values of one module's @main, calls inlined, with their shardings and keys.

    A *view* is a reshape (any: row-major order is kept, so a chain of them is one reshape of
    the first value), or a broadcast_in_dim, transpose or convert that changes nothing but unit
    dimensions (or nothing at all): its `root` is the value it views, and a view with its
    root's type is the root itself as far as keys go. A call result's root is the value the
    callee returns. Step 2 of `correspond` compares operands through their roots."""

    def __init__(self, module_text: str, ctx, keys: dict):
        from jax._src.lib.mlir import ir
        self.ir = ir
        with ctx:
            self.module = ir.Module.parse(module_text)
        self.funcs = {}
        for op in self.module.body.operations:
            if op.operation.name == "func.func":
                self.funcs[ir.StringAttr(op.attributes["sym_name"]).value] = op
        self.nodes: list[Node] = []
        self.by_key: dict = {}        # key -> node indices, in text order
        self.views: dict = {}         # key of a root -> view nodes of a root with that key
        self._keys = keys             # shared by the graphs compared: equal ids, equal keys
        self.splat: dict = {}         # node index -> the value every element has (constants)
        main = self.funcs["main"]
        entry = main.regions[0].blocks[0]
        env = {}
        arg_attrs = main.attributes["arg_attrs"] if "arg_attrs" in main.attributes else None
        for i, a in enumerate(entry.arguments):
            spec = self._attr_spec(arg_attrs[i] if arg_attrs is not None else None)
            n = self._add("arg", f"@main arg {i}", "func.func", str(a.type), spec, [],
                          ("arg", i))
            env[self._vid(a)] = n
        rets = self._block(entry, env, "")
        res_attrs = main.attributes["res_attrs"] if "res_attrs" in main.attributes else None
        for i, r in enumerate(rets):
            spec = self._attr_spec(res_attrs[i] if res_attrs is not None else None)
            self._add("return", f"@main result {i}", "func.func", self.nodes[r].type, spec,
                      [r], self.nodes[r].key, root=self.nodes[r].root)

    # ---------------------------------------------------------------- reading

    @staticmethod
    def _vid(v) -> int:
        return hash(v)  # MLIR values hash by identity

    def _attr_spec(self, attrs) -> tuple:
        if attrs is None:
            return ()
        d = self.ir.DictAttr(attrs)
        if "sdy.sharding" not in d:
            return ()
        return sdy_text.parse_sharding(str(d["sdy.sharding"])[len("#sdy.sharding"):])[1]

    def _result_specs(self, op) -> list:
        n = len(op.results)
        if "sdy.sharding" not in op.attributes:
            return [()] * n
        text = str(op.attributes["sdy.sharding"])
        if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
            return [sdy_text.parse_sharding(text[len("#sdy.sharding"):])[1]]
        body = text[len("#sdy.sharding_per_value<"):-1].strip()
        items = sdy_text._split_top(body[1:-1])
        specs = [sdy_text.parse_sharding(it)[1] for it in items]
        return specs + [()] * (n - len(specs))

    def _attr_sig(self, op, name: str) -> tuple:
        out = []
        for a in KEY_ATTRS.get(name, ()):
            if a in op.attributes:
                out.append(str(op.attributes[a]))
        if name == "stablehlo.reduce":
            body = op.regions[0].blocks[0]
            out.append(tuple(o.operation.name for o in body.operations))
        return tuple(out)

    def _identity_operand(self, name: str, operands: list, ty: str) -> Optional[int]:
        """For `x op e` with e a splat of op's identity element (x + 0, x * 1, x and true):
        x, when it has the result's type."""
        if name not in IDENTITY or len(operands) != 2:
            return None
        want = IDENTITY[name]
        for k, (x, e) in enumerate((operands, operands[::-1])):
            if k and name in ("stablehlo.subtract", "stablehlo.divide"):
                break  # e - x and e / x are not x
            v = self.splat.get(e)
            if v is None or self.nodes[x].type != ty:
                continue
            try:
                same = float(v) == want if isinstance(want, float) else v == want
            except ValueError:
                same = False
            if same:
                return x
        return None

    def _static_slice(self, op, name: str, operands: list, ty: str):
        """The start offsets of a slice with unit strides, or of a dynamic_slice whose offsets
        are constants; None otherwise (and for a slice of the whole operand)."""
        if not operands or ty == self.nodes[operands[0]].type:
            return None
        if name == "stablehlo.slice":
            strides = [int(x) for x in self.ir.DenseI64ArrayAttr(op.attributes["strides"])]
            if any(x != 1 for x in strides):
                return None
            return tuple(int(x) for x in self.ir.DenseI64ArrayAttr(op.attributes["start_indices"]))
        if name == "stablehlo.dynamic_slice" and all(o in self.splat for o in operands[1:]):
            try:
                return tuple(int(float(self.splat[o])) for o in operands[1:])
            except ValueError:
                return None
        return None

    def _transpose(self, op, operand: int) -> tuple:
        """(value transposed, result dim -> its dim): a transpose of a transpose composes
        (XLA merges the two into one)."""
        perm = [int(x) for x in self.ir.DenseI64ArrayAttr(op.attributes["permutation"])]
        src = self.nodes[operand]
        if src.tsrc >= 0:
            return src.tsrc, tuple(src.tmap[p] for p in perm)
        return operand, tuple(perm)

    def _splat(self, attr) -> Optional[str]:
        """The value every element of a splat constant has, as a number ("64.0" for both
        `dense<64> : i32` and `dense<6.4e+01> : f32`, so that a convert of it compares with the
        constant XLA folds it into), or "true"/"false"; None when it is not a splat."""
        try:
            dense = self.ir.DenseElementsAttr(attr)
        except (TypeError, ValueError):
            return None
        if not dense.is_splat:
            return None
        text = str(dense.get_splat_value()).split(":")[0].strip()
        try:
            return repr(float(text))
        except ValueError:
            return text

    def _intern(self, key) -> int:
        return self._keys.setdefault(key, len(self._keys))

    def _add(self, kind, where, op, ty, spec, operands, key, root=None, const=False) -> int:
        n = len(self.nodes)
        k = key if isinstance(key, int) else self._intern(key)
        self.nodes.append(Node(n, kind, where, op, ty, spec, list(operands), k,
                               n if root is None else root, const))
        self.by_key.setdefault(k, []).append(n)
        if root is not None and root != n and ty != self.nodes[root].type:
            self.views.setdefault(self.nodes[root].key, []).append(n)
        for o in operands:
            self.nodes[o].users.append(n)
        return n

    def _block(self, block, env: dict, prefix: str) -> list:
        """Adds the block's ops; returns the node indices its terminator returns."""
        for o in block.operations:
            op = o.operation
            name = op.name
            if name in ("func.return", "stablehlo.return", "sdy.return"):
                return [env[self._vid(v)] for v in op.operands]
            operands = [env[self._vid(v)] for v in op.operands if self._vid(v) in env]
            if name == "func.call":
                self._call(op, operands, env, prefix)
                continue
            self._op(op, operands, env, prefix)
        return []

    def _call(self, op, operands, env, prefix):
        callee = self.ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        f = self.funcs[callee]
        body = f.regions[0].blocks[0]
        inner = {self._vid(a): n for a, n in zip(body.arguments, operands)}
        rets = self._block(body, inner, f"{prefix}@{callee}: ")
        specs = self._result_specs(op)
        for i, (r, v) in enumerate(zip(rets, op.results)):
            rn = self.nodes[r]
            n = self._add("result", f"{prefix}{v.get_name()} = call @{callee}", "func.call",
                          str(v.type), specs[i], [r], rn.key, root=rn.root, const=rn.const)
            env[self._vid(v)] = n

    @staticmethod
    def _loop_invariant(op) -> set:
        """Positions a while's body returns unchanged (XLA drops them from the loop)."""
        if op.name != "stablehlo.while":
            return set()
        body = op.regions[1].blocks[0]
        term = list(body.operations)[-1]
        return {j for j, (a, r) in enumerate(zip(body.arguments, term.operands)) if a == r}

    def _while(self, op, operands, env, prefix, invariant: set):
        """A while: loop-invariant positions are their operand (results and region arguments
        alike); the others are keyed by the loop's varying operands and their place among
        them, which is what survives XLA dropping the invariant ones."""
        specs = self._result_specs(op)
        varying = [j for j in range(len(operands)) if j not in invariant]
        vkeys = tuple(self.nodes[operands[j]].key for j in varying)
        for r, region in enumerate(op.regions):
            for block in region.blocks:
                for j, a in enumerate(block.arguments):
                    if j in invariant:
                        env[self._vid(a)] = operands[j]
                        continue
                    n = self._add("block", f"{prefix}{op.name} region {r} arg {j}", "block",
                                  str(a.type), (), [],
                                  ("block", "while", vkeys, r, varying.index(j)))
                    env[self._vid(a)] = n
                self._block(block, env, prefix)
        for i, v in enumerate(op.results):
            label = f"{prefix}{v.get_name()} = {op.name}"
            if i in invariant:
                src = self.nodes[self.nodes[operands[i]].root]
                n = self._add("result", label, "view", str(v.type), specs[i], [operands[i]],
                              src.key, root=src.index, const=src.const)
            else:
                n = self._add("result", label, "stablehlo.while", str(v.type), specs[i],
                              operands, ("while", str(v.type), vkeys, varying.index(i)))
            env[self._vid(v)] = n

    def _op(self, op, operands, env, prefix):
        name = canon(op.name)
        if name == "stablehlo.while":
            return self._while(op, operands, env, prefix, self._loop_invariant(op))
        specs = self._result_specs(op)
        okeys = [self.nodes[o].key for o in operands]
        const = name in ("constant", "stablehlo.iota") or \
            (bool(operands) and all(self.nodes[o].const for o in operands))
        for i, v in enumerate(op.results):
            ty = str(v.type)
            key, root, splat, kind = None, None, None, name
            if name == "constant":
                splat = self._splat(op.attributes["value"])
            elif name in ("stablehlo.reshape", "stablehlo.broadcast_in_dim") and \
                    len(operands) == 1 and operands[0] in self.splat:
                splat = self.splat[operands[0]]    # XLA folds these into the constant
            elif name == "stablehlo.convert" and len(operands) == 1 and \
                    operands[0] in self.splat:
                splat = self.splat[operands[0]]    # XLA folds the convert of a constant
            tsrc, tmap = -1, ()
            if name in ("sdy.reshard", "sdy.sharding_constraint"):
                # The same data in another sharding: operands read through it to the value it
                # reshards (XLA's import adds a reshard to the sharding a loop-invariant
                # argument already has), but its own sharding is its own.
                src = self.nodes[operands[0]]
                key, root = ("reshard", src.key, specs[i] if i < len(specs) else ()), src.root
            elif splat is not None:
                key = ("splat", ty, splat)
            elif self._identity_operand(name, operands, ty) is not None:
                src = self.nodes[self.nodes[self._identity_operand(name, operands, ty)].root]
                key, root, kind = (src.key if ty == src.type else ("view", ty, src.key),
                                   src.index, "view")
            elif name == "stablehlo.transpose":
                tsrc, tmap = self._transpose(op, operands[0])
                base = self.nodes[tsrc]
                dims, bdims = _dims(ty), _dims(base.type)
                moved = [tmap[d] for d in range(len(dims)) if dims[d] != 1]
                if moved == sorted(moved) and _unit_view(ty, base.type):
                    src = self.nodes[base.root]      # moves unit dimensions only: a view
                    key, root, kind = (src.key if ty == src.type else ("view", ty, src.key),
                                       src.index, "view")
                else:
                    key = ("transpose", ty, base.key, tuple(moved))
            elif self._static_slice(op, name, operands, ty) is not None:
                # A dynamic_slice at constant offsets is the slice XLA turns it into.
                starts = self._static_slice(op, name, operands, ty)
                key, kind = ("slice", ty, okeys[0], starts), "stablehlo.slice"
            elif name in ("stablehlo.slice", "stablehlo.dynamic_slice") and \
                    ty == self.nodes[operands[0]].type:
                src = self.nodes[self.nodes[operands[0]].root]   # the whole operand
                key, root, kind = src.key if ty == src.type else ("view", ty, src.key), \
                    src.index, "view"
            elif name in ("stablehlo.reshape", "stablehlo.broadcast_in_dim", "stablehlo.convert") \
                    and len(operands) == 1:
                src = self.nodes[self.nodes[operands[0]].root]
                if ty == src.type:                   # identity, or back to the viewed value
                    key, root, kind = src.key, src.index, "view"
                elif name == "stablehlo.reshape" or (
                        name == "stablehlo.broadcast_in_dim" and
                        _unit_view(ty, self.nodes[operands[0]].type)):
                    # Row-major order is kept: a chain of reshapes is one reshape of the first
                    # value (XLA merges them, and writes unit-dimension broadcasts as reshapes).
                    key, root, kind = ("view", ty, src.key), src.index, "view"
                elif name == "stablehlo.broadcast_in_dim":
                    key = ("broadcast", ty, src.key)
            if key is None:
                ks = sorted(okeys) if name in COMMUTATIVE else okeys
                key = (name, ty, self._attr_sig(op, name), tuple(ks), i)
            label = f"{prefix}{v.get_name()} = {op.name}"
            n = self._add("result", label, kind, ty, specs[i] if i < len(specs) else (),
                          operands, key, root=root, const=const)
            self.nodes[n].sig = (self._attr_sig(op, name) if kind not in ("view", "stablehlo.slice")
                                 else key[3:] if kind == "stablehlo.slice" else ())
            if tsrc >= 0 and kind != "view":
                self.nodes[n].tsrc, self.nodes[n].tmap = tsrc, tmap
            if splat is not None:
                self.splat[n] = splat
            env[self._vid(v)] = n
        if name in SCALAR_BODIES:  # the body is a scalar function, not values of the program
            return
        parent = tuple(okeys)
        for r, region in enumerate(op.regions):
            for block in region.blocks:
                for j, a in enumerate(block.arguments):
                    n = self._add("block", f"{prefix}{op.name} region {r} arg {j}", "block",
                                  str(a.type), (), [], ("block", name, parent, r, j))
                    env[self._vid(a)] = n
                self._block(block, env, prefix)


@dataclasses.dataclass
class Correspondence:
    pairs: list           # (our node, their node) for every counted node of ours with an image
    unmatched: list       # our counted nodes without an image
    merged: list          # our nodes mapped onto a value another of ours also maps to
    inferred: list        # our nodes matched in step 2 (by neighbours)


def graphs(ours_text: str, theirs_text: str) -> tuple[Graph, Graph]:
    """Both modules parsed in one JAX MLIR context, keys interned in one table."""
    from jax._src.interpreters import mlir as jmlir
    ctx = jmlir.make_ir_context()
    ctx.allow_unregistered_dialects = True
    keys: dict = {}
    return Graph(ours_text, ctx, keys), Graph(theirs_text, ctx, keys)


def correspond(ours: Graph, theirs: Graph) -> Correspondence:
    image: dict = {}
    used: dict = {}
    merged = []
    # Step 1: equal keys, in order of appearance.
    for n in ours.nodes:
        cands = [c for c in theirs.by_key.get(n.key, [])
                 if (theirs.nodes[c].kind == "block") == (n.kind == "block")]
        if not cands:
            continue
        k = used.get(n.key, 0)
        if k < len(cands):
            image[n.index] = cands[k]
            used[n.key] = k + 1
        else:
            image[n.index] = cands[-1]
            if n.counted:
                merged.append(n.index)
    # Step 2: neighbours, to a fixed point.
    inferred = []
    claimed = set(image.values())

    def take(n, w):
        image[n] = w
        claimed.add(w)
        inferred.append(n)

    changed = True
    while changed:
        changed = False
        for n in ours.nodes:
            if n.index in image or n.kind in ("arg", "block"):
                continue
            if n.op == "func.call" or n.kind == "return":   # the value returned
                if n.operands[0] in image:
                    image[n.index] = image[n.operands[0]]
                    changed = True
                continue
            if n.op == "view" and n.type == ours.nodes[n.root].type:   # an identity
                if n.root in image:
                    image[n.index] = image[n.root]
                    changed = True
                continue
            w = _view(n, ours, theirs, image, claimed) if n.op == "view" else \
                _by_operands(n, ours, theirs, image, claimed)
            if w is not None:
                take(n.index, w)
                changed = True
        for n in ours.nodes:
            w = image.get(n.index)
            if w is None or n.kind in ("block", "return") or n.op in ("view", "func.call"):
                continue
            tw = theirs.nodes[w]
            if len(tw.operands) != len(n.operands) or tw.op in ("view", "func.func"):
                continue
            for o, x in zip(n.operands, tw.operands):
                on, xn = ours.nodes[ours.nodes[o].root], theirs.nodes[theirs.nodes[x].root]
                if on.index in image or on.kind in ("arg", "block") or xn.index in claimed:
                    continue
                # Same type, and the same op unless ours is a chlo op XLA expanded.
                if on.type == xn.type and ((on.op, on.sig) == (xn.op, xn.sig) or
                                           on.op.startswith("chlo.")):
                    take(on.index, xn.index)
                    changed = True
    pairs = [(n.index, image[n.index]) for n in ours.nodes if n.counted and n.index in image]
    unmatched = [n.index for n in ours.nodes if n.counted and n.index not in image]
    return Correspondence(pairs, unmatched, merged, inferred)


def _same(ours: Graph, theirs: Graph, image: dict, o: int, x: int) -> bool:
    """Our operand o (through its root) and their operand x (through its root) are the same
    value: x's root is o's root's image, or computes the same (equal keys: JAX's merger keeps
    one copy of a constant, XLA may keep two copies of one computation)."""
    r, xr = ours.nodes[o].root, theirs.nodes[x].root
    kx = theirs.nodes[xr].key
    i = image.get(r)
    return ours.nodes[r].key == kx or (i is not None and theirs.nodes[theirs.nodes[i].root].key
                                       == kx)


def _by_operands(n: Node, ours: Graph, theirs: Graph, image: dict, claimed: set):
    """The first unclaimed value of theirs with n's op and type whose operands are, place by
    place (any order for a commutative op), the same values as n's (see _same), at least one
    of them matched; None when there is none. Several: the same computation twice (keras'
    mean and variance both reduce x); programs keep their order through XLA's round trip, so
    the first."""
    roots = [ours.nodes[o].root for o in n.operands]
    known = [image[r] for r in roots if r in image]
    if not known:
        return None
    cands = set()
    for k in known:  # users of the image, or of a value of theirs computing the same, or views
        for x in theirs.by_key[theirs.nodes[theirs.nodes[k].root].key]:
            cands |= set(theirs.nodes[x].users)
            for v in theirs.views.get(theirs.nodes[x].key, ()):
                cands |= set(theirs.nodes[v].users)
    for c in sorted(cands):
        t = theirs.nodes[c]
        if c in claimed or t.op != n.op or t.type != n.type or t.sig != n.sig or \
                len(t.operands) != len(roots):
            continue
        if n.op in COMMUTATIVE:
            rest = list(t.operands)
            ok = True
            for o in n.operands:
                hit = next((x for x in rest if _same(ours, theirs, image, o, x)), None)
                if hit is not None:
                    rest.remove(hit)
                elif ours.nodes[o].root in image:
                    ok = False
        else:
            ok = all(_same(ours, theirs, image, o, x) or ours.nodes[o].root not in image
                     for o, x in zip(n.operands, t.operands))
        if ok:
            return c
    return None


def _view(n: Node, ours: Graph, theirs: Graph, image: dict, claimed: set):
    """The first unclaimed view of theirs with n's type whose root is n's root's image or
    computes the same."""
    i = image.get(n.root)
    keys = {ours.nodes[n.root].key}
    if i is not None:
        keys.add(theirs.nodes[theirs.nodes[i].root].key)
    for k in keys:
        for c in theirs.views.get(k, ()):
            if c not in claimed and theirs.nodes[c].type == n.type:
                return c
    return None
