"""Merge layers against NumPy formulas and against Keras 3's outputs (same inputs)."""
import numpy as np
import pytest

import minikeras as mk
from minikeras import layers

RNG = np.random.default_rng(1)
X3 = RNG.normal(size=(2, 3, 4)).astype("float32")
Y3 = RNG.normal(size=(2, 5, 4)).astype("float32")
A = RNG.normal(size=(3, 4)).astype("float32")
B = RNG.normal(size=(3, 4)).astype("float32")
C = RNG.normal(size=(3, 4)).astype("float32")


@pytest.mark.parametrize("layer, function, formula", [
    (layers.Add, layers.add, lambda a, b, c: a + b + c),
    (layers.Multiply, layers.multiply, lambda a, b, c: a * b * c),
    (layers.Average, layers.average, lambda a, b, c: (a + b + c) / 3),
    (layers.Maximum, layers.maximum, lambda a, b, c: np.maximum(np.maximum(a, b), c)),
    (layers.Minimum, layers.minimum, lambda a, b, c: np.minimum(np.minimum(a, b), c)),
    (layers.Concatenate, layers.concatenate, lambda a, b, c: np.concatenate([a, b, c], -1)),
])
def test_elementwise_merges_match_numpy(layer, function, formula):
    np.testing.assert_allclose(layer()([A, B, C]).numpy(), formula(A, B, C), rtol=1e-6)
    np.testing.assert_allclose(function([A, B, C]).numpy(), formula(A, B, C), rtol=1e-6)


def test_subtract_takes_exactly_two_inputs():
    np.testing.assert_allclose(layers.subtract([A, B]).numpy(), A - B)
    with pytest.raises(ValueError, match="exactly 2 inputs"):
        layers.Subtract()([A, B, C])


def test_merge_needs_a_list():
    with pytest.raises(ValueError, match="list of inputs"):
        layers.Add()(A)


def test_concatenate_axis_and_shape_check():
    np.testing.assert_allclose(layers.Concatenate(axis=0)([A, B]).numpy(), np.concatenate([A, B], 0))
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        layers.Concatenate()([mk.Input((3,)), mk.Input((2, 2))])
    assert layers.Concatenate(axis=1).get_config()["axis"] == 1


def test_dot_matches_keras_3():
    # expected values: keras.layers.Dot (Keras 3, jax backend) on the same arrays
    out = layers.Dot(axes=(2, 2))([X3, Y3]).numpy()
    assert out.shape == (2, 3, 5)
    np.testing.assert_allclose(out[1, 2], [-0.49076083, -0.6493079, 0.20285113, -1.9189957, -2.460575], rtol=1e-5)
    np.testing.assert_allclose(layers.Dot(axes=2, normalize=True)([X3, Y3]).numpy()[0, 1],
                               [-0.80621874, -0.48273802, 0.20843598, -0.55074984, -0.88650495], rtol=1e-5)
    flat = layers.dot([A, B], axes=1).numpy()
    assert flat.shape == (3, 1)
    np.testing.assert_allclose(flat[:, 0], [0.25821507, -2.8707075, -0.36844704], rtol=1e-5)
    np.testing.assert_allclose(flat[:, 0], (A * B).sum(1), rtol=1e-5)
    assert layers.Dot(axes=1).get_config()["axes"] == 1


def test_dot_gradient_matches_jax():
    import jax
    import jax.numpy as jnp
    a, b = mk.Variable(A), mk.Variable(B)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(layers.Dot(axes=1, normalize=True)([a, b]))
    ga = tape.gradient(loss, a)

    def reference(a, b):
        na = a / jnp.linalg.norm(a, axis=1, keepdims=True)
        nb = b / jnp.linalg.norm(b, axis=1, keepdims=True)
        return jnp.sum(na * nb)
    np.testing.assert_allclose(ga.numpy(), jax.grad(reference)(A, B), rtol=1e-4, atol=1e-6)


def test_merge_layers_on_symbolic_inputs_build_a_model():
    a, b = mk.Input((4,)), mk.Input((4,))
    out = layers.concatenate([layers.add([a, b]), layers.dot([a, b], axes=1)])
    assert out.shape == (None, 5)
    model = mk.Model([a, b], out)
    np.testing.assert_allclose(model([A, B]).numpy(), np.concatenate([A + B, (A * B).sum(1, keepdims=True)], 1),
                               rtol=1e-5)


def test_compute_output_shape_agrees_with_the_call():
    assert layers.Add().compute_output_shape([(None, 1, 4), (None, 3, 4)]) == (None, 3, 4)
    assert layers.Concatenate(axis=1).compute_output_shape([(None, 2, 4), (None, 3, 4)]) == (None, 5, 4)
    assert layers.Concatenate().compute_output_shape([(None, None), (None, 3)]) == (None, None)
    assert layers.Dot(axes=(2, 2)).compute_output_shape([(None, 3, 4), (None, 5, 4)]) == (None, 3, 5)
    assert layers.Dot(axes=1).compute_output_shape([(None, 4), (None, 4)]) == (None, 1)
    assert layers.Dot(axes=(2, 2))([X3, Y3]).shape == (2, 3, 5)
