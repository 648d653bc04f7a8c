"""keras.utils.bounding_boxes against Keras 3.15 on JAX (``fixtures/keras_bounding_boxes/
make_fixtures.py``): values over generated boxes in every format, the dict forms, errors, and
gradients on the tape against ``jax.grad`` through Keras's own functions."""
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_bounding_boxes", "bounding_boxes.npz"))
FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy", "rel_yxyx", "rel_xywh",
           "rel_center_xywh")
HEIGHT, WIDTH = 40, 60
bb = keras.utils.bounding_boxes
DRAWS = {k.split("/")[1]: DATA[k] for k in DATA.files if k.startswith("affine_draws/")}


def close(actual, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


def test_convert_format_every_pair_as_keras():
    boxes = DATA["boxes"]
    # every conversion goes through xyxy: all of those, the relative pairs, and a spread of the rest
    pairs = [(i, j) for i in range(9) for j in range(9) if 0 in (i, j) or min(i, j) >= 5 or (i * 9 + j) % 7 == 0]
    for i, j in pairs:
        source, target = FORMATS[i], FORMATS[j]
        out = bb.convert_format(mk.constant(boxes), source.upper(), target, height=HEIGHT, width=WIDTH)
        assert out.dtype == mk.float32
        close(out, DATA["convert"][i, j])
    as_dict = {"boxes": boxes, "labels": np.zeros((2, 3))}
    assert bb.convert_format(as_dict, "xyxy", "xywh") is as_dict  # Keras writes into the dict it returns
    close(as_dict["boxes"], DATA["convert"][0, 2])
    assert bb.convert_format(boxes.astype("int32"), "xyxy", "xywh", dtype="int32").dtype == mk.int32


def test_convert_format_errors():
    with pytest.raises(ValueError, match="last dimension of 4"):
        bb.convert_format(np.zeros((2, 3)), "xyxy", "xywh")
    with pytest.raises(ValueError, match="Invalid source or target format"):
        bb.convert_format(np.zeros((2, 4)), "xyxy", "corners")
    with pytest.raises(ValueError, match="must receive `height` and `width`"):
        bb.convert_format(np.zeros((2, 4)), "xyxy", "rel_xyxy", height=10)


def test_clip_crop_pad_as_keras():
    wild, labels = DATA["wild"], DATA["wild_labels"]
    clipped = bb.clip_to_image_size({"boxes": wild, "labels": labels}, height=HEIGHT, width=WIDTH)
    close(clipped["boxes"], DATA["clip/boxes"])
    np.testing.assert_array_equal(clipped["labels"], DATA["clip/labels"])
    clipped = bb.clip_to_image_size({"boxes": DATA["relative"], "labels": labels}, bounding_box_format="rel_xyxy")
    close(clipped["boxes"], DATA["clip_rel/boxes"])
    np.testing.assert_array_equal(clipped["labels"], DATA["clip_rel/labels"])
    assert set(bb.clip_to_image_size({"boxes": wild}, height=HEIGHT, width=WIDTH)) == {"boxes"}
    close(bb.crop(wild, top=5, left=7, height=20, width=30), DATA["crop"])
    close(bb.pad(mk.constant(wild), top=5, left=7), DATA["pad"])
    with pytest.raises(ValueError, match="`height` and `width` must be set"):
        bb.clip_to_image_size({"boxes": wild}, height=HEIGHT)
    for call in (lambda: bb.clip_to_image_size({"boxes": wild}, 4, 4, bounding_box_format="xywh"),
                 lambda: bb.crop(wild, 0, 0, 4, 4, bounding_box_format="yxyx"),
                 lambda: bb.pad(wild, 0, 0, bounding_box_format="center_xywh")):
        with pytest.raises(NotImplementedError, match="bounding_box_format"):
            call()


def test_affine_transform_as_keras():
    boxes = DATA["boxes"]
    close(bb.affine_transform(boxes, **DRAWS, height=HEIGHT, width=WIDTH), DATA["affine"], rtol=1e-4, atol=1e-3)
    close(bb.affine_transform(boxes, **DRAWS, height=HEIGHT, width=WIDTH, center_x=0.3, center_y=0.6),
          DATA["affine_centred"], rtol=1e-4, atol=1e-3)
    with pytest.raises(ValueError, match=r"`angle` must have one value per image, shape \(2,\)"):
        bb.affine_transform(boxes, **dict(DRAWS, angle=DRAWS["angle"][:1]), height=HEIGHT, width=WIDTH)
    with pytest.raises(ValueError, match=r"shape \(batch, num_boxes, 4\)"):
        bb.affine_transform(boxes[0], **DRAWS, height=HEIGHT, width=WIDTH)


def test_iou_and_ciou_as_keras():
    boxes, boxes2 = DATA["boxes"], DATA["boxes2"]
    close(bb.compute_iou(boxes, boxes2, "xyxy"), DATA["iou/33"])
    close(bb.compute_iou(boxes[0], boxes2[1], "xyxy"), DATA["iou/22"])
    close(bb.compute_iou(boxes, boxes2[1], "xyxy"), DATA["iou/32"])
    close(bb.compute_iou(boxes[0], boxes2, "xyxy"), DATA["iou/23"])
    close(bb.compute_iou(boxes, boxes2, "xyxy", use_masking=True, mask_val=-5), DATA["iou/masked"])
    to_rel = lambda b: bb.convert_format(b, "xyxy", "rel_yxyx", height=HEIGHT, width=WIDTH)  # noqa: E731
    close(bb.compute_iou(to_rel(boxes), to_rel(boxes2), "rel_yxyx", image_shape=(HEIGHT, WIDTH, 3)),
          DATA["iou/rel_yxyx"])
    paired = boxes2[:, :3]
    close(bb.compute_ciou(boxes, paired, "xyxy"), DATA["ciou/xyxy"])
    to_xywh = lambda b: bb.convert_format(b, "xyxy", "xywh")  # noqa: E731
    close(bb.compute_ciou(to_xywh(boxes), to_xywh(paired), "xywh"), DATA["ciou/xywh"])
    with pytest.raises(ValueError, match="expects boxes1 to be batched, or to be unbatched"):
        bb.compute_iou(boxes[0, 0], boxes2, "xyxy")
    with pytest.raises(ValueError, match="`image_shape` argument must be provided"):
        bb.compute_iou(boxes, boxes2, "rel_xyxy")
    with pytest.raises(ValueError, match="`image_shape` argument must be provided"):  # Keras 3.15 refuses rel_ here
        bb.compute_ciou(boxes, paired, "rel_xyxy", image_shape=(HEIGHT, WIDTH, 3))


def test_anchor_deltas_as_keras():
    anchors, boxes, variance = DATA["anchors"], DATA["boxes"], [0.1, 0.1, 0.2, 0.2]
    for encoding in ("center_yxhw", "center_xywh"):
        deltas = bb.encode_box_to_deltas(anchors, boxes, "xyxy", "xywh", encoding_format=encoding, variance=variance)
        close(deltas, DATA[f"encode/{encoding}"])
        decoded = bb.decode_deltas_to_boxes(anchors, deltas, "xyxy", "center_xywh", encoded_format=encoding,
                                            variance=variance)
        close(decoded, DATA[f"decode/{encoding}"], atol=1e-4)
    close(bb.encode_box_to_deltas(anchors, DATA["relative"][:, :3], "xyxy", "rel_xyxy", image_shape=(HEIGHT, WIDTH, 3)),
          DATA["encode/rel"])
    levels = bb.decode_deltas_to_boxes({3: anchors}, {3: DATA["encode/center_yxhw"]}, "xyxy", "center_xywh",
                                       variance=variance)
    close(levels[3], DATA["decode/center_yxhw"], atol=1e-4)
    with pytest.raises(ValueError, match="`variance` must be length 4"):
        bb.encode_box_to_deltas(anchors, boxes, "xyxy", "xyxy", variance=[1.0, 1.0])
    with pytest.raises(ValueError, match="`encoding_format` should be one of"):
        bb.encode_box_to_deltas(anchors, boxes, "xyxy", "xyxy", encoding_format="xyxy")
    with pytest.raises(ValueError, match="`encoded_format` should be"):
        bb.decode_deltas_to_boxes(anchors, boxes, "xyxy", "xyxy", encoded_format="xyxy")


def _tape_grad(fn, x):
    x = mk.Variable(x)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(fn(x))
    return tape.gradient(loss, x)


def test_gradients_on_the_tape_as_keras_on_jax():
    boxes, boxes2, weights = DATA["boxes"], DATA["boxes2"], DATA["weights"]
    close(_tape_grad(lambda b: bb.convert_format(b, "center_yxhw", "rel_xywh", height=HEIGHT, width=WIDTH) * weights,
                     boxes), DATA["grad/convert"])
    close(_tape_grad(lambda b: bb.compute_ciou(b, boxes2[:, :3], "xyxy") * weights[..., 0], boxes),
          DATA["grad/ciou"], rtol=1e-4)
    close(_tape_grad(lambda b: bb.compute_iou(b, boxes2, "xyxy") * weights, boxes), DATA["grad/iou"], rtol=1e-4)
    close(_tape_grad(lambda a: bb.affine_transform(boxes, **dict(DRAWS, angle=a), height=HEIGHT, width=WIDTH)
                     * weights, DRAWS["angle"]), DATA["grad/affine_angle"], rtol=1e-4, atol=1e-3)
    close(_tape_grad(lambda b: bb.encode_box_to_deltas(DATA["anchors"], b, "xyxy", "xyxy") * weights, boxes),
          DATA["grad/encode"], rtol=1e-4)


def test_second_order_on_the_tape():
    # d2/dx2 of sum(w * log(width / anchor width)) = -w / width**2 in each box's width
    anchors = np.array([[0.0, 0.0, 4.0, 4.0]], "float32")
    boxes = mk.Variable(np.array([[1.0, 2.0, 3.0, 6.0]], "float32"))  # xywh: width 3, height 6
    w = np.array([[0.0, 0.0, 2.0, 5.0]], "float32")  # center_yxhw deltas: [dy, dx, log h, log w]
    with mk.GradientTape() as outer:
        with mk.GradientTape() as inner:
            loss = mk.reduce_sum(bb.encode_box_to_deltas(anchors, boxes, "xyxy", "xywh") * w)
        grad = inner.gradient(loss, boxes)
        picked = grad[0, 2]  # d loss / d width = 5 / width
    close(grad, [[0.0, 0.0, 5.0 / 3.0, 2.0 / 6.0]])
    close(outer.gradient(picked, boxes), [[0.0, 0.0, -5.0 / 9.0, 0.0]])
