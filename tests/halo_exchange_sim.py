#!/usr/bin/env python3
"""halo_exchange_sim.py OPT SEED COUNT - checks what -sdy-resolve-permutation-factors
(enable-halo-exchange=true) makes of random sharded pads, slices and dim-splitting reshapes by
running it: the printed module is evaluated on an iota input, every sdy.manual_computation
device by device (local shards cut by its in_shardings, collective permutes between devices,
partition_id the device id), the devices' results assembled by its out_shardings (devices
holding the same shard must agree), and the function's result compared with the op applied to
the whole tensor. Replicated fallbacks (sdy.reshard) are evaluated too: reshards keep values.

Only the ops these rewrites emit are understood. Prints `N passed, 0 failed` and exits 0, or
prints the first mismatching module and exits 1."""
import re, subprocess, sys, random, itertools

def prod(xs):
    p = 1
    for x in xs: p *= x
    return p

class T:
    def __init__(self, shape, data):
        self.shape = list(shape); self.data = list(data)
        assert len(self.data) == prod(self.shape), (shape, len(data))
    def idx(self, c):
        i = 0
        for d, x in zip(self.shape, c): i = i * d + x
        return i
    def get(self, c): return self.data[self.idx(c)]

def coords(shape): return itertools.product(*[range(d) for d in shape])

def pad(x, v, lo, hi, it):
    shape = [lo[d] + hi[d] + ((x.shape[d] - 1) * (it[d] + 1) + 1 if x.shape[d] else 0) for d in range(len(x.shape))]
    out = []
    for c in coords(shape):
        src = []
        ok = True
        for d, o in enumerate(c):
            g = o - lo[d]
            if g < 0 or g % (it[d] + 1) or g // (it[d] + 1) >= x.shape[d]: ok = False; break
            src.append(g // (it[d] + 1))
        out.append(x.get(src) if ok else v)
    return T(shape, out)

def slice_(x, st, lim):
    shape = [lim[d] - st[d] for d in range(len(st))]
    return T(shape, [x.get([c[d] + st[d] for d in range(len(c))]) for c in coords(shape)])

def concat(xs, dim):
    shape = list(xs[0].shape); shape[dim] = sum(x.shape[dim] for x in xs)
    out = []
    for c in coords(shape):
        o = c[dim]
        for x in xs:
            if o < x.shape[dim]:
                cc = list(c); cc[dim] = o; out.append(x.get(cc)); break
            o -= x.shape[dim]
    return T(shape, out)

def dyn_slice(x, starts, sizes):
    st = [min(max(s, 0), x.shape[d] - sizes[d]) for d, s in enumerate(starts)]
    return slice_(x, st, [st[d] + sizes[d] for d in range(len(st))])

def ttype(s):
    m = re.match(r'tensor<((?:\d+x)*)(\w+)>', s.strip())
    dims = [int(v) for v in m.group(1).split('x') if v]
    return dims

class Mesh:
    def __init__(self, axes, ids):
        self.axes = axes; self.ids = ids
        self.n = prod([s for _, s in axes])
    def coords(self, p):
        c = []
        for _, s in reversed(self.axes): c.append(p % s); p //= s
        return list(reversed(c))
    def dev(self, p): return self.ids[p] if self.ids else p

def parse_sharding(text):
    # <@mesh, [{"a"}, {"b":(2)2}, {}]>
    m = re.match(r'<@(\w+), \[(.*)\]', text.strip())
    dims = []
    for d in re.findall(r'\{([^}]*)\}', m.group(2)):
        axes = []
        for a in re.findall(r'"(\w+)"(?::\((\d+)\)(\d+))?', d):
            axes.append((a[0], int(a[1]) if a[1] else 0, int(a[2]) if a[2] else 0))
        dims.append(axes)
    return m.group(1), dims

def shard_index(mesh, axes, coord):
    k, cnt = 0, 1
    names = [a for a, _ in mesh.axes]
    for name, pre, size in axes:
        ai = names.index(name); n = mesh.axes[ai][1]
        sz = size or n; pr = pre if size else 1
        stride = n // (pr * sz)
        k = k * sz + (coord[ai] // stride) % sz; cnt *= sz
    return k, cnt

def local_of(mesh, dims, glob, p, manual):
    c = mesh.coords(p)
    st, lim = [], []
    for d, axes in enumerate(dims):
        axes = [a for a in axes if a[0] in manual]
        k, cnt = shard_index(mesh, axes, c)
        s = glob.shape[d] // cnt
        st.append(k * s); lim.append(k * s + s)
    return slice_(glob, st, lim)

def run(opt, text):
    out = subprocess.run([opt, '-', '-sdy-resolve-permutation-factors=enable-halo-exchange=true'], input=text,
                         capture_output=True, text=True)
    if out.returncode: raise SystemExit('shardplan-opt failed: ' + out.stderr)
    return out.stdout

def evaluate(text, args):
    meshes = {}
    for name, axes, ids in re.findall(r'sdy\.mesh @(\w+) = <\[(.*?)\](?:, device_ids=\[(.*?)\])?>', text):
        meshes[name] = Mesh([(a, int(s)) for a, s in re.findall(r'"(\w+)"=(\d+)', axes)],
                            [int(v) for v in ids.split(',')] if ids else None)
    lines = text.split('\n')
    env = dict(args)
    i = 0
    body_start = next(k for k, l in enumerate(lines) if 'func.func' in l) + 1
    i = body_start
    while i < len(lines):
        l = lines[i].strip(); i += 1
        if l.startswith('return'):
            return env[re.match(r'return (%\w+)', l).group(1)]
        m = re.match(r'(%\w+) = (\S+) (.*)', l)
        if not m: continue
        name, op, rest = m.groups()
        if op.startswith('sdy.manual_computation'):
            j = i
            while not lines[j].strip().startswith('} :'): j += 1
            env[name] = manual(meshes, env, l, lines[i:j], lines[j])
            i = j + 1
        else:
            env[name] = eval_op(op, rest, lambda v: env[v], None)
    raise SystemExit('no return')

def eval_op(op, rest, get, dev):
    if op == 'stablehlo.constant':
        m = re.match(r'dense<(.*?)> : (.*)', rest)
        v = m.group(1); shape = ttype(m.group(2))
        if v.startswith('['): return T(shape, [int(x) for x in v.strip('[]').split(',')])
        return T(shape, [int(float(v))] * prod(shape))
    if op == 'stablehlo.pad':
        m = re.match(r'(%\w+), (%\w+), low = \[(.*?)\], high = \[(.*?)\], interior = \[(.*?)\]', rest)
        ints = lambda s: [int(x) for x in s.split(',')]
        return pad(get(m.group(1)), get(m.group(2)).data[0], ints(m.group(3)), ints(m.group(4)), ints(m.group(5)))
    if op == 'stablehlo.slice':
        m = re.match(r'(%\w+) \[(.*?)\]', rest)
        rng = [tuple(int(v) for v in r.split(':')) for r in m.group(2).split(',')]
        return slice_(get(m.group(1)), [a for a, _ in rng], [b for _, b in rng])
    if op == 'stablehlo.concatenate':
        m = re.match(r'(.*), dim = (\d+)', rest)
        return concat([get(v.strip()) for v in m.group(1).split(',')], int(m.group(2)))
    if op == 'sdy.reshard': return get(re.match(r'(%\w+)', rest).group(1))
    if op == 'stablehlo.partition_id': return T([], [dev])
    if op == 'stablehlo.convert': return get(re.match(r'(%\w+)', rest).group(1))
    if op in ('stablehlo.divide', 'stablehlo.remainder', 'stablehlo.multiply', 'stablehlo.add', 'stablehlo.maximum'):
        a, b = re.match(r'(%\w+), (%\w+)', rest).groups()
        x, y = get(a).data[0], get(b).data[0]
        f = {'stablehlo.divide': lambda: int(x / y), 'stablehlo.remainder': lambda: x - int(x / y) * y,
             'stablehlo.multiply': lambda: x * y, 'stablehlo.add': lambda: x + y, 'stablehlo.maximum': lambda: max(x, y)}
        return T([], [f[op]()])
    if op == 'stablehlo.dynamic_slice':
        m = re.match(r'(.*?), sizes = \[(.*?)\]', rest)
        vs = [v.strip() for v in m.group(1).split(',')]
        return dyn_slice(get(vs[0]), [get(v).data[0] for v in vs[1:]], [int(v) for v in m.group(2).split(',')])
    if op == 'stablehlo.reshape':
        x = get(re.match(r'(%\w+)', rest).group(1))
        return T(ttype(rest.split('->')[-1]) if '->' in rest else [], x.data)
    raise SystemExit('unknown op ' + op)

def manual(meshes, env, header, body, closing):
    m = re.match(r'(%\w+) = sdy\.manual_computation\((.*?)\) in_shardings=\[(.*)\] out_shardings=\[(.*)\] manual_axes=\{(.*?)\} \((.*)\) \{', header)
    ins = [v.strip() for v in m.group(2).split(',')]
    in_sh = re.findall(r'<@\w+, \[[^\]]*\]>', m.group(3))
    out_sh = parse_sharding(m.group(4))
    manual_axes = re.findall(r'"(\w+)"', m.group(5))
    params = re.findall(r'(%\w+): ', m.group(6))
    mesh = meshes[out_sh[0]]
    out_shape = ttype(closing.split('->')[-1])
    envs = []
    for p in range(mesh.n):
        e = {}
        for v, sh, prm in zip(ins, in_sh, params):
            _, dims = parse_sharding(sh)
            e[prm] = local_of(mesh, dims, env[v], p, manual_axes) if dims else env[v]
        envs.append(e)
    for l in body:
        l = l.strip()
        if l.startswith('sdy.return'):
            r = re.match(r'sdy\.return (%\w+)', l).group(1)
            break
        mm = re.match(r'(%\w+) = (\S+) (.*)', l)
        if not mm: continue
        name, op, rest = mm.groups()
        if op.startswith('"stablehlo.collective_permute"'):
            src = re.match(r'"stablehlo\.collective_permute"\((%\w+)\)', op).group(1)
            pairs = [(int(a), int(b)) for a, b in re.findall(r'\[(\d+), (\d+)\]', rest.split('source_target_pairs')[1])]
            by_dev = {mesh.dev(p): p for p in range(mesh.n)}
            vals = [None] * mesh.n
            for a, b in pairs: vals[by_dev[b]] = envs[by_dev[a]][src]
            for p in range(mesh.n):
                x = envs[p][src]
                envs[p][name] = vals[p] if vals[p] else T(x.shape, [0] * len(x.data))
            continue
        for p in range(mesh.n):
            envs[p][name] = eval_op(op, rest, lambda v, p=p: envs[p][v] if v in envs[p] else env[v], mesh.dev(p))
    glob = [None] * prod(out_shape)
    for p in range(mesh.n):
        loc = envs[p][r]
        c = mesh.coords(p)
        base = []
        for d, axes in enumerate(out_sh[1]):
            k, cnt = shard_index(mesh, [a for a in axes if a[0] in manual_axes], c)
            assert loc.shape[d] * cnt == out_shape[d], (loc.shape, out_shape)
            base.append(k * loc.shape[d])
        for lc in coords(loc.shape):
            g = T(out_shape, glob).idx([base[d] + lc[d] for d in range(len(lc))])
            v = loc.get(lc)
            if glob[g] is not None and glob[g] != v:
                raise AssertionError('devices disagree at %s' % g)
            glob[g] = v
    return T(out_shape, glob)

def case_text(mesh, ids, t_in, sh_in, t_out, sh_out, op_text, sig):
    axes = ', '.join('"%s"=%d' % a for a in mesh)
    ids_t = (', device_ids=[%s]' % ', '.join(map(str, ids))) if ids else ''
    return ('sdy.mesh @m = <[%s]%s>\n'
            'func.func @f(%%arg0: %s {sdy.sharding = #sdy.sharding<@m, %s>}) -> %s {\n'
            '  %%c = stablehlo.constant dense<0> : tensor<i32>\n'
            '  %%0 = %s {sdy.sharding = #sdy.sharding_per_value<[<@m, %s>]>} : %s\n'
            '  return %%0 : %s\n}\n') % (axes, ids_t, t_in, sh_in, t_out, op_text, sh_out, sig, t_out)

def tt(shape): return 'tensor<%si32>' % ''.join('%dx' % d for d in shape)

def shard_text(dims):
    return '[' + ', '.join('{' + ', '.join('"%s"' % a for a in d) + '}' for d in dims) + ']'

def random_case(rng):
    mesh = rng.choice([[('a', 2), ('b', 2)], [('a', 4), ('b', 2)], [('a', 4)], [('a', 3)], [('a', 6)], [('a', 2), ('b', 3)]])
    n = prod([s for _, s in mesh])
    ids = None
    if rng.random() < 0.3:
        ids = list(range(n)); rng.shuffle(ids)
        if ids == list(range(n)): ids = None
    kind = rng.choice(['pad', 'slice', 'reshape'])
    names = [a for a, _ in mesh]
    if kind == 'reshape':
        a, size = rng.choice([x for x in mesh if x[1] in (4, 6)] or [mesh[0]])
        if size not in (4, 6): return None
        k = 2; m2 = size // 2
        rows = 2; cols = rng.randint(2, 9)
        I = rows * cols
        sh_in = [[a]]; sh_out = [['%s":(1)%d' % (a, k)], ['%s":(%d)%d' % (a, k, m2)]]
        sin = '[{"%s"}]' % a
        sout = '[{"%s":(1)%d}, {"%s":(%d)%d}]' % (a, k, a, k, m2)
        t_in, t_out = tt([I]), tt([rows, cols])
        op = 'stablehlo.reshape %arg0'
        text = case_text(mesh, ids, t_in, sin, t_out, sout, op, '(%s) -> %s' % (t_in, t_out))
        expect = lambda x: T([rows, cols], x.data)
        return text, [I], expect
    rank = rng.randint(1, 2)
    shape = [rng.randint(2, 10) for _ in range(rank)]
    free = names[:]; rng.shuffle(free)
    dims = []
    for d in range(rank):
        dims.append([free.pop()] if free and rng.random() < 0.8 else [])
    sh = shard_text(dims)
    if kind == 'pad':
        lo = [rng.randint(-2, 6) for _ in range(rank)]; hi = [rng.randint(-2, 6) for _ in range(rank)]
        it = [rng.choice([0, 0, 1, 2]) for _ in range(rank)]
        out = [lo[d] + hi[d] + (shape[d] - 1) * (it[d] + 1) + 1 for d in range(rank)]
        if min(out) < 1: return None
        op = 'stablehlo.pad %%arg0, %%c, low = [%s], high = [%s], interior = [%s]' % (
            ', '.join(map(str, lo)), ', '.join(map(str, hi)), ', '.join(map(str, it)))
        text = case_text(mesh, ids, tt(shape), sh, tt(out), sh, op, '(%s, tensor<i32>) -> %s' % (tt(shape), tt(out)))
        return text, shape, lambda x: pad(x, 0, lo, hi, it)
    st = [rng.randint(0, s - 1) for s in shape]
    lim = [rng.randint(st[d] + 1, shape[d]) for d in range(rank)]
    out = [lim[d] - st[d] for d in range(rank)]
    op = 'stablehlo.slice %%arg0 [%s]' % ', '.join('%d:%d' % (a, b) for a, b in zip(st, lim))
    text = case_text(mesh, ids, tt(shape), sh, tt(out), sh, op, '(%s) -> %s' % (tt(shape), tt(out)))
    return text, shape, lambda x: slice_(x, st, lim)

def main():
    opt, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    exchanged = checked = 0
    while checked < count:
        c = random_case(rng)
        if not c: continue
        text, shape, expect = c
        x = T(shape, list(range(1, prod(shape) + 1)))
        out = run(opt, text)
        got = evaluate(out, {'%arg0': x})
        want = expect(x)
        if got.shape != want.shape or got.data != want.data:
            print('MISMATCH\n' + text + '\n' + out + '\nwant %s\ngot  %s' % (want.data, got.data))
            return 1
        checked += 1
        exchanged += 'manual_computation' in out
    print('%d passed, 0 failed (%d halo exchanges)' % (checked, exchanged))
    return 0

if __name__ == '__main__':
    sys.exit(main())
