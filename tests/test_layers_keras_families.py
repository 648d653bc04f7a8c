"""The convolution, pooling, reshaping and PReLU layers of issue 39 against Keras 3.

The fixtures (``tests/fixtures/keras_layers``) were written by ``make_fixtures.py`` there with
Keras 3.15 on JAX: per case the layers' ``get_config()``, a ``.weights.h5`` file for those with
weights, an input and Keras's output. Here the same layers, built with minikeras, load Keras's
weights files and give Keras's outputs; they write weights files with Keras's layout; and their
configs are Keras's and survive ``from_config``.
"""
import json
import os

import h5py
import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk

L = mk.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_layers")
OUTPUTS = np.load(os.path.join(HERE, "outputs.npz"))
with open(os.path.join(HERE, "configs.json")) as f:
    CONFIGS = json.load(f)

WEIGHTED = {
    "conv3d": lambda: [L.Conv3D(3, (2, 3, 2), strides=(1, 2, 1), padding="same"),
                       L.Conv3D(4, 2, dilation_rate=(1, 2, 1), groups=1, activation="relu")],
    "conv3d_channels_first": lambda: [L.Conv3D(4, 2, groups=2, data_format="channels_first")],
    "conv2d_groups_channels_first": lambda: [
        L.Conv2D(4, 3, groups=2, dilation_rate=2, data_format="channels_first", padding="same"),
        L.Conv2D(2, 2, strides=2, data_format="channels_first")],
    "conv2d_groups": lambda: [L.Conv2D(6, (3, 2), groups=3, strides=(2, 1), activation="tanh")],
    "conv1d_channels_first": lambda: [L.Conv1D(4, 3, padding="causal", data_format="channels_first"),
                                      L.Conv1D(2, 2, groups=2, data_format="channels_first")],
    "depthwise_conv2d": lambda: [L.DepthwiseConv2D(3, depth_multiplier=2, padding="same", strides=2),
                                 L.DepthwiseConv2D((2, 3), dilation_rate=(2, 1), use_bias=False, activation="relu")],
    "depthwise_conv2d_channels_first": lambda: [L.DepthwiseConv2D(2, depth_multiplier=3,
                                                                  data_format="channels_first")],
    "depthwise_conv1d": lambda: [L.DepthwiseConv1D(3, depth_multiplier=2, padding="same"),
                                 L.DepthwiseConv1D(2, strides=2)],
    "separable_conv2d": lambda: [L.SeparableConv2D(5, 3, depth_multiplier=2, padding="same", activation="relu"),
                                 L.SeparableConv2D(3, 2, strides=2, use_bias=False)],
    "separable_conv2d_channels_first": lambda: [L.SeparableConv2D(4, 3, data_format="channels_first",
                                                                  dilation_rate=2)],
    "separable_conv1d": lambda: [L.SeparableConv1D(4, 3, depth_multiplier=3, strides=2, padding="same")],
    "conv1d_transpose": lambda: [L.Conv1DTranspose(3, 3, strides=2, padding="same"),
                                 L.Conv1DTranspose(2, 2, strides=3, output_padding=1)],
    "conv3d_transpose": lambda: [L.Conv3DTranspose(3, (2, 3, 2), strides=(2, 1, 2), padding="same"),
                                 L.Conv3DTranspose(2, 2, dilation_rate=(1, 2, 1), activation="relu")],
    "conv2d_transpose_channels_first": lambda: [L.Conv2DTranspose(3, 3, strides=2, padding="same",
                                                                  data_format="channels_first")],
    "prelu": lambda: [L.PReLU(shared_axes=[1, 2]), L.PReLU()],
    "group_normalization": lambda: [L.GroupNormalization(2), L.GroupNormalization(-1, axis=1, epsilon=1e-5),
                                    L.GroupNormalization(3, center=False)],
    "rms_normalization": lambda: [L.RMSNormalization(), L.RMSNormalization(axis=[1, 2], epsilon=1e-3)],
    "spectral_normalization": lambda: [L.SpectralNormalization(L.Dense(4)),
                                       L.SpectralNormalization(L.Conv1D(3, 2), power_iterations=3)],
    "reversible_embedding": lambda: [L.ReversibleEmbedding(12, 4, tie_weights=False, logit_soft_cap=3.0)],
}

IDENTITY = {
    "gaussian_noise": lambda: L.GaussianNoise(0.3, seed=3),
    "gaussian_dropout": lambda: L.GaussianDropout(0.4),
    "alpha_dropout": lambda: L.AlphaDropout(0.2, noise_shape=(None, 1), seed=1),
    "spatial_dropout1d": lambda: L.SpatialDropout1D(0.3),
    "spatial_dropout2d_cf": lambda: L.SpatialDropout2D(0.3, data_format="channels_first"),
    "spatial_dropout3d": lambda: L.SpatialDropout3D(0.3, seed=2),
    "activity_regularization": lambda: L.ActivityRegularization(l1=0.1, l2=0.01),
    "softmax": lambda: L.Softmax(axis=[1, 2]),
    "elu": lambda: L.ELU(alpha=0.7),
    "leaky_relu": lambda: L.LeakyReLU(negative_slope=0.1),
    "relu": lambda: L.ReLU(max_value=2.0, negative_slope=0.1, threshold=0.5),
}

STATELESS = {
    "max_pooling3d": lambda: L.MaxPooling3D((2, 2, 1), strides=(1, 2, 1)),
    "average_pooling3d_same": lambda: L.AveragePooling3D(2, padding="same"),
    "max_pooling3d_channels_first": lambda: L.MaxPooling3D(2, padding="same", data_format="channels_first"),
    "max_pooling2d_channels_first": lambda: L.MaxPooling2D(3, 2, padding="same", data_format="channels_first"),
    "average_pooling2d_channels_first": lambda: L.AveragePooling2D(2, data_format="channels_first"),
    "average_pooling1d_channels_first": lambda: L.AveragePooling1D(3, 2, padding="same",
                                                                   data_format="channels_first"),
    "unit_normalization": lambda: L.UnitNormalization(axis=[1, 2]),
    "global_average_pooling3d": lambda: L.GlobalAveragePooling3D(),
    "global_max_pooling3d_keepdims_cf": lambda: L.GlobalMaxPooling3D(keepdims=True, data_format="channels_first"),
    "global_average_pooling2d_keepdims": lambda: L.GlobalAveragePooling2D(keepdims=True),
    "global_max_pooling2d_cf": lambda: L.GlobalMaxPooling2D(data_format="channels_first"),
    "global_average_pooling1d_cf": lambda: L.GlobalAveragePooling1D(data_format="channels_first"),
    "adaptive_average_pooling1d": lambda: L.AdaptiveAveragePooling1D(3),
    "adaptive_max_pooling2d": lambda: L.AdaptiveMaxPooling2D((2, 3)),
    "adaptive_average_pooling2d_cf": lambda: L.AdaptiveAveragePooling2D(3, data_format="channels_first"),
    "adaptive_max_pooling3d": lambda: L.AdaptiveMaxPooling3D((2, 1, 3)),
    "up_sampling1d": lambda: L.UpSampling1D(3),
    "up_sampling2d_cf": lambda: L.UpSampling2D((2, 3), data_format="channels_first"),
    "up_sampling2d_bilinear_cf": lambda: L.UpSampling2D(2, data_format="channels_first", interpolation="bilinear"),
    "up_sampling3d": lambda: L.UpSampling3D((1, 2, 3)),
    "up_sampling3d_cf": lambda: L.UpSampling3D(2, data_format="channels_first"),
    "zero_padding1d": lambda: L.ZeroPadding1D((1, 3)),
    "zero_padding2d_cf": lambda: L.ZeroPadding2D(((1, 2), (0, 3)), data_format="channels_first"),
    "zero_padding3d": lambda: L.ZeroPadding3D(((1, 0), (2, 1), (0, 1))),
    "zero_padding3d_cf": lambda: L.ZeroPadding3D(1, data_format="channels_first"),
    "cropping1d": lambda: L.Cropping1D((2, 1)),
    "cropping2d_cf": lambda: L.Cropping2D(((1, 0), (2, 1)), data_format="channels_first"),
    "cropping3d": lambda: L.Cropping3D(((1, 0), (0, 2), (1, 1))),
    "cropping3d_cf": lambda: L.Cropping3D(1, data_format="channels_first"),
}


def _model(case):
    x = OUTPUTS[f"{case}/x"]
    layers = WEIGHTED[case]()
    model = mk.Sequential([mk.Input(x.shape[1:], dtype=x.dtype.name)] + layers)
    model.build((None,) + x.shape[1:])
    return model, layers, x


def _h5_layout(path):
    """Every dataset of a weights file under ``layers/``: its path and shape."""
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, item: found.__setitem__(name, item.shape) if isinstance(item, h5py.Dataset)
                     else None)
    return {name: shape for name, shape in found.items() if name.startswith("layers/")}


@pytest.mark.parametrize("case", sorted(WEIGHTED))
def test_keras_weights_load_and_give_keras_outputs(case):
    model, _, x = _model(case)
    model.load_weights(os.path.join(HERE, f"{case}.weights.h5"))
    assert_close(model(x), OUTPUTS[f"{case}/y"], rtol=1e-5, atol=1e-5, what=case)


@pytest.mark.parametrize("case", sorted(WEIGHTED))
def test_weights_files_have_keras_layout(case, tmp_path):
    model, _, _ = _model(case)
    path = str(tmp_path / "ours.weights.h5")
    model.save_weights(path)
    assert _h5_layout(path) == _h5_layout(os.path.join(HERE, f"{case}.weights.h5"))


def _comparable(config):
    """A config without what legitimately differs: the name, Keras's dtype policy object, the module
    of nested objects (``keras_config`` translates it in .keras files) and their None-valued
    arguments; lists for tuples."""
    def strip(value):
        if isinstance(value, dict) and "class_name" in value:
            inner = {k: strip(v) for k, v in (value.get("config") or {}).items()
                     if v is not None and k not in ("name", "dtype")}
            return {"class_name": value["class_name"], "config": inner}
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items()}
        return value
    config = strip(json.loads(json.dumps(config, default=list)))
    config.pop("name", None)
    config.pop("dtype", None)
    return config


@pytest.mark.parametrize("case", sorted(WEIGHTED) + sorted(STATELESS) + sorted(IDENTITY))
def test_configs_are_keras_s_and_round_trip(case):
    if case in WEIGHTED:
        layers = _model(case)[1]
    else:
        layers = [{**STATELESS, **IDENTITY}[case]()]
    for layer, expected in zip(layers, CONFIGS[case], strict=True):
        config = layer.get_config()
        assert _comparable(config) == _comparable(expected), type(layer).__name__
        again = type(layer).from_config(config)
        assert _comparable(again.get_config()) == _comparable(config)


@pytest.mark.parametrize("case", sorted(STATELESS))
def test_stateless_layers_give_keras_outputs(case):
    x = OUTPUTS[f"{case}/x"]
    layer = STATELESS[case]()
    y = layer(x)
    assert_close(y, OUTPUTS[f"{case}/y"], rtol=1e-5, atol=1e-6, what=case)
    assert tuple(layer.compute_output_shape(x.shape)) == y.shape


@pytest.mark.parametrize("case", sorted(IDENTITY))
def test_regularization_and_activation_layers_in_inference_give_keras_outputs(case):
    x = OUTPUTS[f"{case}/x"]
    assert_close(IDENTITY[case]()(x), OUTPUTS[f"{case}/y"], rtol=1e-6, atol=1e-7, what=case)


def test_spectral_normalization_training_call_normalizes_the_kernel_as_keras():
    model, layers, x = _model("spectral_normalization")
    model.load_weights(os.path.join(HERE, "spectral_normalization.weights.h5"))
    model(x)
    assert_close(model(x, training=True), OUTPUTS["spectral_normalization/y_train"], rtol=1e-5, atol=1e-5)
    assert_close(layers[0].layer.kernel, OUTPUTS["spectral_normalization/kernel_after"], rtol=1e-5, atol=1e-6)


def test_reversible_embedding_reverse_projection_gives_keras_logits():
    model, layers, _ = _model("reversible_embedding")
    model.load_weights(os.path.join(HERE, "reversible_embedding.weights.h5"))
    logits = layers[0](OUTPUTS["reversible_embedding/v"], reverse=True)
    assert_close(logits, OUTPUTS["reversible_embedding/y_reverse"], rtol=1e-5, atol=1e-6)
