"""The new layers load weights files saved by Keras 3 and give Keras's outputs.

The fixtures (``tests/fixtures/keras``) were written by ``make_layer_fixtures.py`` with Keras 3
on JAX: a small Sequential per case with fixed weights, its ``.weights.h5`` file, a fixed input
and Keras's output for it.
"""
import os

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk

L = mk.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras")

MODELS = {
    "conv2d_transpose_same": lambda: [L.Conv2DTranspose(4, 3, strides=2, padding="same")],
    "conv2d_transpose_valid": lambda: [L.Conv2DTranspose(2, (2, 3), strides=(3, 2), activation="relu")],
    "conv2d_transpose_output_padding": lambda: [
        L.Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=1),
        L.Conv2DTranspose(2, 2, strides=3, padding="valid", output_padding=(1, 2), use_bias=False)],
    "conv2d_transpose_dilated": lambda: [L.Conv2DTranspose(3, 3, padding="same", dilation_rate=2)],
    "conv1d": lambda: [L.Conv1D(6, 3, padding="causal", dilation_rate=2),
                       L.Conv1D(4, 2, strides=2, padding="same", activation="tanh"),
                       L.Conv1D(2, 3, groups=2, use_bias=False)],
    "embedding": lambda: [L.Embedding(10, 4)],
    "layer_normalization": lambda: [L.LayerNormalization(), L.LayerNormalization(axis=[1, 2], epsilon=1e-5),
                                    L.LayerNormalization(rms_scaling=True)],
    "text_model": lambda: [L.Embedding(12, 5), L.Conv1D(4, 3, activation="relu"), L.LayerNormalization(),
                           L.MaxPooling1D(2), L.GlobalAveragePooling1D(), L.Dense(3), L.Softmax()],
}


def fixture(case):
    data = np.load(os.path.join(HERE, f"{case}.npz"))
    return {k: data[k] for k in data}


@pytest.mark.parametrize("case", sorted(MODELS))
def test_weights_saved_by_keras_load_and_give_keras_outputs(case):
    data = fixture(case)
    x = data["x"]
    model = mk.Sequential([mk.Input(x.shape[1:], dtype=x.dtype.name)] + MODELS[case]())
    model.build((None,) + x.shape[1:])
    model.load_weights(os.path.join(HERE, f"{case}.weights.h5"))
    assert_close(model(x), data["y"], rtol=1e-5, atol=1e-5, what=case)


STATELESS = {
    "up_nearest": lambda: L.UpSampling2D((2, 3)),
    "up_bilinear": lambda: L.UpSampling2D(2, interpolation="bilinear"),
    "up_bicubic": lambda: L.UpSampling2D((3, 2), interpolation="bicubic"),
    "zero_padding": lambda: L.ZeroPadding2D(((1, 2), (0, 3))),
    "cropping": lambda: L.Cropping2D(((1, 0), (2, 1))),
    "leaky_relu": lambda: L.LeakyReLU(),
    "relu_options": lambda: L.ReLU(max_value=0.8, negative_slope=0.1, threshold=0.2),
    "elu": lambda: L.ELU(alpha=0.5),
    "softmax": lambda: L.Softmax(axis=1),
    "softmax_axes": lambda: L.Softmax(axis=(1, 2)),
    "global_average_pooling1d": lambda: L.GlobalAveragePooling1D(keepdims=True),
    "max_pooling1d": lambda: L.MaxPooling1D(3, 2, padding="same"),
    "average_pooling1d": lambda: L.AveragePooling1D(3, 2, padding="same"),
    "rescaling": lambda: L.Rescaling(1 / 255, offset=-0.5),
    "repeat_vector": lambda: L.RepeatVector(3),
    "permute": lambda: L.Permute((3, 1, 2)),
}


@pytest.fixture(scope="module")
def stateless():
    return fixture("stateless")


@pytest.mark.parametrize("name", sorted(STATELESS))
def test_stateless_layers_give_keras_outputs(stateless, name):
    out = STATELESS[name]()(stateless[f"{name}_x"])
    assert out.dtype == mk.float32
    assert_close(out, stateless[f"{name}_y"], rtol=1e-5, atol=1e-5, what=name)


def test_weights_file_round_trip_uses_keras_paths(tmp_path):
    """minikeras writes the layout Keras reads: same groups, same datasets, same values."""
    import h5py
    model = mk.Sequential([mk.Input((6,), dtype="int32")] + MODELS["text_model"]())
    model.build((None, 6))
    path = os.path.join(HERE, "text_model.weights.h5")
    model.load_weights(path)
    model.save_weights(str(tmp_path / "m.weights.h5"))
    with h5py.File(path) as theirs, h5py.File(tmp_path / "m.weights.h5") as ours:
        names = []
        theirs.visit(names.append)
        for name in names:
            if isinstance(theirs[name], h5py.Dataset):
                np.testing.assert_array_equal(ours[name][()], theirs[name][()])
        assert sorted(k for k in ours["layers"]) == sorted(k for k in theirs["layers"])
