"""keras.visualization: draw_segmentation_masks against Keras 3.15 on JAX
(``fixtures/keras_visualization/make_fixtures.py``), and the galleries drawn to PNG files."""
import os

import numpy as np
import pytest

from minikeras import keras

DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_visualization", "masks.npz"))
MAPPING = {0: (255, 0, 0), 1: (0, 255, 0), 2: (0, 0, 255), 3: (9, 9, 9)}


def test_draw_segmentation_masks_as_keras():
    draw = keras.visualization.draw_segmentation_masks
    images, masks = DATA["images"], DATA["masks"]
    np.testing.assert_array_equal(draw(images, masks, num_classes=4), DATA["blended"])
    np.testing.assert_array_equal(draw(images, masks), DATA["inferred"])  # Keras infers max(id) classes
    np.testing.assert_array_equal(draw(images, masks, num_classes=4, blend=False), DATA["unblended"])
    np.testing.assert_array_equal(draw(images, masks, num_classes=4, alpha=0.3, ignore_index=2, color_mapping=MAPPING),
                                  DATA["mapped"])
    first = draw(images.transpose(0, 3, 1, 2), masks.transpose(0, 3, 1, 2), num_classes=4, data_format="channels_first")
    np.testing.assert_array_equal(first, DATA["blended"])
    with pytest.raises(TypeError, match="`segmentation_masks` must be in integer dtype"):
        draw(images, masks.astype("float32"))
    with pytest.raises(ValueError, match="must be batched 4D tensor"):
        draw(images[0], masks[0])


def test_galleries_write_png_files(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    images = DATA["images"] / 255.0
    path = tmp_path / "gallery.png"
    keras.visualization.plot_image_gallery(images, y_true=np.array([0, 1]), label_map={0: "cat", 1: "dog"},
                                           value_range=(0, 1), rows=1, cols=2, path=str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    path = tmp_path / "masks.png"
    keras.visualization.plot_segmentation_mask_gallery(DATA["images"], num_classes=4, y_true=DATA["masks"],
                                                       y_pred=np.maximum(DATA["masks"], 0), path=str(path))
    assert path.stat().st_size > 1000
    with pytest.raises(ValueError, match="a `label_map` must also be provided"):
        keras.visualization.plot_image_gallery(images, y_true=np.array([0, 1]), path=str(path))
