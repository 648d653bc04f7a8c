"""mk.io's codecs and mk.utils.image_dataset_from_directory, against a folder that real Keras 3
loaded (tests/fixtures/images/image_ops.npz: the pixels, the batches, the split)."""
import os

import numpy as np
import pytest

import minikeras as mk

F = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "images", "image_ops.npz"))
pytest.importorskip("PIL")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("images")
    for i, pixels in enumerate(F["folder/pixels"]):
        os.makedirs(root / "ab"[i % 2], exist_ok=True)
        mk.io.write_file(str(root / "ab"[i % 2] / f"{i}.png"), mk.io.encode_png(pixels))
    return root


def test_png_round_trip_and_channels(folder):
    pixels = F["folder/pixels"][0]
    contents = mk.io.read_file(str(folder / "a" / "0.png"))
    assert contents.dtype == mk.string and isinstance(contents.numpy(), bytes)
    decoded = mk.io.decode_png(contents)
    assert decoded.dtype == mk.uint8
    np.testing.assert_array_equal(decoded.numpy(), pixels)
    assert mk.io.decode_png(contents, channels=4).shape == (9, 13, 4)
    np.testing.assert_allclose(mk.io.decode_image(contents, dtype=mk.float32).numpy(), pixels / 255, rtol=1e-6)
    gray = mk.io.decode_png(mk.io.encode_png(pixels[:, :, :1]))
    np.testing.assert_array_equal(gray.numpy(), pixels[:, :, :1])
    assert mk.io.decode_png(mk.io.encode_png(pixels[:, :, :1]), channels=3).shape == (9, 13, 3)


@pytest.mark.parametrize("key,kwargs", [("stretch", {}), ("crop", {"crop_to_aspect_ratio": True}),
                                        ("gray_nearest", {"color_mode": "grayscale", "interpolation": "nearest"})])
def test_batches_match_keras(folder, key, kwargs):
    ds = mk.utils.image_dataset_from_directory(str(folder), image_size=(6, 8), batch_size=6, shuffle=False,
                                               verbose=False, **kwargs)
    assert ds.class_names == ["a", "b"] and len(ds) == 1
    assert [os.path.basename(p) for p in ds.file_paths] == list(F[f"folder/{key}/files"])
    (images, labels), = list(ds)
    assert images.dtype == mk.float32 and labels.dtype == mk.int32
    np.testing.assert_array_equal(labels.numpy(), F[f"folder/{key}/labels"])
    # grayscale from RGB files: Pillow's luma weights (ITU-R 601) are not libpng's, so a level apart
    atol = 1.01 if key.startswith("gray") else 2e-3
    np.testing.assert_allclose(images.numpy(), F[f"folder/{key}/images"], atol=atol)


def test_split_label_modes_and_fit(folder):
    train, val = mk.utils.image_dataset_from_directory(str(folder), image_size=(6, 8), validation_split=0.34,
                                                       subset="both", seed=7, verbose=False,
                                                       label_mode="categorical", batch_size=2)
    assert [os.path.relpath(p, folder) for p in train.file_paths] == list(F["folder/split/training"])
    assert [os.path.relpath(p, folder) for p in val.file_paths] == list(F["folder/split/validation"])
    assert len(train) == 2 and len(val) == 1
    images, labels = list(val)[0]
    assert images.shape == (2, 6, 8, 3) and labels.shape == (2, 2)
    model = mk.Sequential([mk.Input((6, 8, 3)), mk.layers.Rescaling(1 / 255), mk.layers.RandomFlip("horizontal"),
                           mk.layers.Flatten(), mk.layers.Dense(2)])
    model.compile("adam", mk.losses.CategoricalCrossentropy(from_logits=True))
    assert np.isfinite(model.fit(train, epochs=1, verbose=0).history["loss"]).all()
    binary = mk.utils.image_dataset_from_directory(str(folder), image_size=(3, 3), label_mode="binary", seed=1,
                                                   verbose=False, batch_size=None)
    first = list(binary)[0]
    assert first[0].shape == (3, 3, 3) and first[1].shape == (1,) and first[1].dtype == mk.float32


def test_bad_folders_and_files_are_named(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "loose.png").write_bytes(b"")
    with pytest.raises(ValueError, match=r"No class folders found in directory '.*empty'"):
        mk.utils.image_dataset_from_directory(str(tmp_path / "empty"))
    broken = tmp_path / "broken" / "cls"
    broken.mkdir(parents=True)
    (broken / "bad.png").write_bytes(b"not a png")
    ds = mk.utils.image_dataset_from_directory(str(tmp_path / "broken"), image_size=(4, 4), verbose=False)
    with pytest.raises(mk.errors.InvalidArgumentError, match=r"Could not decode the image file '.*bad.png'"):
        list(ds)
    with pytest.raises(mk.errors.NotFoundError, match="missing.png"):
        mk.io.read_file(str(tmp_path / "missing.png"))
    with pytest.raises(ValueError, match="color_mode"):
        mk.utils.image_dataset_from_directory(str(tmp_path / "broken"), color_mode="cmyk")


def test_missing_pillow_names_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "PIL", None)
    with pytest.raises(ImportError, match=r"pip install 'minikeras\[images\]'"):
        mk.io.encode_png(F["folder/pixels"][0])


def test_encode_png_of_16_bits_round_trips_as_tensorflow():
    # tf.io.encode_png of a uint16 (h, w, 1) image writes a 16-bit greyscale PNG ('I;16' to Pillow)
    pixels = (np.arange(12, dtype=np.uint16).reshape(3, 4, 1) * 5000)
    data = mk.io.encode_png(pixels)
    np.testing.assert_array_equal(mk.io.decode_png(data, dtype=mk.uint16).numpy(), pixels)
