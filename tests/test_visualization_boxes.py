"""keras.visualization.draw_bounding_boxes against Keras 3.15 on JAX, pixel for pixel (both draw
with OpenCV; ``fixtures/keras_visualization/make_box_fixtures.py``), and the bounding box
gallery drawn to a PNG file."""
import os

import numpy as np
import pytest

from minikeras import keras

cv2 = pytest.importorskip("cv2")  # the visualization extra (in the test extra, so CI runs these)
DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_visualization", "boxes.npz"))
MAPPING = {0: "cat", 1: "dog", 2: "bird"}
bb = keras.utils.bounding_boxes


def test_draw_bounding_boxes_as_keras():
    draw = keras.visualization.draw_bounding_boxes
    images, boxes, labels = DATA["images"], DATA["boxes"], DATA["labels"]
    xywh = bb.convert_format(boxes, "xyxy", "xywh")
    rel = bb.convert_format(boxes, "xyxy", "rel_yxyx", height=48, width=64)
    plain = draw(images, {"boxes": boxes, "labels": labels}, "xyxy")
    assert plain.dtype == np.uint8 and plain.shape == images.shape
    np.testing.assert_array_equal(plain, DATA["plain"])
    named = draw(images * 255, {"boxes": xywh, "labels": labels}, "xywh", class_mapping=MAPPING, color=(255, 0, 0),
                 line_thickness=1, font_scale=0.3)
    np.testing.assert_array_equal(named, DATA["named"])
    confident = draw((images * 255).astype("uint8"), {"boxes": rel, "labels": labels,
                                                      "confidences": DATA["confidences"]}, "rel_yxyx",
                     class_mapping=MAPPING, color=(0, 200, 50), line_thickness=3, text_thickness=2, font_scale=0.4)
    np.testing.assert_array_equal(confident, DATA["confident"])
    first = draw(images.transpose(0, 3, 1, 2), {"boxes": boxes, "labels": labels}, "xyxy",
                 data_format="channels_first")
    np.testing.assert_array_equal(first.transpose(0, 2, 3, 1), DATA["plain"])


def test_draw_bounding_boxes_errors():
    draw = keras.visualization.draw_bounding_boxes
    images = DATA["images"]
    with pytest.raises(ValueError, match="must be batched 4D tensor"):
        draw(images[0], {"boxes": DATA["boxes"], "labels": DATA["labels"]}, "xyxy")
    with pytest.raises(TypeError, match="`bounding_boxes` should be a dict"):
        draw(images, DATA["boxes"], "xyxy")
    with pytest.raises(ValueError, match="containing 'boxes' and 'labels' keys"):
        draw(images, {"boxes": DATA["boxes"]}, "xyxy")


def test_bounding_box_gallery_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    y_true = {"boxes": DATA["boxes"], "labels": DATA["labels"]}
    y_pred = {"boxes": DATA["boxes"] + 2, "labels": DATA["labels"], "confidences": DATA["confidences"]}
    path = tmp_path / "boxes.png"
    keras.visualization.plot_bounding_box_gallery(DATA["images"] * 255, "xyxy", y_true=y_true, y_pred=y_pred,
                                                  class_mapping=MAPPING, legend=True, rows=1, cols=2, path=str(path),
                                                  font_scale=0.3)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="Only pass `legend` OR `legend_handles`"):
        keras.visualization.plot_bounding_box_gallery(DATA["images"], "xyxy", y_true=y_true, legend=True,
                                                      legend_handles=["x"], path=str(path))
