"""Image preprocessing layers against Keras 3 (tests/fixtures/images/image_ops.npz, made by
real Keras): outputs (random layers made deterministic by a degenerate factor range, as in
the fixture script), configs, the training flag, compiled fit, Dataset.map, checkpoints."""
import json
import os

import numpy as np
import pytest

import minikeras as mk

F = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "images", "image_ops.npz"))
X, XU = F["images"], F["images_u8"]
L = mk.layers
GEOMETRY = [(mode, interpolation) for mode in ["reflect", "wrap", "constant", "nearest"]
            for interpolation in ["bilinear", "nearest"]]


def close(key, got, atol=2e-4):
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert got.dtype == F[key].dtype and got.shape == F[key].shape, key
    np.testing.assert_allclose(got.astype(np.float64), F[key], rtol=1e-5, atol=atol, err_msg=key)


@mk.function  # one compiled program for all the layers
def _layer_outputs(x, xu):
    out = {"Resizing/u8": L.Resizing(5, 4)(xu), "Resizing/crop": L.Resizing(4, 4, crop_to_aspect_ratio=True)(x),
           "Resizing/pad": L.Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=7.0)(x),
           "Resizing/bicubic_crop": L.Resizing(10, 3, interpolation="bicubic", crop_to_aspect_ratio=True)(x),
           "CenterCrop/small": L.CenterCrop(3, 6)(x), "CenterCrop/large": L.CenterCrop(7, 5)(x),
           "RandomCrop/small_input": L.RandomCrop(7, 5)(x, training=True)}
    for fill_mode, interpolation in GEOMETRY:
        key = f"{fill_mode}/{interpolation}"
        kwargs = dict(fill_mode=fill_mode, interpolation=interpolation, fill_value=3.0)
        out[f"RandomRotation/{key}"] = L.RandomRotation((0.1, 0.1), **kwargs)(x, training=True)
        if key in ("reflect/bilinear", "constant/nearest"):  # the sampler is shared: its matrices differ
            out[f"RandomZoom/{key}"] = L.RandomZoom((0.3, 0.3), (-0.4, -0.4), **kwargs)(x, training=True)
            out[f"RandomTranslation/{key}"] = L.RandomTranslation((0.2, 0.2), (-0.3, -0.3), **kwargs)(
                x, training=True)
    out["RandomRotation/large"] = L.RandomRotation((-0.3, -0.3), fill_mode="wrap")(x, training=True)
    out["RandomZoom/in_reflect"] = L.RandomZoom((0.6, 0.6), fill_mode="reflect")(x, training=True)
    out["RandomZoom/in_wrap"] = L.RandomZoom((0.7, 0.7), fill_mode="wrap")(x, training=True)
    return out


def test_layers_match_keras():
    """Resizing/CenterCrop/RandomCrop, and rotation/zoom/translation by a known factor in every
    fill mode and interpolation: Keras's transform for that factor."""
    outputs = _layer_outputs(X, XU)
    assert len(outputs) == 22
    for key, value in outputs.items():
        close(key, value)


def test_colour_layers_transform_as_keras():
    # a batch of identical images through RandomBrightness: each image's delta is in range and
    # applied as Keras's transform (add, clip to value_range)
    images = np.broadcast_to(X[:1], (16,) + X.shape[1:]).copy()
    out = L.RandomBrightness((-0.2, 0.3))(images, training=True).numpy()
    delta = np.median(out - images, axis=(1, 2, 3))
    assert np.all(delta >= -0.2 * 255 - 1e-3) and np.all(delta <= 0.3 * 255 + 1e-3) and np.ptp(delta) > 10
    np.testing.assert_allclose(out, np.clip(images + delta[:, None, None, None], 0, 255), atol=1e-3)
    expected = F["RandomBrightness/out"]
    np.testing.assert_allclose(np.clip(X + F["RandomBrightness/deltas"], 0, 255), expected, atol=1e-4)
    out = L.RandomContrast(0.5)(images, training=True).numpy()
    mean = images.mean(axis=(1, 2), keepdims=True)
    factor = np.median((out - mean) / (images - mean), axis=(1, 2, 3))
    assert np.all((factor >= 1.0 - 1e-4) & (factor <= 1.5 + 1e-4))  # Keras 3.15: 0.5 -> (0, 0.5)
    np.testing.assert_allclose(np.clip((X - X.mean((1, 2), keepdims=True)) * F["RandomContrast/factors"]
                                       + X.mean((1, 2), keepdims=True), 0, 255), F["RandomContrast/out"], atol=1e-3)


def test_configs_match_keras():
    ours = {"Resizing": L.Resizing(5, 4), "CenterCrop": L.CenterCrop(5, 4), "RandomCrop": L.RandomCrop(5, 4, seed=3),
            "RandomFlip": L.RandomFlip(), "RandomRotation": L.RandomRotation(0.2), "RandomZoom": L.RandomZoom(0.2),
            "RandomTranslation": L.RandomTranslation(0.1, 0.2), "RandomContrast": L.RandomContrast(0.2),
            "RandomBrightness": L.RandomBrightness(0.2)}
    for name, keras_config in json.loads(str(F["configs"])).items():
        config = json.loads(json.dumps(ours[name].get_config()))
        for key in ("name", "dtype"):
            config.pop(key), keras_config.pop(key)
        config.pop("trainable"), keras_config.pop("trainable")
        assert config == keras_config, name
        rebuilt = type(ours[name]).from_config(ours[name].get_config())
        assert rebuilt.get_config() == ours[name].get_config()


def test_keras_file_round_trip(tmp_path):
    layers = [L.Resizing(6, 6, interpolation="bicubic"), L.RandomFlip("horizontal", seed=1), L.RandomRotation(0.1),
              L.RandomZoom(0.1, 0.2), L.RandomTranslation(0.1, 0.2, fill_mode="constant"), L.RandomContrast(0.2),
              L.RandomBrightness(0.1), L.RandomCrop(5, 5), L.CenterCrop(4, 4)]
    model = mk.Sequential([mk.Input((5, 7, 3))] + layers)
    model.save(str(tmp_path / "augment.keras"))
    loaded = mk.saving.load_model(str(tmp_path / "augment.keras"))
    assert [layer.get_config() for layer in loaded.layers] == [layer.get_config() for layer in model.layers]


def test_training_flag_and_seeded_repeats():
    layer = L.RandomRotation(0.2, seed=7)
    np.testing.assert_array_equal(layer(X, training=False).numpy(), X)
    assert not np.allclose(layer(X).numpy(), X)  # Keras's default for these layers: a direct call augments
    mk.random.set_seed(3)
    first = [layer(X, training=True).numpy() for _ in range(2)]
    assert not np.allclose(first[0], first[1])
    mk.random.set_seed(3)
    np.testing.assert_array_equal(layer(X, training=True).numpy(), first[0])
    flips = L.RandomFlip("horizontal")(np.broadcast_to(X[:1], (64,) + X.shape[1:]), training=True).numpy()
    flipped = np.all(flips == X[0, :, ::-1], axis=(1, 2, 3))
    assert np.all(flipped | np.all(flips == X[0], axis=(1, 2, 3))) and 16 < flipped.sum() < 48
    crops = L.RandomCrop(3, 4)(X, training=True).numpy()
    assert any(np.array_equal(crops, X[:, i:i + 3, j:j + 4]) for i in range(3) for j in range(4))
    single = L.RandomTranslation(0.2, 0.2)(X[0], training=True)
    assert single.shape == X[0].shape
    channels_first = L.Resizing(3, 4, data_format="channels_first")(np.transpose(X, (0, 3, 1, 2)))
    close("resize/bilinear/3x4", np.transpose(channels_first.numpy(), (0, 2, 3, 1)))


def test_augmentation_inside_fit_predict_dataset_map_and_checkpoints(tmp_path):
    mk.random.set_seed(0)
    augment = mk.Sequential([L.RandomFlip("horizontal"), L.RandomRotation(0.1), L.RandomZoom(0.1)])
    model = mk.Sequential([mk.Input((5, 7, 3)), L.Rescaling(1 / 255), augment, L.Flatten(), L.Dense(2)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True), jit_compile=True)
    labels = np.array([0, 1])
    history = model.fit(X, labels, epochs=2, batch_size=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    np.testing.assert_allclose(model.predict(X, verbose=0), model(X, training=False).numpy(), rtol=1e-5, atol=1e-6)
    # a checkpoint restores the generator: the next augmentations repeat exactly
    path = str(tmp_path / "aug.weights.h5")
    model.save_weights(path)
    after_save = augment(X, training=True).numpy()
    augment(X, training=True)
    model.load_weights(path)
    np.testing.assert_array_equal(augment(X, training=True).numpy(), after_save)
    # Dataset.map after batch, as the tutorials write it
    ds = mk.data.Dataset.from_tensor_slices((X, labels)).batch(2).map(lambda x, y: (augment(x, training=True), y))
    images, _ = next(iter(ds))
    assert images.shape == X.shape and not np.allclose(images.numpy(), X)


def test_bad_input_names_the_layer():
    with pytest.raises(ValueError, match=r"Resizing 'resize_me' expects images of rank 3 .* or 4 .*received input "
                                         r"of rank 2, shape \(5, 7\)"):
        L.Resizing(2, 2, name="resize_me")(X[0, :, :, 0])
    with pytest.raises(ValueError, match="invalid value for argument `interpolation`"):
        L.Resizing(2, 2, interpolation="cubic")
    with pytest.raises(NotImplementedError, match="unknown `fill_mode`"):
        L.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(ValueError, match=r"Received: factor=1.5"):
        L.RandomRotation(1.5)
    with pytest.raises(ValueError, match="height_factor"):
        L.RandomZoom(-1.0)
