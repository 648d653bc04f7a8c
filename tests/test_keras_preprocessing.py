"""keras.preprocessing: the names Keras 3.15 keeps there, and its image helpers against Keras 3's
results (tests/fixtures/keras_preprocessing)."""
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import keras

pytest.importorskip("PIL")
FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_preprocessing", "image_utils.npz"))


def test_the_names_are_keras_315s():
    p = keras.preprocessing
    assert p.image_dataset_from_directory is mk.utils.image_dataset_from_directory
    assert p.text_dataset_from_directory is mk.utils.text_dataset_from_directory
    assert p.timeseries_dataset_from_array is mk.utils.timeseries_dataset_from_array
    assert p.sequence.pad_sequences is mk.utils.pad_sequences
    assert {"array_to_img", "img_to_array", "load_img", "save_img", "smart_resize"} <= set(dir(p.image))
    assert keras.utils.load_img is p.image.load_img and keras.utils.img_to_array is p.image.img_to_array
    from minikeras.keras.preprocessing.image import smart_resize  # noqa: F401 - importable by name


def test_image_helpers_as_keras(tmp_path):
    image = keras.preprocessing.image
    x = FIXTURE["x"]
    np.testing.assert_array_equal(image.img_to_array(image.array_to_img(x)), FIXTURE["round_trip"])
    np.testing.assert_array_equal(image.img_to_array(image.array_to_img(x), data_format="channels_first"),
                                  FIXTURE["channels_first"])
    grey = image.array_to_img(x[:, :, :1], scale=False)
    assert grey.mode == "L"
    np.testing.assert_array_equal(image.img_to_array(grey), FIXTURE["grey"])
    path = str(tmp_path / "x.png")
    image.save_img(path, x)
    loaded = image.load_img(path, target_size=(4, 6), interpolation="bilinear", keep_aspect_ratio=True)
    assert loaded.size == (6, 4) and loaded.mode == "RGB"
    np.testing.assert_array_equal(image.img_to_array(loaded), FIXTURE["load_aspect"])
    np.testing.assert_array_equal(image.img_to_array(image.load_img(path, color_mode="grayscale", target_size=(5, 5))),
                                  FIXTURE["load_grey"])


def test_smart_resize_as_keras():
    image = keras.preprocessing.image
    x = FIXTURE["x"]
    out = image.smart_resize(x, (4, 4))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    np.testing.assert_allclose(out, FIXTURE["smart"], rtol=1e-5, atol=1e-3)
    batch = np.stack([x, x]).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(image.smart_resize(batch, (5, 3), data_format="channels_first", interpolation="nearest"),
                               FIXTURE["smart_first"])
    assert isinstance(image.smart_resize(mk.constant(x), (4, 4)), mk.Tensor)


@pytest.mark.parametrize("call, error, message", [
    (lambda i: i.array_to_img(np.ones((2, 2))), ValueError, "Expected image array to have rank 3"),
    (lambda i: i.array_to_img(np.ones((2, 2, 2))), ValueError, "Unsupported channel number: 2"),
    (lambda i: i.load_img(3), TypeError, "path should be path-like or io.BytesIO, not <class 'int'>"),
    (lambda i: i.smart_resize(np.ones((2, 2)), (1, 1)), ValueError, "incorrect rank, of shape \\(2, 2\\)"),
    (lambda i: i.smart_resize(np.ones((2, 2, 1)), (1, 1, 1)), ValueError, "Expected `size` to be a tuple of 2"),
])
def test_errors_as_keras(call, error, message):
    with pytest.raises(error, match=message):
        call(keras.preprocessing.image)
