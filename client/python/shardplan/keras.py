"""Keras 3 (JAX backend): plan a model's variables and fill a keras.distribution.LayoutMap.

    layout_map, plan = shardplan.keras.plan_model(model, inputs, mesh=mesh,
                                                  input_spec=P("data"), client=client)
    keras.distribution.set_distribution(
        keras.distribution.ModelParallel(layout_map=layout_map, batch_dim_name="data"))

The model runs as a pure function of ({variable path: array}, inputs) through
`model.stateless_call`, so each variable is one argument leaf of the planned function, keyed
`[0]['<variable path>']`; its planned PartitionSpec becomes the LayoutMap entry for that path.
"""
from __future__ import annotations

from typing import Any

import jax

from . import jax as sjax
from .plan import Plan


def model_function(model):
    """(fn, params): fn(params, inputs) runs the model statelessly; params maps each
    variable's path to its value (trainable variables first, then the others)."""
    import jax.numpy as jnp
    tvars, ntvars = model.trainable_variables, model.non_trainable_variables
    tpaths = [v.path for v in tvars]
    npaths = [v.path for v in ntvars]
    params = {v.path: jnp.asarray(v.value) for v in tvars + ntvars}

    def fn(p, inputs):
        out, _ = model.stateless_call([p[k] for k in tpaths], [p[k] for k in npaths], inputs)
        return out

    return fn, params


def device_mesh(mesh):
    """The keras.distribution.DeviceMesh of a jax.sharding.Mesh (same shape, names, devices)."""
    import keras
    return keras.distribution.DeviceMesh(shape=tuple(mesh.devices.shape),
                                         axis_names=list(mesh.axis_names),
                                         devices=list(mesh.devices.flatten()))


def layout_map(plan: Plan, model, mesh, arg: int = 0):
    """A LayoutMap with the planned layout of every variable of `model`, read from argument
    `arg` of the plan (a dict keyed by variable path, as model_function builds)."""
    import keras
    lm = keras.distribution.LayoutMap(device_mesh(mesh))
    args = plan.args
    for v in model.variables:
        key = f"[{arg}]['{v.path}']"
        if key not in args:
            raise KeyError(f"the plan has no argument {key} for variable {v.path!r}")
        spec = tuple(args[key])
        for d, axes in enumerate(spec):
            if isinstance(axes, tuple):
                raise ValueError(f"the plan shards dimension {d} of {v.path!r} over the mesh axes "
                                 f"{axes}; a Keras LayoutMap names one axis per dimension")
        spec = spec + (None,) * (len(v.shape) - len(spec))
        lm[v.path] = spec
    return lm


def plan_model(model, inputs: Any, *, mesh, input_spec=None, search: bool = True,
               cluster=None, client=None, time_limit: float = 0.0, memory_limit: float = 0.0):
    """Plans `model` on `inputs` (the batch annotated with input_spec, a PartitionSpec; the
    variables left to the planner) and returns (LayoutMap, Plan). A memory_limit (bytes per
    device) below what replicated weights need makes the plan shard the weights."""
    fn, params = model_function(model)
    free = jax.tree_util.tree_map(lambda _: None, params)
    spec_in = jax.tree_util.tree_map(lambda _: input_spec, inputs) if input_spec is not None \
        else jax.tree_util.tree_map(lambda _: None, inputs)
    _, p = sjax.plan(fn, params, inputs, mesh=mesh, in_shardings=(free, spec_in),
                     search=search, cluster=cluster, client=client, time_limit=time_limit,
                     memory_limit=memory_limit)
    return layout_map(p, model, mesh), p

