"""image_dataset_from_directory's batched loading (host_resize_batch, load_batch) gives exactly
what loading each file on its own gives (codec.decode, host_resize): files of several sizes,
modes, PNG row filters and formats."""
import io
import os
import struct
import zlib

import numpy as np
import pytest

import minikeras as mk
from minikeras.image import codec
from minikeras.image.resizing import METHODS, host_resize, host_resize_batch
from minikeras.utils import image_dataset

Image = pytest.importorskip("PIL.Image")


def filtered_png(pixels, filters):
    """A PNG file of uint8 ``pixels`` (h, w, c) whose row y is filtered with ``filters[y]``
    (0 none, 1 sub, 2 up, 3 average, 4 paeth), written by hand so that every filter is met."""
    height, width, channels = pixels.shape
    above, raw = np.zeros(width * channels, np.int32), bytearray()
    for y in range(height):
        row = pixels[y].reshape(-1).astype(np.int32)
        left = np.concatenate([np.zeros(channels, np.int32), row[:-channels]])
        upper_left = np.concatenate([np.zeros(channels, np.int32), above[:-channels]])
        guess = left + above - upper_left
        da, db, dc = abs(guess - left), abs(guess - above), abs(guess - upper_left)
        paeth = np.where((da <= db) & (da <= dc), left, np.where(db <= dc, above, upper_left))
        predicted = [0, left, above, (left + above) // 2, paeth][filters[y]]
        raw.append(filters[y])
        raw += ((row - predicted) % 256).astype(np.uint8).tobytes()
        above = row
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    chunks = [(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)),
              (b"tEXt", b"note\x00hand-filtered"), (b"IDAT", zlib.compress(bytes(raw))), (b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(struct.pack(">I", len(body)) + kind + body
                                    + struct.pack(">I", zlib.crc32(body, zlib.crc32(kind))) for kind, body in chunks)


def pillow_encoded(pixels, **options):
    out = io.BytesIO()
    if isinstance(pixels, np.ndarray):
        pixels = Image.fromarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels)
    pixels.save(out, **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """(path, bytes) of files in two class folders: hand-filtered PNGs (every first-row filter),
    Pillow's PNGs of each
    mode, a palette, a 16-bit and a transparent PNG, a JPEG; widths shared and not."""
    rng = np.random.default_rng(3)
    root = tmp_path_factory.mktemp("batch_load")
    made = []
    for i, (shape, first) in enumerate([((9, 13, 3), 0), ((7, 13, 3), 1), ((9, 13, 3), 2), ((12, 13, 3), 3),
                                        ((9, 13, 3), 4), ((20, 6, 3), 4), ((9, 13, 4), 2), ((10, 5, 1), 4),
                                        ((8, 11, 2), 2)]):
        pixels = np.clip(rng.integers(60, 200, (1, 1, shape[2])) + rng.integers(-40, 41, shape), 0, 255)
        made.append(filtered_png(pixels.astype(np.uint8), [first] + list(rng.integers(0, 5, shape[0] - 1))))
    pixels = rng.integers(0, 256, (9, 13, 4)).astype(np.uint8)
    made += [pillow_encoded(pixels[:, :, :c], format="PNG") for c in (1, 2, 3, 4)]
    made += [pillow_encoded(pixels[:, :, :3], format="PNG", transparency=(1, 2, 3)),
             pillow_encoded(pixels[:, :, :3], format="JPEG", quality=90),
             pillow_encoded(Image.frombytes("I;16", (13, 9), rng.integers(0, 65535, (9, 13)).astype("<u2")),
                            format="PNG")]
    palette = io.BytesIO()
    Image.fromarray(pixels[:, :, :3]).convert("P").save(palette, format="PNG")
    made.append(palette.getvalue())
    paths = []
    for i, data in enumerate(made):
        folder = root / "ab"[i % 2]
        os.makedirs(folder, exist_ok=True)
        paths.append(str(folder / f"{i:02d}.png"))
        mk.io.write_file(paths[-1], data)
    return root, paths, made


def test_hand_filtered_pngs_decode_to_their_pixels():
    pixels = np.random.default_rng(0).integers(0, 256, (6, 5, 3)).astype(np.uint8)
    for filters in ([0, 1, 2, 3, 4, 4], [4, 3, 2, 1, 0, 2], [2] * 6, [3] * 6):
        np.testing.assert_array_equal(codec.decode(filtered_png(pixels, filters), 3), pixels)


@pytest.mark.parametrize("method", METHODS)
def test_host_resize_batch_equals_host_resize(method):
    images = np.random.default_rng(1).integers(0, 256, (3, 9, 13, 3)).astype(np.uint8)
    for size in [(6, 8), (9, 13), (9, 5), (20, 31)]:
        expected = np.stack([host_resize(image.astype(np.float32), size, method) for image in images])
        resized = host_resize_batch(images, size, method)
        assert resized.dtype == np.float32
        np.testing.assert_array_equal(resized, expected)


@pytest.mark.parametrize("color_mode,kwargs", [
    ("rgb", {"interpolation": "bilinear"}), ("rgb", {"interpolation": "nearest"}),
    ("grayscale", {"interpolation": "bilinear", "crop_to_aspect_ratio": True}),
    ("rgba", {"interpolation": "bicubic", "pad_to_aspect_ratio": True}),
    ("rgb", {"interpolation": "area", "crop_to_aspect_ratio": True})])
def test_load_batch_equals_load_image(files, color_mode, kwargs):
    _, paths, _ = files
    channels = {"grayscale": 1, "rgb": 3, "rgba": 4}[color_mode]
    args = (channels, (6, 8), kwargs["interpolation"], kwargs.get("crop_to_aspect_ratio", False),
            kwargs.get("pad_to_aspect_ratio", False))
    expected = np.stack([image_dataset.load_image(path, *args) for path in paths])
    batch = image_dataset.load_batch(paths, *args)
    assert batch.dtype == np.float32 and batch.shape == expected.shape
    np.testing.assert_array_equal(batch, expected)


@pytest.mark.parametrize("shuffle", [False, True])
def test_dataset_batches_are_the_files_in_order(files, shuffle):
    root, _, _ = files
    ds = mk.utils.image_dataset_from_directory(str(root), image_size=(6, 8), batch_size=5, shuffle=shuffle, seed=4,
                                               crop_to_aspect_ratio=True, verbose=False)
    batches = list(ds)
    images, labels = (np.concatenate([b[k].numpy() for b in batches]) for k in (0, 1))
    expected = np.stack([image_dataset.load_image(p, 3, (6, 8), "bilinear", True, False) for p in ds.file_paths])
    if not shuffle:
        np.testing.assert_array_equal(images, expected)
        np.testing.assert_array_equal(labels, [ds.class_names.index(os.path.basename(os.path.dirname(p)))
                                               for p in ds.file_paths])
    else:  # file_paths is the seed's file order; each pass then shuffles the rows again
        assert images.shape == expected.shape
        for image, label in zip(images, labels):
            classes = {os.path.basename(os.path.dirname(p)) for p, e in zip(ds.file_paths, expected)
                       if np.array_equal(image, e)}  # a few files load to the same image
            assert ds.class_names[label] in classes


def test_unreadable_and_broken_files_are_named(files, tmp_path):
    _, paths, datas = files
    broken = tmp_path / "broken.png"
    broken.write_bytes(datas[0][:60])
    with pytest.raises(mk.errors.InvalidArgumentError, match="broken.png"):
        image_dataset.load_batch(paths[:9] + [str(broken)], 3, (6, 8), "bilinear", False, False)
    with pytest.raises(mk.errors.NotFoundError, match="missing.png"):
        image_dataset.load_batch(paths[:9] + [str(tmp_path / "missing.png")], 3, (6, 8), "bilinear", False, False)


def test_load_batch_in_parts_on_threads_keeps_the_order(files, monkeypatch):
    _, paths, _ = files
    paths = paths * 3  # 51 files: three parts of a batch on the pool's threads
    monkeypatch.setattr(image_dataset, "_WORKERS", 4)
    args = (3, (6, 8), "bilinear", True, False)
    expected = np.stack([image_dataset.load_image(path, *args) for path in paths])
    np.testing.assert_array_equal(image_dataset.load_batch(paths, *args), expected)

