"""LoRA on Dense, EinsumDense, Embedding and Conv2D, against Keras 3.15 on JAX (fixtures/lora,
recorded by record_lora.py there) and jax.grad."""
import os

import h5py
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "lora")
KERAS = np.load(os.path.join(HERE, "lora.npz"))


def _layers():
    return {"dense": (lambda: mk.layers.Dense(4), (None, 3)),
            "einsum_dense": (lambda: mk.layers.EinsumDense("ab,bcd->acd", (2, 3), bias_axes="d"), (None, 3)),
            "embedding": (lambda: mk.layers.Embedding(5, 4), (None, 3)),
            "conv2d": (lambda: mk.layers.Conv2D(3, 2), (None, 4, 4, 2))}


def _keras_layer(name):
    """A layer built, with LoRA enabled as in the fixture and Keras's weight values."""
    make, shape = _layers()[name]
    layer = make()
    layer.build(shape)
    layer.enable_lora(2, lora_alpha=3.0)
    for weight in layer.weights:
        weight.assign(KERAS[f"{name}/{weight.path.split('/')[-1]}"])
    return layer


def _model(layer, name):
    x = KERAS[f"{name}/x"]
    return mk.Sequential([mk.Input(x.shape[1:], dtype=x.dtype.name), layer])


def _h5_layer_name(f):
    # the file names a layer by its class in snake case (numbered by the file, not by the process)
    (name,) = [key for key in f["layers"] if key != "input_layer"]
    return name


@pytest.mark.parametrize("name", list(_layers()))
def test_output_merged_matrix_and_weights_file_as_keras(name, tmp_path):
    layer = _keras_layer(name)
    x = KERAS[f"{name}/x"]
    np.testing.assert_allclose(layer(mk.constant(x)).numpy(), KERAS[f"{name}/y"], rtol=1e-5, atol=1e-6)
    matrix = layer.embeddings if name == "embedding" else layer.kernel
    np.testing.assert_allclose(matrix.numpy(), KERAS[f"{name}/merged"], rtol=1e-6, atol=1e-7)
    path = str(tmp_path / "lora.weights.h5")
    _model(layer, name).save_weights(path)
    keras_file = {k.rsplit("/", 1)[1]: KERAS[k] for k in KERAS.files if k.startswith(f"{name}/file/")}
    with h5py.File(path) as f:
        group = f[f"layers/{_h5_layer_name(f)}/vars"]
        assert sorted(group) == sorted(keras_file)
        for key, value in keras_file.items():
            np.testing.assert_allclose(group[key][()], value, rtol=1e-6, atol=1e-7)
    plain, shape = _layers()[name]
    plain = plain()
    model = _model(plain, name)
    model.load_weights(path)  # the merged matrix loads into a layer without LoRA
    np.testing.assert_allclose(plain(mk.constant(x)).numpy(), KERAS[f"{name}/y"], rtol=1e-5, atol=1e-6)


def test_variables_trainability_dtypes_and_alpha():
    layer = mk.layers.Dense(4, kernel_regularizer="l2", lora_rank=2, lora_alpha=8, dtype="mixed_bfloat16")
    layer.build((None, 3))
    assert layer.lora_enabled and layer.lora_rank == 2
    assert layer.lora_alpha == 2  # Keras 3's Dense enables LoRA at build with alpha = rank
    names = [v.path.split("/")[-1] for v in layer.trainable_weights]
    assert names == ["bias", "lora_kernel_a", "lora_kernel_b"]
    assert [v.path.split("/")[-1] for v in layer.non_trainable_weights] == ["kernel"]
    a, b = layer.lora_factors()
    assert (a.shape, b.shape) == ((3, 2), (2, 4))
    assert a.dtype.name == b.dtype.name == "float32"
    assert not b.numpy().any()  # 'zeros': the layer starts as the frozen one
    assert layer.kernel.dtype.name == "bfloat16"  # the merged matrix, in the compute dtype
    assert len(layer.losses) == 2  # the factors carry the kernel's regularizer; the frozen kernel none
    conv = mk.layers.Conv2D(3, 2, lora_rank=2, lora_alpha=8)
    conv.build((None, 4, 4, 2))
    assert conv.lora_alpha == 8 and conv.lora_factors()[0].shape == (2, 2, 2, 2)
    embedding = mk.layers.Embedding(5, 4, lora_rank=3)
    embedding.build()
    assert [v.path.split("/")[-1] for v in embedding.trainable_weights] == ["lora_embeddings_a", "lora_embeddings_b"]
    config = mk.layers.Dense(4, lora_rank=2, lora_alpha=8).get_config()
    assert (config["lora_rank"], config["lora_alpha"]) == (2, 8)
    assert "lora_rank" not in mk.layers.Dense(4).get_config()
    revived = mk.layers.Conv2D.from_config(conv.get_config())
    revived.build((None, 4, 4, 2))
    assert revived.lora_enabled and revived.lora_alpha == 8


def test_errors():
    layer = mk.layers.Dense(2)
    with pytest.raises(ValueError, match="Cannot enable lora on a layer that isn't yet built"):
        layer.enable_lora(2)
    layer.build((None, 3))
    layer.enable_lora(2)
    with pytest.raises(ValueError, match="lora is already enabled"):
        layer.enable_lora(2)
    with pytest.raises(ValueError, match="incompatible with kernel constraints"):
        mk.layers.Dense(2, kernel_constraint="max_norm").enable_lora(2)
    with pytest.raises(ValueError, match="incompatible with embedding constraints"):
        mk.layers.Embedding(3, 2, embeddings_constraint="non_neg").enable_lora(2)
    built = mk.layers.EinsumDense("ab,bc->ac", 4)
    built.build((None, 3))
    with pytest.raises(ValueError, match="positive integer rank"):
        built.enable_lora(0)


def test_gradient_reaches_only_the_factors():
    layer = _keras_layer("dense")
    x = KERAS["dense/x"]
    kernel, bias = layer.non_trainable_weights[0].numpy(), layer.bias.numpy()
    a, b = (v.numpy() for v in layer.lora_factors())
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(mk.square(layer(mk.constant(x))))
    grads = tape.gradient(loss, list(layer.lora_factors()) + [layer.non_trainable_weights[0]])

    def reference(a, b):
        return jnp.sum(jnp.square(x @ (kernel + 1.5 * a @ b) + bias))
    expected = jax.grad(reference, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(grads[0].numpy(), expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1].numpy(), expected[1], rtol=1e-5, atol=1e-6)
    assert grads[2] is None  # the frozen kernel is not watched


def test_fit_trains_the_factors_and_files_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 8)).astype("float32"), rng.standard_normal((16, 4)).astype("float32")
    model = mk.Sequential([mk.Input((8,)), mk.layers.Dense(4)])
    layer = model.layers[0]
    layer.enable_lora(2)
    kernel = layer.non_trainable_weights[0].numpy()
    a, b = (v.numpy() for v in layer.lora_factors())
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    np.testing.assert_array_equal(layer.non_trainable_weights[0].numpy(), kernel)
    assert np.abs(layer.lora_factors()[0].numpy() - a).max() > 0
    assert np.abs(layer.lora_factors()[1].numpy() - b).max() > 0
    expected = model.predict(x, verbose=0)
    path = str(tmp_path / "lora.keras")
    model.save(path)
    revived = mk.models.load_model(path)
    assert revived.layers[0].lora_enabled
    np.testing.assert_allclose(revived.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)
    assert not revived.layers[0].lora_factors()[1].numpy().any()  # loaded merged, the factors zeroed
    weights = str(tmp_path / "lora.weights.h5")
    model.save_weights(weights)
    plain = mk.Sequential([mk.Input((8,)), mk.layers.Dense(4)])
    plain.load_weights(weights)
    np.testing.assert_allclose(plain.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)
    plain.save_weights(weights)  # a plain file into a LoRA model
    model.load_weights(weights)
    np.testing.assert_allclose(model.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_loads_keras_file():
    model = mk.models.load_model(os.path.join(HERE, "dense_lora.keras"))
    assert model.layers[-1].lora_enabled and model.layers[-1].lora_rank == 2
    np.testing.assert_allclose(model.predict(KERAS["keras/x"], verbose=0), KERAS["keras/y"], rtol=1e-5, atol=1e-6)
