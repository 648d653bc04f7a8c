"""Keras 3's geometric and mixing augmentation layers against Keras 3 on JAX
(tests/fixtures/keras_geometric_augment/, made by its script): each layer's deterministic part
for given draws, configs, symbolic shapes, ``.keras`` files, bad input; the random draws by
their properties (range, determinism under ``mk.random.set_seed``, inference passthrough)."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk

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
    layer = L.RandomShear(0.5, 0.5, fill_mode=fill_mode, interpolation=interpolation, fill_value=3.0)
    got = layer.transform_images(mk.constant(X), {"shear_factor": F["RandomShear/amounts"]})
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
    drawn = np.asarray(L.RandomShear((0.1, 0.2), (0.3, 0.4)).get_random_transformation((64, 5, 7, 3))["shear_factor"])
    assert np.all((np.abs(drawn[:, 0]) >= 0.1) & (np.abs(drawn[:, 0]) <= 0.2))
    assert np.all((np.abs(drawn[:, 1]) >= 0.3) & (np.abs(drawn[:, 1]) <= 0.4))
    assert np.all(np.sign(drawn[:, 0]) == np.sign(drawn[:, 1])) and 0 < (drawn[:, 0] > 0).sum() < 64


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_perspective_is_keras(interpolation):
    layer = L.RandomPerspective(interpolation=interpolation, fill_value=3.0)
    start = layer.get_random_transformation(X.shape)["start_points"]
    np.testing.assert_array_equal(np.asarray(start)[0], [[0, 0], [6, 0], [0, 4], [6, 4]])
    got = layer.transform_images(mk.constant(X), {"apply_perspective": np.array([True, False]), "start_points": start,
                                                  "end_points": F["RandomPerspective/end_points"]})
    close(f"RandomPerspective/{interpolation}", got)


def test_perspective_draws():
    layer = L.RandomPerspective(factor=(1.0, 1.0), scale=0.4, seed=1)
    drawn = layer.get_random_transformation((64, 5, 7, 3))
    moves = np.asarray(drawn["end_points"]) / np.maximum(np.asarray(drawn["start_points"]), 1e-9) - 1.0
    corners = np.asarray(drawn["start_points"]) > 0
    assert np.all(np.abs(moves[corners]) <= 0.2 + 1e-6) and np.ptp(moves[corners]) > 0.3
    assert np.all(np.asarray(drawn["apply_perspective"]))
    assert not np.any(np.asarray(L.RandomPerspective(factor=0.0).get_random_transformation((64, 5, 7, 3))[
        "apply_perspective"]))
    np.testing.assert_array_equal(L.RandomPerspective(factor=0.0)(X).numpy(), X)
    same_config(L.RandomPerspective(0.5, scale=0.3, fill_value=2.0, seed=1), "RandomPerspective")
    with pytest.raises(ValueError, match="scale=1.5"):
        L.RandomPerspective(scale=1.5)
    with pytest.raises(NotImplementedError, match="bicubic"):
        L.RandomPerspective(interpolation="bicubic")


def test_gaussian_blur_is_keras():
    layer = L.RandomGaussianBlur(kernel_size=(3, 5), value_range=(0, 200))
    got = layer.transform_images(mk.constant(X), {"should_apply_blur": np.array([True, False]),
                                                  "blur_factor": np.array([0.6, 0.9], np.float32)})
    close("RandomGaussianBlur/out", got)
    drawn = L.RandomGaussianBlur(sigma=(0.2, 0.7)).get_random_transformation((8, 5, 7, 3))
    assert np.all((np.asarray(drawn["blur_factor"]) >= 0.2) & (np.asarray(drawn["blur_factor"]) <= 0.7 + 1e-5))
    same_config(L.RandomGaussianBlur(0.4, (3, 5), (0.2, 0.7), seed=2), "RandomGaussianBlur")
    with pytest.raises(ValueError, match="odd"):
        L.RandomGaussianBlur(kernel_size=4)
    with pytest.raises(ValueError, match="sigma"):
        L.RandomGaussianBlur(sigma=2.0)


def test_erasing_is_keras():
    from minikeras.layers.preprocessing.image_erasing import box_masks
    x0, x1, y0, y1 = (np.asarray(b) for b in F["RandomErasing/bounds"])
    masks = box_masks(X.shape, x0, x1, y0, y1)
    np.testing.assert_array_equal(np.asarray(masks), F["RandomErasing/masks"])
    layer = L.RandomErasing(fill_value=230.0, value_range=(0, 200))
    fill = layer.get_random_transformation(X.shape)["fill_value"]
    got = layer.transform_images(mk.constant(X), {"apply_erasing": np.array([True, False]), "batch_masks": masks,
                                                  "fill_value": fill})
    close("RandomErasing/out", got)


def test_erasing_draws():
    layer = L.RandomErasing(factor=(1.0, 1.0), scale=(0.1, 0.3), value_range=(0, 1), seed=3)
    images = np.full((64, 20, 20, 3), 0.5, np.float32)
    out = layer(images).numpy()
    erased = out != 0.5
    share = erased[..., 0].mean(axis=(1, 2))
    assert np.all(share > 0) and np.all(share <= 0.3 + 0.15)  # sides sqrt(s) of the image's, whole pixels
    assert out.min() >= 0 and out.max() <= 1 and np.unique(out[erased]).size > 100  # clipped normal noise
    per_channel = L.RandomErasing(1.0, fill_value=(10.0, 20.0, 30.0))(images * 100).numpy()
    assert set(np.unique(per_channel[..., 1])) <= {50.0, 20.0}
    same_config(L.RandomErasing(0.5, (0.1, 0.2), fill_value=4.0, seed=3), "RandomErasing")
    with pytest.raises(ValueError, match="fill_value"):
        L.RandomErasing(fill_value=(1.0, 2.0))


@pytest.mark.parametrize("fill_mode,interpolation", [("reflect", "bilinear"), ("constant", "nearest"),
                                                     ("wrap", "bilinear")])
def test_elastic_transform_is_keras(fill_mode, interpolation):
    layer = L.RandomElasticTransform(fill_mode=fill_mode, interpolation=interpolation, fill_value=3.0,
                                     value_range=(0, 250))
    got = layer.transform_images(mk.constant(F["RandomElasticTransform/images"]), {
        "apply_transform": np.array([True, False]), "distortion_factor": np.float32(0.7),
        "seed": np.array([42, 0], np.uint32)})
    close(f"RandomElasticTransform/{fill_mode}/{interpolation}", got, atol=5e-4)


def test_elastic_transform_draws():
    layer = L.RandomElasticTransform(factor=(1.0, 1.0), scale=(0.2, 0.6), seed=5)
    drawn = layer.get_random_transformation((4, 16, 14, 1))
    assert 0.2 <= float(drawn["distortion_factor"]) <= 0.6 and np.all(np.asarray(drawn["apply_transform"]))
    assert L.RandomElasticTransform(scale=0.0).get_random_transformation((4, 16, 14, 1)) is None
    images = F["RandomElasticTransform/images"]
    np.testing.assert_array_equal(L.RandomElasticTransform(factor=0.0)(images).numpy(), images)
    assert not np.allclose(layer(images).numpy(), images)
    same_config(L.RandomElasticTransform(0.5, (0.2, 0.6), fill_mode="constant", seed=5), "RandomElasticTransform")
    with pytest.raises(NotImplementedError, match="fill_mode"):
        L.RandomElasticTransform(fill_mode="edge")


def test_mixup_is_keras():
    layer = L.MixUp()
    mix = {"mix_weight": np.array([0.3, 0.8], np.float32), "permutation_order": np.array([1, 0])}
    close("MixUp/images", layer.transform_images(mk.constant(X), mix))
    close("MixUp/labels", layer.transform_labels(mk.constant(F["labels"]), mix))
    same_config(L.MixUp(0.4, seed=6), "MixUp")
    with pytest.raises(ValueError, match="alpha=0"):
        L.MixUp(alpha=0)


def test_cutmix_is_keras():
    from minikeras.layers.preprocessing.image_erasing import box_masks
    x0, x1, y0, y1 = (np.asarray(b) for b in F["RandomErasing/bounds"])
    cut = {"permutation_order": np.array([1, 0]), "batch_masks": box_masks(X.shape, x0, x1, y0, y1),
           "mix_weight": 1.0 - (x1 - x0) * (y1 - y0) / (7 * 5)}
    np.testing.assert_allclose(cut["mix_weight"], F["CutMix/mix_weight"].ravel(), rtol=1e-6)
    layer = L.CutMix()
    close("CutMix/images", layer.transform_images(mk.constant(X), cut))
    close("CutMix/labels", layer.transform_labels(mk.constant(F["labels"]), cut))
    same_config(L.CutMix((0.2, 0.5), seed=7), "CutMix")


def test_mixing_layers_mix_labels_of_a_dict_as_their_images():
    images = np.arange(8, dtype=np.float32)[:, None, None, None] * np.ones((8, 4, 4, 3), np.float32)
    labels = np.eye(8, dtype=np.float32)
    mk.random.set_seed(1)
    out = L.MixUp(alpha=0.5)({"images": images, "labels": labels})
    mixed, mixed_labels = out["images"].numpy(), out["labels"].numpy()
    np.testing.assert_allclose(mixed_labels.sum(axis=1), 1.0, rtol=1e-6)
    # each image is w * i + (1 - w) * j and its label puts w on i, 1 - w on j
    np.testing.assert_allclose(mixed[:, 0, 0, 0], mixed_labels @ np.arange(8), rtol=1e-5, atol=1e-5)
    assert not np.allclose(mixed, images)
    big = np.arange(8, dtype=np.float32)[:, None, None, None] * np.ones((8, 32, 32, 3), np.float32)
    out = L.CutMix(seed=2)({"images": big, "labels": labels})
    cut, cut_labels = out["images"].numpy()[..., 0], out["labels"].numpy()
    kept = (cut == np.arange(8)[:, None, None]).mean(axis=(1, 2))
    moved = kept < 1  # a pasted box of another image: the label weights are the kept area's share
    assert moved.sum() >= 4
    np.testing.assert_allclose(np.diagonal(cut_labels)[moved], kept[moved], atol=0.1)
    np.testing.assert_allclose(cut_labels.sum(axis=1), 1.0, rtol=1e-6)
    inputs = {"images": mk.Input((4, 4, 3)), "labels": mk.Input((8,))}
    symbolic = L.CutMix()(inputs)
    assert (symbolic["images"].shape, symbolic["labels"].shape) == ((None, 4, 4, 3), (None, 8))
    batches = mk.data.Dataset.from_tensor_slices((big, labels)).batch(4).map(
        lambda x, y: L.CutMix()({"images": x, "labels": y}))
    assert [batch["labels"].shape for batch in batches] == [(4, 8), (4, 8)]
    passthrough = L.MixUp()({"images": images, "labels": labels}, training=False)
    np.testing.assert_array_equal(passthrough["labels"], labels)
    np.testing.assert_array_equal(passthrough["images"].numpy(), images)
    with pytest.raises(NotImplementedError, match="bounding_boxes"):  # MixUp takes boxes; CutMix, as Keras's, not
        boxes = {"boxes": np.zeros((8, 1, 4)), "labels": np.zeros((8, 1))}
        L.CutMix(bounding_box_format="xyxy")({"images": images, "labels": labels, "bounding_boxes": boxes})
    with pytest.raises(ValueError, match="'images'"):
        L.CutMix()({"labels": labels})
    with pytest.raises(ValueError, match=r"labels of shape \(7, 8\).*images of shape \(8, 4, 4, 3\)"):
        L.MixUp()({"images": images, "labels": labels[:7]})


def test_max_num_bounding_boxes():
    layer = L.MaxNumBoundingBoxes(3)
    boxes = {"boxes": np.arange(40, dtype=np.float32).reshape(2, 5, 4), "labels": np.arange(10).reshape(2, 5)}
    out = layer({"images": X, "bounding_boxes": boxes})
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy(), boxes["boxes"][:, :3])
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"].numpy(), [[0, 1, 2], [5, 6, 7]])
    np.testing.assert_array_equal(out["images"].numpy(), X)
    out = L.MaxNumBoundingBoxes(4, fill_value=-2)({"images": X, "bounding_boxes": {
        "boxes": boxes["boxes"][:, :1], "labels": boxes["labels"][:, :1]}})
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"].numpy(), [[0, -2, -2, -2], [5, -2, -2, -2]])
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy()[1, 1:], -2)
    np.testing.assert_array_equal(layer(X).numpy(), X)
    assert layer.compute_output_shape({"images": (2, 5, 7, 3), "bounding_boxes": {
        "boxes": (2, 9, 4), "labels": (2, 9)}})["bounding_boxes"] == {"boxes": (2, 3, 4), "labels": (2, 3)}
    with pytest.raises(KeyError, match="'boxes'"):
        layer({"images": X, "bounding_boxes": {"boxes": boxes["boxes"], "labels": boxes["labels"], "scores": X}})
    with pytest.raises(ValueError, match=r"labels of shape \(2, 4\)"):
        layer({"images": X, "bounding_boxes": {"boxes": boxes["boxes"], "labels": boxes["labels"][:, :4]}})
    config = json.loads(json.dumps(L.MaxNumBoundingBoxes(5).get_config()))
    assert config.pop("fill_value") == -1  # Keras 3.15 leaves fill_value out of its config
    config.pop("name"), config.pop("dtype")
    assert config == {"trainable": True, "data_format": "channels_last", "max_number": 5}


def test_pipeline_applies_its_layers_in_order():
    pipeline = L.Pipeline([L.RandomFlip("horizontal", seed=1), L.RandomErasing(1.0, fill_value=0.0),
                           L.MaxNumBoundingBoxes(2)])
    assert [type(layer).__name__ for layer in pipeline.layers] == ["RandomFlip", "RandomErasing",
                                                                   "MaxNumBoundingBoxes"]
    np.testing.assert_array_equal(pipeline(X, training=False).numpy(), X)
    out = pipeline({"images": X, "labels": F["labels"]}).copy()
    np.testing.assert_array_equal(out["labels"], F["labels"])
    assert np.any(out["images"].numpy() == 0.0)
    config = pipeline.get_config()
    assert sorted(config) == ["layers", "name"]  # as Keras 3
    rebuilt = L.Pipeline.from_config(config)
    assert [layer.get_config() for layer in rebuilt.layers] == [layer.get_config() for layer in pipeline.layers]
    with pytest.raises(ValueError, match="list of layers"):
        L.Pipeline(L.RandomFlip())
    with pytest.raises(ValueError, match="`layers` key"):
        L.Pipeline.from_config({"name": "p"})


def test_keras_file_from_keras_loads_and_ours_rebuilds(tmp_path):
    model = mk.saving.load_model(os.path.join(os.path.dirname(__file__), "fixtures", "keras_geometric_augment",
                                              "augment.keras"))
    assert [type(layer).__name__ for layer in model.layers] == ["Pipeline", "RandomElasticTransform", "MixUp",
                                                                "CutMix", "MaxNumBoundingBoxes"]
    shear, perspective, blur, erasing = model.layers[0].layers
    assert (shear.x_factor, shear.y_factor, shear.fill_mode, shear.seed) == ((0.1, 0.2), (0.0, 0.3), "constant", 1)
    assert (perspective.factor, perspective.scale, blur.kernel_size, blur.sigma) == ((0, 0.5), 0.3, (5, 5),
                                                                                     (0.2, 0.7))
    assert (erasing.scale, erasing.fill_value, model.layers[2].alpha, model.layers[4].max_number) == (
        (0.1, 0.2), 4.0, 0.4, 4)
    np.testing.assert_array_equal(model.predict(X, verbose=0), X)  # inference passes the images through
    assert model(X, training=True).shape == X.shape
    model.save(str(tmp_path / "ours.keras"))
    loaded = mk.saving.load_model(str(tmp_path / "ours.keras"))
    assert [layer.get_config() for layer in loaded.layers[0].layers] == [
        layer.get_config() for layer in model.layers[0].layers]
    assert [layer.get_config() for layer in loaded.layers[1:]] == [layer.get_config() for layer in model.layers[1:]]


def test_pipeline_weights_file_is_keras(tmp_path):
    path = os.path.join(os.path.dirname(__file__), "fixtures", "keras_geometric_augment", "pipeline_dense.keras")
    model = mk.saving.load_model(path)
    close("Pipeline/outputs", model(F["Pipeline/inputs"]), atol=1e-6)
    model.save(str(tmp_path / "ours.keras"))
    close("Pipeline/outputs", mk.saving.load_model(str(tmp_path / "ours.keras"))(F["Pipeline/inputs"]), atol=1e-6)
    kernels = [v.path for v in model.weights]
    assert kernels == ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"], kernels


ALWAYS = (1.0, 1.0)  # the probability of transforming each image
ALL_LAYERS = [lambda: L.RandomShear(0.3, 0.3), lambda: L.RandomPerspective(ALWAYS, scale=0.4),
              lambda: L.RandomGaussianBlur(ALWAYS, sigma=(0.8, 1.0)), lambda: L.RandomErasing(ALWAYS),
              lambda: L.RandomElasticTransform(ALWAYS), lambda: L.MixUp(), lambda: L.CutMix()]


@pytest.mark.parametrize("make", ALL_LAYERS)
def test_symbolic_compiled_seeded_and_channels_first(make):
    layer = make()
    images = np.concatenate([X] * 2)
    inputs = mk.Input((5, 7, 3))
    model = mk.Model(inputs, layer(inputs))
    assert model.output_shape == (None, 5, 7, 3)
    np.testing.assert_array_equal(model.predict(images, verbose=0), images)
    step = mk.function(lambda x: layer(x, training=True))
    mk.random.set_seed(11)
    first = step(images).numpy()
    assert first.shape == images.shape and not np.allclose(first, images)
    mk.random.set_seed(11)
    np.testing.assert_array_equal(step(images).numpy(), first)
    assert not np.array_equal(step(images).numpy(), first)  # the draws advance


@pytest.mark.parametrize("make", [ALL_LAYERS[1], ALL_LAYERS[6]])  # the layout is the base class's: one of each kind
def test_channels_first_single_images_and_mixed_precision(make):
    layer = make()
    channels_first = type(layer).from_config({**layer.get_config(), "data_format": "channels_first"})
    mk.random.set_seed(4)
    out = channels_first(np.transpose(X, (0, 3, 1, 2))).numpy()
    mk.random.set_seed(4)
    np.testing.assert_allclose(np.transpose(out, (0, 2, 3, 1)), layer(X).numpy(), rtol=1e-6, atol=1e-4)
    assert layer(X[0]).shape == X[0].shape
    mixed = type(layer).from_config({**layer.get_config(), "dtype": "mixed_bfloat16"})
    assert mixed(X).dtype == mk.bfloat16


def test_fit_with_augmentation_and_pixel_gradients():
    mk.random.set_seed(0)
    model = mk.Sequential([mk.Input((5, 7, 3)), L.Pipeline([L.RandomShear(0.2), L.RandomPerspective(scale=0.2)]),
                           L.Rescaling(1 / 255.0), L.Flatten(), L.Dense(2)])
    model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(np.concatenate([X] * 4), np.arange(8) % 2, batch_size=4, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    # the perspective warp is one recorded op: its pixel gradient is jax's
    from minikeras.image import keras_forwards
    layer = L.RandomPerspective(interpolation="bilinear", fill_value=3.0)
    drawn = layer.get_random_transformation(X.shape)
    drawn["apply_perspective"] = np.array([True, True])
    weights = np.random.default_rng(1).normal(size=X.shape).astype(np.float32)
    images = mk.Variable(X)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(layer.transform_images(images.value(), drawn) * weights)
    expected = jax.grad(lambda x: jnp.sum(keras_forwards.perspective_transform(
        x, drawn["start_points"], drawn["end_points"], order=1, fill_value=3.0) * weights))(X)
    np.testing.assert_allclose(tape.gradient(loss, images).numpy(), expected, rtol=1e-5, atol=1e-5)
