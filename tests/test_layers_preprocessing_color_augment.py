"""Keras 3's colour augmentation layers against Keras 3 on JAX (tests/fixtures/keras_color_augment/,
made by its script): each layer's deterministic part for given draws, configs, symbolic shapes,
``.keras`` files both ways, bad input; the random draws by their properties (range,
determinism under ``mk.random.set_seed``, inference passthrough)."""
import json
import os

import numpy as np
import pytest

import minikeras as mk

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_color_augment")
F = np.load(os.path.join(HERE, "color_augment.npz"))
X, LEVELS = F["images"], F["levels"]
KERAS_CONFIGS = json.loads(str(F["configs"]))
L = mk.layers
RANGES = {"255": ((0, 255), 1.0), "1": ((0, 1), 1 / 255.0)}


def close(key, got, atol=1e-4):
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    assert got.shape == F[key].shape, key
    np.testing.assert_allclose(got, F[key], rtol=1e-5, atol=atol, err_msg=key)


def same_config(layer, name):
    """The layer's config is Keras's (but the name and the dtype policy's spelling) and rebuilds the layer."""
    config = json.loads(json.dumps(layer.get_config()))
    keras_config = dict(KERAS_CONFIGS[name])
    config.pop("dtype"), config.pop("name"), keras_config.pop("name")
    if name == "RandomGrayscale":  # Keras 3.15 leaves its seed out of the config; a rebuilt layer here keeps it
        assert config.pop("seed") == layer.seed
    assert config == keras_config, name
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


@pytest.mark.parametrize("tag", ["255", "1"])
def test_value_range_layers_are_keras(tag):
    value_range, scale = RANGES[tag]
    x = mk.constant(X * np.float32(scale))
    levels = mk.constant(LEVELS * np.float32(scale))
    close(f"Solarization/{tag}", L.Solarization(value_range=value_range).transform_images(x, {
        "additions": np.array([20.0, 60.0], np.float32).reshape(2, 1, 1, 1),
        "thresholds": np.array([100.0, 180.0], np.float32).reshape(2, 1, 1, 1)}))
    close(f"AutoContrast/{tag}", L.AutoContrast(value_range=value_range)(F[f"AutoContrast/{tag}/images"]))
    close(f"Equalization/{tag}", L.Equalization(value_range=value_range)(levels))
    close(f"RandomPosterization/{tag}", L.RandomPosterization(4, value_range=value_range).transform_images(
        levels, {"shift_factor": np.array([3, 6], np.uint8)}))
    close(f"RandomHue/{tag}", L.RandomHue(0.5, value_range=value_range).transform_images(
        x, {"factor": np.array([0.2, -0.35], np.float32)}), atol=1e-3 * scale)
    close(f"RandomSaturation/{tag}", L.RandomSaturation(0.5, value_range=value_range).transform_images(
        x, {"factor": np.array([0.4, 1.7], np.float32)}), atol=1e-3 * scale)


def test_auto_contrast_keeps_a_constant_channel_and_works_at_inference():
    images = F["AutoContrast/255/images"]
    out = L.AutoContrast()(images, training=False).numpy()
    np.testing.assert_array_equal(out[0, ..., 1], images[0, ..., 1])
    np.testing.assert_allclose(out.min(axis=(1, 2))[1], 0.0, atol=1e-4)
    np.testing.assert_allclose(out.max(axis=(1, 2))[1], 255.0, atol=1e-3)


def test_equalization_is_keras_with_fewer_bins_and_passes_through_at_inference():
    close("Equalization/bins64", L.Equalization(bins=64)(LEVELS))
    np.testing.assert_array_equal(L.Equalization()(LEVELS, training=False).numpy(), LEVELS)


def test_per_image_draw_layers_are_keras():
    close("RandomInvert", L.RandomInvert(value_range=(0, 200)).transform_images(
        mk.constant(X * np.float32(200 / 255)), {"apply_inversion": np.array([True, False])}))
    close("RandomColorDegeneration", L.RandomColorDegeneration(0.5, value_range=(0, 200)).transform_images(
        mk.constant(X), {"factor": np.array([0.3, -0.6], np.float32).reshape(2, 1, 1, 1)}))
    close("RandomGrayscale", L.RandomGrayscale().transform_images(
        mk.constant(X), np.array([True, False]).reshape(2, 1, 1, 1)))
    sharpness = {"factor": np.array([0.1, 0.9], np.float32)}
    close("RandomSharpness", L.RandomSharpness(0.5, value_range=(0, 200)).transform_images(mk.constant(X), sharpness))
    channels_first = L.RandomSharpness(0.5, data_format="channels_first")
    mk.random.set_seed(0)
    out = channels_first(np.transpose(X, (0, 3, 1, 2)))
    assert out.shape == F["RandomSharpness/channels_first"].shape
    close("RandomSharpness/channels_first", np.transpose(channels_first.transform_images(mk.constant(X), sharpness)
                                                         .numpy(), (0, 3, 1, 2)))


def test_rand_augment_and_aug_mix_compose_as_keras():
    layer = L.RandAugment(num_ops=2)
    close("RandAugment/9_9", layer.transform_images(mk.constant(LEVELS), {"layer_idxes": np.array([9, 9])}))
    close("RandAugment/10_9", layer.transform_images(mk.constant(LEVELS), {"layer_idxes": np.array([10, 9])}))
    mix = L.AugMix()
    none = len(mix.augmentations)
    auto, equal = 5, 6  # AUG_MIX_ALL_OPS's auto_contrast and equalization
    close("AugMix", mix.transform_images(mk.constant(LEVELS), {
        "chain_mixing_weights": np.array([0.5, 0.3, 0.2], np.float32), "weight_sample": np.float32(0.25),
        "layer_idxes": np.array([[none, auto, none], [equal, none, auto], [none, none, none]])}))
    np.testing.assert_array_equal(L.RandAugment(num_ops=0)(LEVELS).numpy(), LEVELS)
    kept = mix.transform_images(mk.constant(LEVELS), {"chain_mixing_weights": np.array([0.2, 0.3, 0.5], np.float32),
                                                      "weight_sample": np.float32(1.0),
                                                      "layer_idxes": np.array([[auto] * 3] * 3)})
    np.testing.assert_array_equal(kept.numpy(), LEVELS)


@pytest.mark.parametrize("name,make", [
    ("Solarization", lambda: L.Solarization((0.1, 0.3), 0.6, value_range=(0, 1), seed=1)),
    ("AutoContrast", lambda: L.AutoContrast(value_range=(0, 1))),
    ("Equalization", lambda: L.Equalization(value_range=(0, 1), bins=64)),
    ("RandomPosterization", lambda: L.RandomPosterization(5, value_range=(0, 1), seed=2)),
    ("RandomInvert", lambda: L.RandomInvert(0.4, value_range=(0, 1), seed=3)),
    ("RandomColorDegeneration", lambda: L.RandomColorDegeneration(0.4, seed=4)),
    ("RandomGrayscale", lambda: L.RandomGrayscale(0.3, seed=5)),
    ("RandomHue", lambda: L.RandomHue((0.2, 0.6), seed=6)),
    ("RandomSaturation", lambda: L.RandomSaturation(0.7, value_range=(0, 1), seed=7)),
    ("RandomSharpness", lambda: L.RandomSharpness(0.3, seed=8)),
    ("RandomColorJitter", lambda: L.RandomColorJitter(value_range=(0, 1), brightness_factor=0.2, contrast_factor=0.3,
                                                      saturation_factor=(0.4, 0.6), hue_factor=0.1, seed=9)),
    ("RandAugment", lambda: L.RandAugment(value_range=(0, 1), num_ops=3, factor=0.4, interpolation="nearest",
                                          seed=10)),
    ("AugMix", lambda: L.AugMix(value_range=(0, 1), num_chains=2, chain_depth=4, factor=(0.1, 0.4), alpha=0.5,
                                all_ops=False, seed=11)),
])
def test_configs_are_keras(name, make):
    same_config(make(), name)


def test_draws_by_their_ranges():
    mk.random.set_seed(5)  # the mean-of-draws bounds below hold for most seeds, not all: fix the draws
    shape = (256, 4, 4, 3)
    solar = L.Solarization((0.1, 0.2), (0.3, 0.5)).get_random_transformation(shape)
    additions, thresholds = np.asarray(solar["additions"]), np.asarray(solar["thresholds"])
    assert additions.shape == (256, 1, 1, 1)  # Keras 3 draws in [lower, upper * 255]
    assert additions.min() >= 0.1 and additions.max() <= 51 and thresholds.min() >= 0.3 and thresholds.max() <= 127.5
    bits = 8 - np.asarray(L.RandomPosterization((2, 5)).get_random_transformation(shape)["shift_factor"]).astype(int)
    assert set(bits) == {2, 3, 4}  # Keras 3 never draws the upper end
    assert set(8 - np.asarray(L.RandomPosterization((3, 3)).get_random_transformation(shape)["shift_factor"])) == {3}
    inverted = np.asarray(L.RandomInvert(0.5).get_random_transformation(shape)["apply_inversion"])
    assert 0.1 < inverted.mean() < 0.45  # probability drawn in [0, 0.5]: a quarter on average
    hue = np.asarray(L.RandomHue((0.2, 0.6)).get_random_transformation(shape)["factor"])
    assert np.all((np.abs(hue) >= 0.1 - 1e-6) & (np.abs(hue) <= 0.3 + 1e-6)) and (hue < 0).any() and (hue > 0).any()
    saturation = np.asarray(L.RandomSaturation(0.5).get_random_transformation(shape)["factor"])
    assert saturation.min() >= -1 / 3 - 1e-5 and saturation.max() <= 1 + 1e-5  # d / (1 - d), d in [-0.5, 0.5]
    gray = np.asarray(L.RandomGrayscale(0.3).get_random_transformation(shape))
    assert gray.shape == (256, 1, 1, 1) and 0.2 < gray.mean() < 0.4
    mix = L.AugMix(num_chains=4, alpha=0.5).get_random_transformation(shape)
    np.testing.assert_allclose(np.sum(mix["chain_mixing_weights"]), 1.0, rtol=1e-5)
    assert 0 <= float(mix["weight_sample"]) <= 1 and np.asarray(mix["layer_idxes"]).shape == (4, 3)
    assert np.asarray(mix["layer_idxes"]).max() <= 11


def test_layers_keep_the_value_range_and_the_grayscale_is_gray():
    rng = np.random.default_rng(1)
    images = rng.uniform(0, 1, (4, 6, 5, 3)).astype(np.float32)  # the shape of the other tests' batches
    for layer in [L.Solarization(0.5, 0.5, value_range=(0, 1)), L.RandomColorDegeneration(1.0, value_range=(0, 1)),
                  L.RandomHue(1.0, value_range=(0, 1)), L.RandomSharpness(1.0, value_range=(0, 1)),
                  L.RandomPosterization(3, value_range=(0, 1)), L.RandomInvert(value_range=(0, 1)),
                  L.RandomColorJitter((0, 1), 0.3, 0.5, 0.5, 0.5), L.RandAugment((0, 1), num_ops=2),
                  L.AugMix((0, 1))]:
        out = layer(images).numpy()
        assert out.shape == images.shape and out.min() >= -1e-6 and out.max() <= 1 + 1e-6, type(layer).__name__
    gray = L.RandomGrayscale(1.0)(images).numpy()
    np.testing.assert_allclose(gray[..., 0], gray[..., 2])
    np.testing.assert_allclose(gray[..., 0], images @ np.array([0.2989, 0.5870, 0.1140], np.float32), rtol=1e-5)
    np.testing.assert_allclose(L.RandomSaturation((0.0, 0.0), value_range=(0, 1))(images).numpy().std(axis=-1), 0,
                               atol=1e-5)  # no saturation left
    np.testing.assert_allclose(L.RandomSharpness((0.5, 0.5))(images).numpy(), images, rtol=1e-6)
    np.testing.assert_allclose(L.RandomHue((0.0, 0.0), value_range=(0, 1))(images).numpy(), images, atol=1e-5)


ALL_LAYERS = [lambda: L.Solarization(0.3, 0.4), lambda: L.RandomPosterization(5), lambda: L.RandomInvert(0.6),
              lambda: L.RandomColorDegeneration(0.5), lambda: L.RandomGrayscale(0.6), lambda: L.RandomHue(0.5),
              lambda: L.RandomSaturation(0.5), lambda: L.RandomSharpness(0.9),
              lambda: L.RandomColorJitter(brightness_factor=0.2, hue_factor=0.3), lambda: L.RandAugment(num_ops=1),
              lambda: L.AugMix()]


@pytest.mark.parametrize("make", ALL_LAYERS)
def test_symbolic_compiled_seeded_and_channels_first(make):
    layer = make()
    images = np.concatenate([LEVELS] * 2)
    inputs = mk.Input((6, 5, 3))
    model = mk.Model(inputs, layer(inputs))
    assert model.output_shape == (None, 6, 5, 3)
    np.testing.assert_array_equal(model.predict(images, verbose=0), images)
    step = mk.function(lambda x: layer(x, training=True))
    mk.random.set_seed(11)
    first = step(images).numpy()
    assert first.shape == images.shape
    mk.random.set_seed(11)
    np.testing.assert_array_equal(step(images).numpy(), first)
    outs = [step(images).numpy() for _ in range(4)]
    assert any(not np.array_equal(out, first) for out in outs)  # the draws advance
    channels_first = type(layer).from_config({**layer.get_config(), "data_format": "channels_first"})
    assert channels_first(np.transpose(images, (0, 3, 1, 2))).shape == (4, 3, 6, 5)
    assert layer(LEVELS[0]).shape == LEVELS[0].shape
    out = layer({"images": images, "labels": np.arange(4)})
    np.testing.assert_array_equal(out["labels"], np.arange(4))


def test_keras_files_both_ways(tmp_path):
    model = mk.saving.load_model(os.path.join(HERE, "color_augment.keras"))
    assert [type(layer).__name__ for layer in model.layers] == [
        "Solarization", "AutoContrast", "RandomPosterization", "RandomInvert", "RandomColorDegeneration",
        "RandomGrayscale", "RandomHue", "RandomSaturation", "RandomSharpness", "RandomColorJitter", "RandAugment",
        "AugMix"]
    solar, _, poster, invert = model.layers[:4]
    assert (solar.addition_factor, solar.threshold_factor, poster.factor, invert.factor) == (
        (0, 0.2), (0, 0.5), (1, 6), (0, 0.3))
    jitter, rand_augment, aug_mix = model.layers[-3:]
    assert (jitter.brightness_factor, jitter.hue_factor, rand_augment.num_ops, aug_mix.chain_depth) == (0.1, 0.2, 1, 2)
    close("inference", model.predict(LEVELS, verbose=0), atol=1e-3)  # AutoContrast works at inference too
    assert model(LEVELS, training=True).shape == LEVELS.shape
    assert mk.saving.load_model(os.path.join(HERE, "equalization.keras")).layers[0].bins == 128
    model.save(str(tmp_path / "ours.keras"))
    loaded = mk.saving.load_model(str(tmp_path / "ours.keras"))
    assert [layer.get_config() for layer in loaded.layers] == [layer.get_config() for layer in model.layers]


def test_bad_input_names_the_layer():
    with pytest.raises(ValueError, match=r"Solarization.*addition_factor=1.5"):
        L.Solarization(1.5)
    with pytest.raises(ValueError, match=r"RandomPosterization.*\[1, 8\].*factor=9"):
        L.RandomPosterization(9)
    with pytest.raises(ValueError, match=r"RandomHue.*value_range=\(0, 1, 2\)"):
        L.RandomHue(0.5, value_range=(0, 1, 2))
    with pytest.raises(ValueError, match=r"RandomGrayscale.*factor=1.5"):
        L.RandomGrayscale(1.5)
    with pytest.raises(ValueError, match=r"RandomSaturation 'sat' expects RGB images with 3 channels.*\(2, 6, 5, 1\)"):
        L.RandomSaturation(0.5, name="sat")(LEVELS[..., :1])
    with pytest.raises(ValueError, match="rank"):
        L.RandomSharpness(0.5)(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="num_ops=-1"):
        L.RandAugment(num_ops=-1)
    with pytest.raises(ValueError, match="alpha=0"):
        L.AugMix(alpha=0)
    with pytest.raises(ValueError, match="bins=1"):
        L.Equalization(bins=1)


def test_auto_contrast_and_equalization_in_functional_models():
    inputs = mk.Input((6, 5, 3))
    model = mk.Model(inputs, L.Equalization()(L.AutoContrast()(inputs)))
    assert model.output_shape == (None, 6, 5, 3)
    stretched = L.AutoContrast()(LEVELS)
    np.testing.assert_allclose(model.predict(LEVELS, verbose=0), stretched.numpy(), atol=1e-3)  # no equalizing
    np.testing.assert_allclose(model(LEVELS, training=True).numpy(), L.Equalization()(stretched).numpy(), atol=1e-3)


def test_clahe_is_keras_and_works_at_inference():
    clahe = np.load(os.path.join(HERE, "clahe.npz"))
    images = clahe["images"]
    for name, kwargs in {"default": {}, "grid3x2": {"tile_grid_size": (3, 2), "clip_limit": 2.0},
                         "unclipped": {"tile_grid_size": (2, 2), "clip_limit": 0.0},
                         "range1": {"value_range": (0, 1), "tile_grid_size": (4, 3)}}.items():
        scale = np.float32(1 / 255.0 if "value_range" in kwargs else 1.0)
        layer = L.ContrastLimitedAdaptiveHistogramEqualization(**kwargs)
        np.testing.assert_allclose(layer(images * scale, training=False).numpy(), clahe[name], atol=1e-4 * scale,
                                   err_msg=name)
    channels_first = L.ContrastLimitedAdaptiveHistogramEqualization(data_format="channels_first")
    np.testing.assert_allclose(channels_first(np.transpose(images, (0, 3, 1, 2))).numpy(),
                               np.transpose(clahe["default"], (0, 3, 1, 2)), atol=1e-4)
    layer = L.ContrastLimitedAdaptiveHistogramEqualization((0, 1), 3.0, (4, 6))
    config = json.loads(json.dumps(layer.get_config()))
    keras_config = json.loads(str(clahe["config"]))
    config.pop("dtype"), config.pop("name"), keras_config.pop("name")
    assert config == keras_config
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()
    with pytest.raises(ValueError, match=r"tile_grid_size=\(0, 2\)"):
        L.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(0, 2))


@pytest.mark.parametrize("make,transformation", [
    (lambda: L.RandomSharpness(0.5), {"factor": np.array([0.1, 0.9], np.float32)}),
    (lambda: L.RandomHue(0.5), {"factor": np.array([0.2, -0.35], np.float32)}),
    (lambda: L.Solarization(), {"additions": np.full((2, 1, 1, 1), 20.0, np.float32),
                                "thresholds": np.full((2, 1, 1, 1), 128.0, np.float32)}),
])
def test_pixel_gradients_are_jax_grad_of_the_forward(make, transformation):
    import jax
    import jax.numpy as jnp

    from minikeras.layers.preprocessing import color_augment_forwards as forwards
    layer = make()
    forward = {"RandomSharpness": lambda x: forwards.sharpen(x, transformation["factor"], value_range=(0, 255)),
               "RandomHue": lambda x: forwards.shift_hue(x, transformation["factor"], value_range=(0, 255)),
               "Solarization": lambda x: forwards.solarize(x, transformation["additions"], transformation["thresholds"],
                                                           value_range=(0, 255))}[type(layer).__name__]
    weights = np.random.default_rng(2).normal(size=X.shape).astype(np.float32)
    images = mk.Variable(X)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(layer.transform_images(images.value(), transformation) * weights)
    expected = jax.grad(lambda x: jnp.sum(forward(x) * weights))(X)
    assert np.abs(expected).max() > 0.1
    np.testing.assert_allclose(tape.gradient(loss, images).numpy(), expected, rtol=1e-5, atol=1e-5)


def test_mixed_precision_layers_compute_in_bfloat16():
    policy = "mixed_bfloat16"
    for layer in [L.Solarization(0.2, 0.5, dtype=policy), L.RandomColorDegeneration(0.3, dtype=policy),
                  L.RandomContrast(0.3, dtype=policy), L.RandomBrightness(0.3, dtype=policy),
                  L.RandomHue(0.3, dtype=policy)]:
        assert layer(X).dtype == "bfloat16", type(layer).__name__
