"""Keras 3's geometric and mixing augmentation layers against Keras 3 on JAX
(tests/fixtures/keras_geometric_augment/, made by its script): each layer's deterministic part
for given draws, configs, symbolic shapes, ``.keras`` files, bad input; the random draws by
their properties (range, determinism under ``mk.random.set_seed``, inference passthrough)."""
import json
import os

import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras.image.transform import projective_transform
from minikeras.layers.preprocessing.image_shear import shear_transforms

F = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_geometric_augment", "geometric_augment.npz"))
X = F["images"]
KERAS_CONFIGS = json.loads(str(F["configs"]))
L = mk.layers


def close(key, got, atol=1e-4):
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert got.shape == F[key].shape, key
    np.testing.assert_allclose(got, F[key], rtol=1e-5, atol=atol, err_msg=key)


def same_config(layer, name):
    """The layer's config is Keras's (but the name and the dtype policy's spelling) and rebuilds the layer."""
    config = json.loads(json.dumps(layer.get_config()))
    keras_config = dict(KERAS_CONFIGS[name])
    config.pop("dtype"), config.pop("name"), keras_config.pop("name")
    assert config == keras_config, name
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "constant", "nearest"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_shear_transform_is_keras(fill_mode, interpolation):
    amounts = jnp.asarray(F["RandomShear/amounts"])
    got = projective_transform(mk.constant(X), mk.constant(np.asarray(shear_transforms(amounts[:, 0], amounts[:, 1]))),
                               interpolation, fill_mode, 3.0)
    # 'wrap' samples as Keras on TensorFlow (as the sibling geometric layers); jax.scipy wraps periodically
    close(f"RandomShear/{fill_mode}/{interpolation}" + ("/tensorflow" if fill_mode == "wrap" else ""), got)


def test_shear_layer_draws_a_sign_per_image():
    layer = L.RandomShear((0.31, 0.31), (0.43, 0.43), seed=2)
    images = np.concatenate([X] * 8)
    mk.random.set_seed(5)
    out = layer(images, training=True).numpy()
    plus = np.concatenate([F["RandomShear/plus"]] * 8)
    minus = np.concatenate([F["RandomShear/minus"]] * 8)
    is_plus = np.all(np.abs(out - plus) < 1e-3, axis=(1, 2, 3))
    is_minus = np.all(np.abs(out - minus) < 1e-3, axis=(1, 2, 3))
    assert np.all(is_plus | is_minus) and 0 < is_plus.sum() < len(images)
    mk.random.set_seed(5)
    np.testing.assert_array_equal(layer(images, training=True).numpy(), out)
    np.testing.assert_array_equal(layer(X, training=False).numpy(), X)
    channels_first = layer(np.transpose(images, (0, 3, 1, 2)), training=True)
    assert channels_first.shape == (16, 3, 5, 7)


def test_shear_config_and_bad_factors():
    same_config(L.RandomShear(0.2, (0.1, 0.3), fill_mode="constant", seed=4), "RandomShear")
    with pytest.raises(ValueError, match="x_factor=1.5"):
        L.RandomShear(1.5)
    with pytest.raises(ValueError, match=r"y_factor=\(0.1, 0.2, 0.3\)"):
        L.RandomShear(0.1, (0.1, 0.2, 0.3))
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomShear(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match="rank"):
        L.RandomShear(0.1)(np.zeros((2, 3)))
