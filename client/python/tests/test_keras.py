"""Keras 3 on the JAX backend: a LayoutMap filled from a plan the daemon makes (the one the
suite starts), used to build the model."""
from __future__ import annotations

import os

import jax
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import shardplan
import shardplan.keras as sk
from corpus import models

CLUSTER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                       "corpus", "cpu8.json")


def _gpt2():
    import keras
    import keras_hub
    keras.utils.set_random_seed(0)
    return keras_hub.models.GPT2Backbone(vocabulary_size=128, num_layers=2, num_heads=4,
                                         hidden_dim=64, intermediate_dim=128,
                                         max_sequence_length=16, dtype="float32")


def test_layout_map_from_a_daemon_plan_shards_the_model_as_planned(planner):
    import keras
    mesh = models.make_mesh()
    model = _gpt2()
    inputs = {"token_ids": models._tokens(8, 16, 128),
              "padding_mask": jax.numpy.ones((8, 16), jax.numpy.int32)}
    ref = model(inputs)
    # The weights take 298 KiB replicated. With 480 KiB per device the search fits by sharding
    # the activations over both axes and keeps the weights replicated (slicing them on the fly
    # costs the same); 400 KiB leaves no room for that, so the plan shards weights.
    lm, plan = sk.plan_model(model, inputs, mesh=mesh, input_spec=P("data"), search=True,
                             cluster=CLUSTER, client=planner, memory_limit=400_000)
    assert plan.costs.peak_memory_bytes <= 400_000
    # The plan is the daemon's: it keeps it under its key.
    assert planner.get(plan.key).module_sdy == plan.module_sdy
    # Every variable has an entry of its rank, and the plan shards some weight on "model".
    for v in model.variables:
        assert len(tuple(lm[v.path].axes)) == len(v.shape), v.path
    assert any("model" in tuple(lm[v.path].axes) for v in model.variables), \
        "no weight sharded on the model axis"
    # A model built under ModelParallel with that map holds its variables as planned ...
    keras.distribution.set_distribution(keras.distribution.ModelParallel(
        layout_map=lm, batch_dim_name="data"))
    try:
        sharded = _gpt2()
        for v, w in zip(sharded.variables, model.variables):
            want = plan.args[f"[0]['{w.path}']"]
            got = v.value.sharding
            assert got.is_equivalent_to(jax.sharding.NamedSharding(mesh, want), len(v.shape)), \
                f"{v.path}: {got} vs planned {want}"
        # ... and computes what the unsharded model computes (same seed, same weights).
        out = sharded(inputs)
        np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-4, atol=1e-4)
    finally:
        keras.distribution.set_distribution(None)


def test_a_dimension_sharded_over_two_axes_is_refused_naming_the_variable():
    """Keras's TensorLayout takes one mesh axis per dimension: a plan that splits a weight's
    dimension over ("data", "model") cannot become a LayoutMap entry, and says so."""
    import keras
    mesh = models.make_mesh()
    layer = keras.layers.Dense(16)
    layer.build((8, 32))
    text = ('sdy.mesh @mesh = <["data"=4, "model"=2]>\n'
            'func.func @main(%arg0: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, '
            '[{"data", "model"}, {}]>}, %arg1: tensor<16xf32>) -> tensor<16xf32> {\n'
            '  return %arg1 : tensor<16xf32>\n}\n')
    plan = shardplan.Plan(key="k", status="optimal", module_sdy=text, costs=shardplan.Costs())
    plan.label([f"[0]['{v.path}']" for v in layer.variables], ["result"])
    with pytest.raises(ValueError, match=r"dimension 0 of '.*kernel' over the mesh axes "
                                         r"\('data', 'model'\)"):
        sk.layout_map(plan, layer, mesh)
