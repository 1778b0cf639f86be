"""The JAX model corpus: small models built from code that packages ship, random weights.

Each entry of MODELS is a function returning a Case: the function to jit, its example
arguments, a partial in_shardings pytree (a NamedSharding where the user annotates, None where
propagation decides), and the mesh. Configs are small so that the whole corpus lowers, compiles
and runs on 8 host CPU devices in a few minutes; nothing is downloaded.

Mesh: 8 devices as ("data"=4, "model"=2). Inputs are annotated batch-on-"data"; in some models
one weight is annotated on "model"; everything else is left to propagation.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P


@dataclasses.dataclass
class Case:
    name: str
    fn: Callable
    args: tuple
    in_shardings: Any  # pytree prefix of args; None leaves = unspecified
    mesh: jax.sharding.Mesh
    transformer: bool = False  # check 2: the searched plan must shard something
    # Warnings expected when shardplan reads XLA's import of the module (check 1), for ops XLA
    # rewrites into forms without a rule (chlo.erf -> mhlo.erf).
    xla_warnings: tuple = ()
    rtol: float = 1e-4
    atol: float = 1e-4


def make_mesh() -> jax.sharding.Mesh:
    # Auto axes: shardings are hints for propagation (JAX 0.10's default is Explicit axes,
    # sharding-in-types, where propagation has nothing to decide).
    auto = jax.sharding.AxisType.Auto
    return jax.make_mesh((4, 2), ("data", "model"), axis_types=(auto, auto))


def ns(mesh, *spec):
    return NamedSharding(mesh, P(*spec))


def _rng(seed=0):
    return np.random.default_rng(seed)


def _f32(rng, *shape, scale=0.1):
    return jnp.asarray(rng.standard_normal(shape, dtype=np.float32) * scale)


def _free(tree):
    return jax.tree_util.tree_map(lambda _: None, tree)


def _annotate(tree, mesh, specs: dict):
    """None for every leaf but those whose pytree path (jax.tree_util.keystr) ends with a key
    of `specs`, which get that PartitionSpec on `mesh`."""
    def one(kp, _):
        path = jax.tree_util.keystr(kp)
        for suffix, spec in specs.items():
            if path.endswith(suffix):
                return NamedSharding(mesh, spec)
        return None
    return jax.tree_util.tree_map_with_path(one, tree)


# ---------------------------------------------------------------- Flax


def flax_mlp() -> Case:
    import flax.linen as nn

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Dense(256)(x)
            x = nn.relu(x)
            x = nn.Dense(128)(x)
            x = nn.gelu(x)
            return nn.Dense(16)(x)

    mesh = make_mesh()
    m = MLP()
    x = _f32(_rng(1), 32, 64, scale=1.0)
    params = m.init(jax.random.key(0), x)
    shard = _free(params)
    shard["params"]["Dense_0"]["kernel"] = ns(mesh, None, "model")
    return Case("flax_mlp", lambda p, x: m.apply(p, x), (params, x),
                (shard, ns(mesh, "data", None)), mesh)


def flax_cnn() -> Case:
    import flax.linen as nn

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.Conv(16, (3, 3))(x)
            x = nn.relu(x)
            x = nn.avg_pool(x, (2, 2), strides=(2, 2))
            x = nn.Conv(32, (3, 3))(x)
            x = nn.relu(x)
            x = x.reshape((x.shape[0], -1))
            x = nn.Dense(64)(x)
            x = nn.relu(x)
            return nn.log_softmax(nn.Dense(10)(x))

    mesh = make_mesh()
    m = CNN()
    x = _f32(_rng(2), 8, 16, 16, 3, scale=1.0)
    params = m.init(jax.random.key(1), x)
    return Case("flax_cnn", lambda p, x: m.apply(p, x), (params, x),
                (_free(params), ns(mesh, "data")), mesh)


def flax_transformer() -> Case:
    """A decoder-only transformer: nn.scan over the layers, nn.remat on each layer."""
    import flax.linen as nn

    D, H, F, L, V, S, B = 64, 4, 128, 2, 128, 16, 8

    class Layer(nn.Module):
        @nn.compact
        def __call__(self, x, _):
            h = nn.LayerNorm()(x)
            mask = nn.make_causal_mask(jnp.ones(x.shape[:2], jnp.int32))
            h = nn.MultiHeadDotProductAttention(num_heads=H, qkv_features=D)(h, h, mask=mask)
            x = x + h
            h = nn.LayerNorm()(x)
            h = nn.Dense(F)(h)
            h = nn.gelu(h)
            h = nn.Dense(D)(h)
            return x + h, None

    class Decoder(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            x = nn.Embed(V, D)(tokens)
            Stack = nn.scan(nn.remat(Layer), variable_axes={"params": 0},
                            split_rngs={"params": True}, length=L)
            x, _ = Stack()(x, None)
            x = nn.LayerNorm()(x)
            return nn.Dense(V)(x)

    mesh = make_mesh()
    m = Decoder()
    tokens = jnp.asarray(_rng(3).integers(0, V, (B, S)), jnp.int32)
    params = m.init(jax.random.key(2), tokens)
    # The feed-forward kernels stacked over the layers are annotated Megatron-style (the first
    # column-parallel, the second row-parallel, so each layer all-reduces its output over
    # "model"); the rest is left to the planner.
    shard = _annotate(params, mesh, {
        "['ScanCheckpointLayer_0']['Dense_0']['kernel']": P(None, None, "model"),
        "['ScanCheckpointLayer_0']['Dense_1']['kernel']": P(None, "model", None)})
    return Case("flax_transformer", lambda p, t: m.apply(p, t), (params, tokens),
                (shard, ns(mesh, "data")), mesh, transformer=True)


# ---------------------------------------------------------------- Equinox


def equinox_mlp() -> Case:
    import equinox as eqx

    mesh = make_mesh()
    mlp = eqx.nn.MLP(in_size=64, out_size=16, width_size=128, depth=2, key=jax.random.key(3))
    params, static = eqx.partition(mlp, eqx.is_array)
    x = _f32(_rng(4), 32, 64, scale=1.0)

    def fn(p, x):
        model = eqx.combine(p, static)
        return jax.vmap(model)(x)

    return Case("equinox_mlp", fn, (params, x), (_free(params), ns(mesh, "data")), mesh)


# ---------------------------------------------------------------- keras-hub (JAX backend)


def _keras_case(name, backbone, inputs, in_spec, transformer, rtol=1e-4, atol=1e-4):
    """A keras-hub backbone as a pure function of ({variable path: array}, inputs)."""
    mesh = make_mesh()
    tvars = backbone.trainable_variables
    ntvars = backbone.non_trainable_variables
    params = {v.path: jnp.asarray(v.value) for v in tvars + ntvars}
    tpaths = [v.path for v in tvars]
    npaths = [v.path for v in ntvars]

    def fn(p, inputs):
        out, _ = backbone.stateless_call([p[k] for k in tpaths], [p[k] for k in npaths], inputs)
        return out

    shard_inputs = ({k: ns(mesh, *in_spec) for k in inputs} if isinstance(inputs, dict)
                    else ns(mesh, *in_spec))
    return Case(name, fn, (params, inputs), (_free(params), shard_inputs), mesh,
                transformer=transformer, rtol=rtol, atol=atol)


def _tokens(B, S, V, seed=5):
    return jnp.asarray(_rng(seed).integers(1, V, (B, S)), jnp.int32)


def keras_llama() -> Case:
    import keras_hub
    import keras
    keras.utils.set_random_seed(0)
    B, S, V = 8, 16, 128
    bb = keras_hub.models.LlamaBackbone(vocabulary_size=V, num_layers=2, num_query_heads=4,
                                        num_key_value_heads=2, hidden_dim=64,
                                        intermediate_dim=128, dtype="float32")
    inputs = {"token_ids": _tokens(B, S, V), "padding_mask": jnp.ones((B, S), jnp.int32)}
    return _keras_case("keras_llama", bb, inputs, ("data",), True)


def keras_gpt2() -> Case:
    import keras_hub
    import keras
    keras.utils.set_random_seed(0)
    B, S, V = 8, 16, 128
    bb = keras_hub.models.GPT2Backbone(vocabulary_size=V, num_layers=2, num_heads=4,
                                       hidden_dim=64, intermediate_dim=128,
                                       max_sequence_length=S, dtype="float32")
    inputs = {"token_ids": _tokens(B, S, V), "padding_mask": jnp.ones((B, S), jnp.int32)}
    return _keras_case("keras_gpt2", bb, inputs, ("data",), True)


def keras_bert() -> Case:
    import keras_hub
    import keras
    keras.utils.set_random_seed(0)
    B, S, V = 8, 16, 128
    bb = keras_hub.models.BertBackbone(vocabulary_size=V, num_layers=2, num_heads=4,
                                       hidden_dim=64, intermediate_dim=128,
                                       max_sequence_length=S, dtype="float32")
    inputs = {"token_ids": _tokens(B, S, V), "segment_ids": jnp.zeros((B, S), jnp.int32),
              "padding_mask": jnp.ones((B, S), jnp.int32)}
    return _keras_case("keras_bert", bb, inputs, ("data",), True)


def keras_vit() -> Case:
    import keras_hub
    import keras
    keras.utils.set_random_seed(0)
    bb = keras_hub.models.ViTBackbone(image_shape=(32, 32, 3), patch_size=8, num_layers=2,
                                      num_heads=4, hidden_dim=64, mlp_dim=128,
                                      dtype="float32")
    images = _f32(_rng(6), 8, 32, 32, 3, scale=1.0)
    return _keras_case("keras_vit", bb, images, ("data",), True)


def keras_resnet() -> Case:
    import keras_hub
    import keras
    keras.utils.set_random_seed(0)
    bb = keras_hub.models.ResNetBackbone(
        input_conv_filters=[64], input_conv_kernel_sizes=[3], stackwise_num_filters=[64, 64],
        stackwise_num_blocks=[1, 1], stackwise_num_strides=[1, 2], block_type="basic_block",
        image_shape=(16, 16, 3), dtype="float32")
    images = _f32(_rng(7), 8, 16, 16, 3, scale=1.0)
    return _keras_case("keras_resnet", bb, images, ("data",), False,
                       rtol=1e-3, atol=1e-3)


# ---------------------------------------------------------------- JAX features


def jax_shard_map() -> Case:
    from jax import shard_map

    mesh = make_mesh()

    def fn(x, w):
        h = jnp.tanh(x @ w)

        def local(h):  # per-shard row normalisation, then a psum over "model"
            return jax.lax.psum(h * 2.0, "model")

        y = shard_map(local, mesh=mesh, in_specs=P("data", "model"),
                      out_specs=P("data", None))(h)
        return y.sum(axis=1)

    x = _f32(_rng(8), 32, 64, scale=1.0)
    w = _f32(_rng(9), 64, 32)
    # w split on its rows (the contracting dim): x @ w is a partial sum over "model" that the
    # plan reduces before tanh, besides the psum the program writes itself.
    return Case("jax_shard_map", fn, (x, w), (ns(mesh, "data"), ns(mesh, "model")), mesh)


def jax_sharding_constraint() -> Case:
    mesh = make_mesh()

    def fn(x, w1, w2):
        h = x @ w1
        h = jax.lax.with_sharding_constraint(h, ns(mesh, "data", "model"))
        return jax.nn.relu(h) @ w2

    x = _f32(_rng(10), 32, 64, scale=1.0)
    return Case("jax_sharding_constraint", fn,
                (x, _f32(_rng(11), 64, 128), _f32(_rng(12), 128, 16)),
                (None, None, None), mesh)


def jax_custom_vjp() -> Case:
    mesh = make_mesh()

    @jax.custom_vjp
    def clip_grad(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (jnp.clip(g, -1.0, 1.0),)

    clip_grad.defvjp(fwd, bwd)

    def loss(w, x):
        return jnp.mean(jnp.square(clip_grad(x @ w)))

    def fn(w, x):
        return jax.value_and_grad(loss)(w, x)

    return Case("jax_custom_vjp", fn, (_f32(_rng(13), 64, 32), _f32(_rng(14), 32, 64, scale=1.0)),
                (ns(mesh, None, "model"), ns(mesh, "data")), mesh)


def jax_while_loop() -> Case:
    mesh = make_mesh()

    def fn(x, w):
        def cond(c):
            return c[0] < 3

        def body(c):
            i, h = c
            return i + 1, jnp.tanh(h @ w)

        _, h = jax.lax.while_loop(cond, body, (0, x))
        return h

    # w split on its columns: each step's h comes out split on "model" and the next step's
    # product needs it whole (a gather inside the loop).
    return Case("jax_while_loop", fn, (_f32(_rng(15), 32, 64, scale=1.0), _f32(_rng(16), 64, 64)),
                (ns(mesh, "data"), ns(mesh, None, "model")), mesh)


def jax_cond() -> Case:
    mesh = make_mesh()

    def fn(p, x, w):
        return jax.lax.cond(p > 0, lambda x: jnp.sin(x @ w), lambda x: jnp.cos(x) @ w, x)

    # w split on its rows (the contracting dim): both branches' products are partial sums
    # over "model".
    return Case("jax_cond", fn, (jnp.int32(1), _f32(_rng(17), 32, 64, scale=1.0),
                                 _f32(_rng(18), 64, 32)),
                (None, ns(mesh, "data"), ns(mesh, "model")), mesh)


def jax_train_step() -> Case:
    """Forward, backward and an optax Adam update of a two-layer MLP."""
    import optax

    mesh = make_mesh()
    rng = _rng(19)
    params = {"w1": _f32(rng, 64, 128), "b1": jnp.zeros((128,)), "w2": _f32(rng, 128, 16)}
    opt = optax.adam(1e-3)
    opt_state = opt.init(params)
    x = _f32(rng, 32, 64, scale=1.0)
    y = _f32(rng, 32, 16, scale=1.0)

    def loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])
        return jnp.mean(jnp.square(h @ p["w2"] - y))

    def step(p, s, x, y):
        value, grads = jax.value_and_grad(loss)(p, x, y)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, value

    pshard = {"w1": ns(mesh, None, "model"), "b1": None, "w2": None}
    return Case("jax_train_step", step, (params, opt_state, x, y),
                (pshard, _free(opt_state), ns(mesh, "data"), ns(mesh, "data")), mesh,
                rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------- chlo ops and custom calls


def jax_special_functions() -> Case:
    """lax's special functions, which JAX lowers to chlo ops (erf, erf_inv, lgamma, digamma,
    bessel_i1e, polygamma, zeta, next_after, the inverse and hyperbolic trigonometric ones,
    square): element-wise, each with the rule of what XLA expands it to. XLA's import turns
    chlo.erf into the mhlo.erf op, which has no rule in JAX's Shardy either (check 1 reads that
    import and is warned about it; JAX does not propagate through erf, shardplan, reading JAX's
    chlo.erf, does)."""
    mesh = make_mesh()

    def fn(x, w):
        h = jnp.tanh(x @ w) * 0.5           # in (-0.5, 0.5)
        p = h + 1.0                         # in (0.5, 1.5)
        a = jax.lax.erf(h) + jax.lax.erf_inv(h) + jax.lax.lgamma(p) + jax.lax.digamma(p)
        b = (jax.lax.bessel_i1e(h) + jax.lax.polygamma(jnp.ones_like(p), p)
             + jax.lax.zeta(p + 1.0, p))
        c = jnp.arcsin(h) + jnp.arccos(h) + jnp.arctan(h) + jnp.arcsinh(h) + jnp.arccosh(p + 1.0)
        d = jnp.arctanh(h) + jnp.sinh(h) + jnp.cosh(h) + jax.lax.square(h)
        return a + b + c + d + jax.lax.nextafter(h, p)

    # w split on its rows: x @ w is reduced over "model" before the element-wise functions.
    return Case("jax_special_functions", fn,
                (_f32(_rng(20), 32, 64, scale=1.0), _f32(_rng(21), 64, 32)),
                (ns(mesh, "data"), ns(mesh, "model")), mesh, rtol=1e-4, atol=1e-4,
                xla_warnings=("op 'mhlo.erf' is unknown to SDY sharding rule registry",))


def jax_top_k() -> Case:
    """lax.top_k lowers to chlo.top_k (XLA's import: mhlo.topk), with the rule of
    custom_call @mhlo.topk: the batch dim propagates, the sorted one is replicated."""
    mesh = make_mesh()

    def fn(x, w):
        values, indices = jax.lax.top_k(jnp.tanh(x @ w), 4)
        return values * 2.0, indices

    return Case("jax_top_k", fn, (_f32(_rng(22), 32, 64, scale=1.0), _f32(_rng(23), 64, 16)),
                (ns(mesh, "data"), None), mesh)


def jax_host_callback() -> Case:
    """jax.pure_callback: a custom_call @xla_ffi_python_cpu_callback that JAX places on one
    device (a maximal mesh). Shardy has no rule for it and is silent about it on purpose; the
    plan keeps it on its device, and XLA gathers its operand there and sends its result back
    to every device (check 3: an all-gather and an all-reduce, which the plan predicts)."""
    mesh = make_mesh()

    def fn(x, w):
        h = jnp.tanh(x @ w)
        y = jax.pure_callback(lambda a: np.asarray(a) * 2.0,
                              jax.ShapeDtypeStruct(h.shape, h.dtype), h)
        return y + 1.0

    return Case("jax_host_callback", fn,
                (_f32(_rng(24), 32, 64, scale=1.0), _f32(_rng(25), 64, 16)),
                (ns(mesh, "data"), None), mesh, rtol=1e-5, atol=1e-5)


MODELS: dict[str, Callable[[], Case]] = {
    f.__name__: f for f in [
        flax_mlp, flax_cnn, flax_transformer, equinox_mlp,
        keras_llama, keras_gpt2, keras_bert, keras_vit, keras_resnet,
        jax_shard_map, jax_sharding_constraint, jax_custom_vjp, jax_while_loop, jax_cond,
        jax_train_step, jax_special_functions, jax_top_k, jax_host_callback,
    ]
}


def lower(case: Case):
    return jax.jit(case.fn, in_shardings=case.in_shardings, keep_unused=True).lower(*case.args)


if __name__ == "__main__":  # write every model's lowered text to a folder
    import sys
    out = sys.argv[1] if len(sys.argv) > 1 else "corpus-out"
    os.makedirs(out, exist_ok=True)
    for name in (sys.argv[2:] or MODELS):
        try:
            text = lower(MODELS[name]()).as_text()
        except Exception as e:  # report and go on: this is a survey tool
            print(f"{name}: FAILED to lower: {type(e).__name__}: {e}")
            continue
        with open(os.path.join(out, name + ".mlir"), "w") as f:
            f.write(text)
        print(f"{name}: {len(text.splitlines())} lines")
