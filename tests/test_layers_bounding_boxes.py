"""Bounding boxes through the image layers that move them, against Keras 3.15 on JAX
(``fixtures/keras_bounding_boxes/make_layer_fixtures.py``): RandomFlip's box transform for given
flips, RandomTranslation's, RandomRotation's, RandomZoom's, RandomShear's and RandomPerspective's
for given shifts, angles, zooms, shears and corners, Resizing and CenterCrop on ``{"images",
"bounding_boxes"}`` dicts; one draw moves an image and its boxes
together; Keras's errors."""
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_bounding_boxes", "layers.npz"))


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-5, atol=1e-4)


def test_random_flip_boxes_as_keras():
    images, boxes, labels, flips = DATA["images"], DATA["boxes"], DATA["labels"], DATA["flips"]
    for mode in ("horizontal", "vertical", "horizontal_and_vertical"):
        for fmt in ("xyxy", "center_yxhw"):
            layer = keras.layers.RandomFlip(mode, bounding_box_format=fmt)
            given = {"boxes": mk.constant(keras.utils.bounding_boxes.convert_format(boxes, "xyxy", fmt)),
                     "labels": mk.constant(labels)}
            flipped = layer.transform_bounding_boxes(given, {"flips": flips, "input_shape": images.shape})
            close(flipped["boxes"], DATA[f"flip/{mode}/{fmt}/boxes"])
            np.testing.assert_array_equal(flipped["labels"], DATA[f"flip/{mode}/{fmt}/labels"])


def test_random_flip_moves_boxes_with_their_pixels():
    image = np.zeros((8, 10, 1), "float32")
    image[1:3, 2:5] = 1.0  # the box (x 2..5, y 1..3)
    layer = keras.layers.RandomFlip("horizontal_and_vertical", bounding_box_format="xyxy", seed=3)
    boxes = {"boxes": np.array([[2.0, 1.0, 5.0, 3.0]], "float32"), "labels": np.array([4], "int32")}
    seen = set()
    for _ in range(8):
        out = layer({"images": image, "bounding_boxes": boxes, "labels": np.array(1)})
        x1, y1, x2, y2 = np.asarray(out["bounding_boxes"]["boxes"])[0].round().astype(int)
        assert out["bounding_boxes"]["boxes"].shape == (1, 4) and int(out["labels"]) == 1
        np.testing.assert_array_equal(np.argwhere(np.asarray(out["images"])[..., 0] > 0).min(0), [y1, x1])
        np.testing.assert_array_equal(np.argwhere(np.asarray(out["images"])[..., 0] > 0).max(0), [y2 - 1, x2 - 1])
        seen.add(x1)
    assert seen == {2, 5}  # both outcomes were drawn
    unchanged = layer({"images": image, "bounding_boxes": boxes}, training=False)
    np.testing.assert_array_equal(unchanged["bounding_boxes"]["boxes"], boxes["boxes"])


def test_resizing_boxes_as_keras():
    images, boxes, labels = DATA["images"], DATA["boxes"], DATA["labels"]
    for name, kwargs in (("stretch", {}), ("crop", {"crop_to_aspect_ratio": True}),
                         ("pad", {"pad_to_aspect_ratio": True})):
        layer = keras.layers.Resizing(16, 10, bounding_box_format="xyxy", **kwargs)
        out = layer({"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}})
        assert out["images"].shape == (2, 16, 10, 3)
        close(out["bounding_boxes"]["boxes"], DATA[f"resize/{name}/boxes"])
        np.testing.assert_array_equal(out["bounding_boxes"]["labels"], DATA[f"resize/{name}/labels"])
    out = keras.layers.Resizing(6, 8, bounding_box_format="rel_xywh")(
        {"images": images[1], "bounding_boxes": {"boxes": DATA["single_rel"], "labels": labels[1]}})
    assert out["images"].shape == (6, 8, 3) and out["bounding_boxes"]["boxes"].shape == (3, 4)
    close(out["bounding_boxes"]["boxes"], DATA["resize/single/boxes"])
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"], DATA["resize/single/labels"])
    first = keras.layers.Resizing(16, 10, bounding_box_format="xyxy", data_format="channels_first")(
        {"images": images.transpose(0, 3, 1, 2), "bounding_boxes": {"boxes": boxes, "labels": labels}})
    assert first["images"].shape == (2, 3, 16, 10)
    close(first["bounding_boxes"]["boxes"], DATA["resize/stretch/boxes"])


def test_center_crop_boxes_as_keras():
    images, boxes, labels = DATA["images"], DATA["boxes"], DATA["labels"]
    for name, size in (("inside", (8, 14)), ("taller", (16, 10))):
        out = keras.layers.CenterCrop(*size, bounding_box_format="xyxy")(
            {"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}})
        assert out["images"].shape == (2, *size, 3)
        close(out["bounding_boxes"]["boxes"], DATA[f"center_crop/{name}/boxes"])
        np.testing.assert_array_equal(out["bounding_boxes"]["labels"], DATA[f"center_crop/{name}/labels"])


def test_random_translation_boxes_as_keras():
    images, boxes, labels = DATA["images"], DATA["boxes"], DATA["labels"]
    for fmt in ("xyxy", "rel_center_xywh"):
        layer = keras.layers.RandomTranslation(0.2, 0.3, bounding_box_format=fmt)
        given = {"boxes": keras.utils.bounding_boxes.convert_format(boxes, "xyxy", fmt, height=12, width=20),
                 "labels": labels}
        moved = layer.transform_bounding_boxes(given, {"translations": DATA["translations"],
                                                       "input_shape": images.shape})
        close(moved["boxes"], DATA[f"translate/{fmt}/boxes"])
        np.testing.assert_array_equal(moved["labels"], DATA[f"translate/{fmt}/labels"])


def test_random_translation_moves_boxes_with_their_pixels():
    image = np.zeros((1, 16, 16, 1), "float32")
    image[0, 5:8, 6:10] = 1.0  # the box (x 6..10, y 5..8)
    layer = keras.layers.RandomTranslation((-0.2, 0.2), (-0.2, 0.2), fill_mode="constant", interpolation="nearest",
                                           bounding_box_format="xyxy", seed=1)
    boxes = {"boxes": np.array([[[6.0, 5.0, 10.0, 8.0]]], "float32"), "labels": np.array([[2]], "int32")}
    for _ in range(3):
        out = layer({"images": image, "bounding_boxes": boxes})
        x1, y1, x2, y2 = np.asarray(out["bounding_boxes"]["boxes"])[0, 0]
        lit = np.argwhere(np.asarray(out["images"])[0, ..., 0] > 0)
        np.testing.assert_allclose(lit.min(0), [y1, x1], atol=0.5)  # nearest sampling rounds the shift
        np.testing.assert_allclose(lit.max(0) + 1, [y2, x2], atol=0.5)


def test_random_rotation_boxes_as_keras():
    layer = keras.layers.RandomRotation(0.5, bounding_box_format="xyxy")
    rotated = layer.transform_bounding_boxes({"boxes": DATA["boxes"], "labels": DATA["labels"]}, {
        "angle": DATA["angle"], "image_height": 12, "image_width": 20, "batch_size": 2})
    close(rotated["boxes"], DATA["rotate/boxes"])
    np.testing.assert_array_equal(rotated["labels"], DATA["rotate/labels"])


def test_random_rotation_boxes_hold_their_pixels():
    image = np.zeros((1, 21, 21, 1), "float32")
    image[0, 6:9, 5:12] = 1.0  # the box (x 5..12, y 6..9)
    layer = keras.layers.RandomRotation(0.25, fill_mode="constant", interpolation="nearest",
                                        bounding_box_format="xyxy", seed=2)
    boxes = {"boxes": np.array([[[5.0, 6.0, 12.0, 9.0]]], "float32"), "labels": np.array([[2]], "int32")}
    for _ in range(3):
        out = layer({"images": image, "bounding_boxes": boxes})
        x1, y1, x2, y2 = np.asarray(out["bounding_boxes"]["boxes"])[0, 0]
        lit = np.argwhere(np.asarray(out["images"])[0, ..., 0] > 0)
        assert (lit.min(0) >= np.array([y1, x1]) - 1.5).all() and (lit.max(0) <= np.array([y2, x2]) + 0.5).all()


def test_random_zoom_boxes_as_keras():
    for fmt in ("xyxy", "rel_yxyx"):
        layer = keras.layers.RandomZoom(0.3, bounding_box_format=fmt)
        given = {"boxes": keras.utils.bounding_boxes.convert_format(DATA["boxes"], "xyxy", fmt, height=12, width=20),
                 "labels": DATA["labels"]}
        zoomed = layer.transform_bounding_boxes(given, {"width_zoom": DATA["width_zoom"],
                                                        "height_zoom": DATA["height_zoom"],
                                                        "input_shape": DATA["images"].shape})
        close(zoomed["boxes"], DATA[f"zoom/{fmt}/boxes"])
        np.testing.assert_array_equal(zoomed["labels"], DATA[f"zoom/{fmt}/labels"])
    layer = keras.layers.RandomZoom((-0.5, -0.2), bounding_box_format="xyxy", seed=4)
    out = layer({"images": DATA["images"], "bounding_boxes": {"boxes": DATA["boxes"], "labels": DATA["labels"]}})
    assert out["images"].shape == DATA["images"].shape and out["bounding_boxes"]["boxes"].shape == (2, 3, 4)


def test_random_shear_boxes_as_keras():
    for fmt in ("xyxy", "center_xywh"):
        layer = keras.layers.RandomShear(0.5, 0.5, bounding_box_format=fmt)
        given = {"boxes": keras.utils.bounding_boxes.convert_format(DATA["boxes"], "xyxy", fmt),
                 "labels": DATA["labels"]}
        sheared = layer.transform_bounding_boxes(given, {"shear_factor": DATA["shear_factor"],
                                                         "input_shape": DATA["images"].shape})
        close(sheared["boxes"], DATA[f"shear/{fmt}/boxes"])
        np.testing.assert_array_equal(sheared["labels"], DATA[f"shear/{fmt}/labels"])
    layer = keras.layers.RandomShear(0.3, 0.3, bounding_box_format="xyxy", seed=5)
    single = {"boxes": DATA["boxes"][0], "labels": DATA["labels"][0]}
    out = layer({"images": DATA["images"][0], "bounding_boxes": single})
    assert out["images"].shape == (12, 20, 3) and out["bounding_boxes"]["boxes"].shape == (3, 4)


def test_random_perspective_boxes_as_keras():
    warp = {k.split("/")[1]: DATA[k] for k in DATA.files if k.startswith("perspective_draws/")}
    layer = keras.layers.RandomPerspective(bounding_box_format="xyxy")
    warped = layer.transform_bounding_boxes({"boxes": DATA["boxes"], "labels": DATA["labels"]},
                                            dict(warp, input_shape=DATA["images"].shape))
    close(warped["boxes"], DATA["perspective/boxes"])
    np.testing.assert_array_equal(warped["labels"], DATA["perspective/labels"])
    out = keras.layers.RandomPerspective(factor=1.0, bounding_box_format="rel_xyxy", seed=6)(
        {"images": DATA["images"], "bounding_boxes": {"boxes": DATA["boxes"] / 20.0, "labels": DATA["labels"]}})
    assert out["bounding_boxes"]["boxes"].shape == (2, 3, 4)


def test_mix_up_gives_each_image_its_partners_boxes():
    layer = keras.layers.MixUp(bounding_box_format="xyxy", seed=7)
    boxes, labels = DATA["boxes"], DATA["labels"]
    out = layer({"images": DATA["images"], "labels": np.eye(2, dtype="float32"),
                 "bounding_boxes": {"boxes": boxes, "labels": labels}})
    mixed = np.asarray(out["labels"])
    got_boxes, got_labels = np.asarray(out["bounding_boxes"]["boxes"]), np.asarray(out["bounding_boxes"]["labels"])
    assert got_boxes.shape == (2, 6, 4) and got_labels.shape == (2, 6)
    np.testing.assert_array_equal(got_boxes[:, :3], boxes)
    np.testing.assert_array_equal(got_labels[:, :3], labels)
    for i in range(2):  # the appended boxes and labels are those of the image mixed in
        j = next(k for k in range(2) if np.array_equal(got_boxes[i, 3:], boxes[k]))
        np.testing.assert_array_equal(got_labels[i, 3:], labels[j])
        assert mixed[i, j] > 0 if j != i else mixed[i, 1 - i] == 0


def test_random_crop_boxes_follow_the_window():
    image = np.zeros((1, 16, 20, 1), "float32")
    image[0, 6:10, 8:13] = 1.0  # the box (x 8..13, y 6..10)
    boxes = {"boxes": np.array([[[8.0, 6.0, 13.0, 10.0], [0.0, 0.0, 2.0, 2.0]]], "float32"),
             "labels": np.array([[1, 2]], "int32")}
    layer = keras.layers.RandomCrop(10, 12, bounding_box_format="xyxy", seed=3)
    for _ in range(3):
        out = layer({"images": image, "bounding_boxes": boxes})
        (x1, y1, x2, y2), corner = np.asarray(out["bounding_boxes"]["boxes"])[0]
        lit = np.argwhere(np.asarray(out["images"])[0, ..., 0] > 0)
        if len(lit):  # the box's pixels, where the window kept some, are inside the moved box
            np.testing.assert_array_equal(lit.min(0), [y1, x1])
            np.testing.assert_array_equal(lit.max(0) + 1, [y2, x2])
        label = np.asarray(out["bounding_boxes"]["labels"])[0, 1]
        assert label == (2 if corner[2] > corner[0] and corner[3] > corner[1] else -1)
    small = keras.layers.RandomCrop(8, 40, bounding_box_format="xyxy")(
        {"images": image, "bounding_boxes": boxes}, training=False)  # a centred window, resized
    assert small["images"].shape == (1, 8, 40, 1)
    # Keras's window: rows 6..14, all 20 columns, stretched to 40: x doubles, y shifts by 6
    close(small["bounding_boxes"]["boxes"][0, 0], [16.0, 0.0, 26.0, 4.0])


def test_box_errors_and_config():
    images, boxes, labels = DATA["images"], DATA["boxes"], DATA["labels"]
    with pytest.raises(ValueError, match="didn't specify a bounding box format"):
        keras.layers.Resizing(4, 4)({"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}})
    with pytest.raises(ValueError, match="dict with keys 'boxes' and 'labels'"):
        keras.layers.Resizing(4, 4, bounding_box_format="xyxy")({"images": images, "bounding_boxes": boxes})
    with pytest.raises(NotImplementedError, match="go through RandomFlip, RandomTranslation, RandomRotation"):
        keras.layers.RandomElasticTransform(bounding_box_format="xyxy")(
            {"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}})
    layer = keras.layers.RandomFlip(bounding_box_format="xyxy")
    assert layer.get_config()["bounding_box_format"] == "xyxy"
    assert "bounding_box_format" not in keras.layers.RandomFlip().get_config()  # as Keras: only when set
    assert keras.layers.RandomFlip.from_config(layer.get_config()).bounding_box_format == "xyxy"


# Keras 3.15's layers whose transform_bounding_boxes returns the boxes as they are
KEEPING_BOXES = [
    lambda: keras.layers.RandomContrast(0.5), lambda: keras.layers.RandomBrightness(0.3),
    lambda: keras.layers.Solarization(0.5, value_range=(0, 1)), lambda: keras.layers.AutoContrast(value_range=(0, 1)),
    lambda: keras.layers.Equalization(value_range=(0, 1)), lambda: keras.layers.RandomPosterization(4, (0, 1)),
    lambda: keras.layers.RandomInvert(value_range=(0, 1)), lambda: keras.layers.RandomColorDegeneration(0.5),
    lambda: keras.layers.RandomGrayscale(0.5), lambda: keras.layers.RandomHue(0.5, (0, 1)),
    lambda: keras.layers.RandomSaturation(0.5, (0, 1)), lambda: keras.layers.RandomSharpness(0.5, (0, 1)),
    lambda: keras.layers.RandomColorJitter((0, 1), brightness_factor=0.2), lambda: keras.layers.RandomGaussianBlur(),
    lambda: keras.layers.RandomErasing(value_range=(0, 1)), lambda: keras.layers.AugMix(value_range=(0, 1)),
]


@pytest.mark.parametrize("index", range(len(KEEPING_BOXES)))
def test_layers_that_move_no_pixel_keep_the_boxes(index):
    make = KEEPING_BOXES[index]
    images, boxes = DATA["images"][:, :6, :8], DATA["boxes"]
    labels = DATA["labels"].astype("int64")
    layer = make()
    layer.bounding_box_format = "xyxy"
    cases = [(images, {"boxes": boxes.astype("int32"), "labels": labels})]
    if index < 4:  # a single image's boxes too (the same code path for all)
        cases.append((images[1], {"boxes": boxes[1], "labels": labels[1]}))
    for given_images, given in cases:
        out = layer({"images": given_images, "bounding_boxes": given, "labels": np.array([1, 0])[:len(given_images)]})
        assert out["images"].shape == given_images.shape
        assert out["bounding_boxes"]["boxes"].dtype == mk.float32  # made float32, as Keras's densify does
        np.testing.assert_array_equal(out["bounding_boxes"]["boxes"], np.asarray(given["boxes"], "float32"))
        np.testing.assert_array_equal(out["bounding_boxes"]["labels"], given["labels"])
    with pytest.raises(ValueError, match="didn't specify a bounding box format"):
        make()({"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}})


def test_boxes_through_a_pipeline_and_a_compiled_function():
    images, boxes, labels = DATA["images"], DATA["boxes"], DATA["labels"]
    pipeline = keras.layers.Pipeline([
        keras.layers.RandomColorJitter((0, 1), brightness_factor=0.2, bounding_box_format="xyxy"),
        keras.layers.Resizing(16, 10, bounding_box_format="xyxy"), keras.layers.MaxNumBoundingBoxes(4)])
    out = pipeline({"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}})
    close(out["bounding_boxes"]["boxes"][:, :3], DATA["resize/stretch/boxes"])
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"][:, 3], [-1, -1])
    resize = keras.layers.Resizing(16, 10, pad_to_aspect_ratio=True, bounding_box_format="xyxy")
    compiled = mk.function(lambda data: resize(data))
    out = compiled({"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}})
    close(out["bounding_boxes"]["boxes"], DATA["resize/pad/boxes"])
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"], DATA["resize/pad/labels"])
