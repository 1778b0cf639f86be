"""Full-size configurations of the corpus's keras-hub models, for the benchmark
(bench/jax_fullsize.py), never for CI: the published sizes of GPT-2 small, BERT base, ViT-B/16
and ResNet-50, and a Llama of 271M parameters, with random weights (nothing
downloaded). Short sequences and a batch of 8 keep one forward pass on 8 host CPU devices
within a minute or two; the parameter count is what is full-size.
"""
from __future__ import annotations

from typing import Callable

import jax.numpy as jnp

from corpus.models import Case, _f32, _keras_case, _rng, _tokens

B, S = 8, 128


def _token_inputs(vocabulary: int) -> dict:
    return {"token_ids": _tokens(B, S, vocabulary), "padding_mask": jnp.ones((B, S), jnp.int32)}


def gpt2_small() -> Case:
    import keras
    import keras_hub
    keras.utils.set_random_seed(0)
    bb = keras_hub.models.GPT2Backbone(vocabulary_size=50257, num_layers=12, num_heads=12,
                                       hidden_dim=768, intermediate_dim=3072,
                                       max_sequence_length=1024, dtype="float32")
    return _keras_case("gpt2_small_124m", bb, _token_inputs(50257), ("data",), True, rtol=1e-3,
                       atol=1e-3)


def bert_base() -> Case:
    import keras
    import keras_hub
    keras.utils.set_random_seed(0)
    bb = keras_hub.models.BertBackbone(vocabulary_size=30522, num_layers=12, num_heads=12,
                                       hidden_dim=768, intermediate_dim=3072,
                                       max_sequence_length=512, dtype="float32")
    inputs = dict(_token_inputs(30522), segment_ids=jnp.zeros((B, S), jnp.int32))
    return _keras_case("bert_base_110m", bb, inputs, ("data",), True, rtol=1e-3, atol=1e-3)


def vit_b16() -> Case:
    import keras
    import keras_hub
    keras.utils.set_random_seed(0)
    bb = keras_hub.models.ViTBackbone(image_shape=(224, 224, 3), patch_size=16, num_layers=12,
                                      num_heads=12, hidden_dim=768, mlp_dim=3072,
                                      dtype="float32")
    images = _f32(_rng(6), B, 224, 224, 3, scale=1.0)
    return _keras_case("vit_b16_86m", bb, images, ("data",), True, rtol=1e-3, atol=1e-3)


def resnet50() -> Case:
    import keras
    import keras_hub
    keras.utils.set_random_seed(0)
    bb = keras_hub.models.ResNetBackbone(
        input_conv_filters=[64], input_conv_kernel_sizes=[7],
        stackwise_num_filters=[64, 128, 256, 512], stackwise_num_blocks=[3, 4, 6, 3],
        stackwise_num_strides=[1, 2, 2, 2], block_type="bottleneck_block",
        image_shape=(224, 224, 3), dtype="float32")
    images = _f32(_rng(7), B, 224, 224, 3, scale=1.0)
    return _keras_case("resnet50_26m", bb, images, ("data",), False, rtol=1e-3, atol=1e-3)


def llama_271m() -> Case:
    import keras
    import keras_hub
    keras.utils.set_random_seed(0)
    bb = keras_hub.models.LlamaBackbone(vocabulary_size=32000, num_layers=16, num_query_heads=16,
                                        num_key_value_heads=16, hidden_dim=1024,
                                        intermediate_dim=2816, dtype="float32")
    return _keras_case("llama_271m", bb, _token_inputs(32000), ("data",), True, rtol=1e-3,
                       atol=1e-3)


FULL_MODELS: dict[str, Callable[[], Case]] = {
    f.__name__: f for f in [gpt2_small, bert_base, vit_b16, resnet50, llama_271m]
}
