"""``mk.utils.image_dataset_from_directory``: a folder of class folders of images as a
``mk.data.Dataset`` of (image batch, label batch), as Keras 3 builds it.

The files are listed, labelled, shuffled and split by ``directory_index`` as Keras does. The
dataset holds file indices; each batch is read, decoded (Pillow) and resized on the host with
NumPy, using TensorFlow's sampling (``minikeras.image.resizing``), then handed over as one
array: the images are float32, (batch, height, width, channels), values in [0, 255].
"""
import concurrent.futures
import os
import threading

import numpy as np

from minikeras.data.dataset import AUTOTUNE, Dataset
from minikeras.errors import NotFoundError
from minikeras.image import codec
from minikeras.image.resizing import METHODS, crop_box_to_aspect_ratio, host_resize, host_resize_batch
from minikeras.utils.directory_index import (
    check_label_args,
    check_validation_split_arg,
    encode_labels,
    index_directory,
    shuffle_buffer_size,
    split_datasets,
)

FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_CHANNELS = {"grayscale": 1, "rgb": 3, "rgba": 4}


def read_file(path):
    """The bytes of a file; NotFoundError (naming it) when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)  # without open()'s buffered file object: less work per small file
        try:
            chunks = [os.read(fd, _READ_SIZE)]
            while len(chunks[-1]) == _READ_SIZE:  # a file this large or larger: read on to its end
                chunks.append(os.read(fd, _READ_SIZE))
        finally:
            os.close(fd)
    except OSError as error:
        raise NotFoundError(None, "ReadFile", f"{path}; {error.strerror} [Op:ReadFile]") from error
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_READ_SIZE = 1 << 20


def fit_aspect_ratio(image, image_size, crop_to_aspect_ratio, pad_to_aspect_ratio):
    """A decoded image cropped (centre) or padded (zeros) to the target's aspect ratio as Keras
    does, or unchanged."""
    height, width = image_size
    if crop_to_aspect_ratio:
        top, left, crop_h, crop_w = crop_box_to_aspect_ratio(image.shape[0], image.shape[1], height, width)
        return image[top:top + crop_h, left:left + crop_w]
    if pad_to_aspect_ratio:
        pad_h = max(image.shape[0], int(float(image.shape[1] * height) / width))
        pad_w = max(image.shape[1], int(float(image.shape[0] * width) / height))
        top, left = (pad_h - image.shape[0]) // 2, (pad_w - image.shape[1]) // 2
        padded = np.zeros((pad_h, pad_w, image.shape[2]), image.dtype)
        padded[top:top + image.shape[0], left:left + image.shape[1]] = image
        return padded
    return image


def load_image(path, channels, image_size, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio):
    """One file as a float32 (height, width, channels) array, decoded and resized as Keras does,
    on its own (the reference for ``load_batch``).

    Raises:
      NotFoundError: the file cannot be read; InvalidArgumentError: it is not an image.
    """
    image = codec.decode(read_file(path), channels, what=f"the image file '{path}'")
    image = fit_aspect_ratio(image, image_size, crop_to_aspect_ratio, pad_to_aspect_ratio)
    return host_resize(image.astype(np.float32), image_size, interpolation)


def load_batch(paths, channels, image_size, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio):
    """The files as one float32 (n, height, width, channels) batch, each image as ``load_image``
    gives it: each file decoded by Pillow, then the images of one size resized together
    (``host_resize_batch``). With more than one CPU the batch goes in parts on a pool of
    threads: file reads and NumPy's array operations release the GIL (Pillow's decoder does
    not), so the parts overlap.

    Raises:
      NotFoundError: a file cannot be read; InvalidArgumentError: a file is not an image.
    """
    def load(part):
        images = _decode_files(part, channels, image_size, crop_to_aspect_ratio, pad_to_aspect_ratio)
        return _resize_all(images, image_size, interpolation, channels)

    parts = min(_WORKERS * 2, len(paths) // 16) if _WORKERS > 1 else 1
    if parts <= 1:
        return load(paths)
    bounds = np.linspace(0, len(paths), parts + 1).astype(int)
    return np.concatenate(list(_pool().map(load, [paths[a:b] for a, b in zip(bounds[:-1], bounds[1:])])))


def _decode_files(paths, channels, image_size, crop_to_aspect_ratio, pad_to_aspect_ratio):
    return [fit_aspect_ratio(codec.decode(read_file(path), channels, what=f"the image file '{path}'"),
                             image_size, crop_to_aspect_ratio, pad_to_aspect_ratio) for path in paths]


def _resize_all(images, image_size, interpolation, channels):
    """The images (a list) resized into one float32 batch, those of one size together."""
    groups = {}
    for i, image in enumerate(images):
        groups.setdefault(image.shape, []).append(i)
    if len(groups) == 1:
        return host_resize_batch(np.stack(images), image_size, interpolation)
    out = np.empty((len(images), *image_size, channels), np.float32)
    for rows in groups.values():
        out[rows] = host_resize_batch(np.stack([images[i] for i in rows]), image_size, interpolation)
    return out


_WORKERS = min(os.cpu_count() or 1, 16)
_POOL = []
_POOL_LOCK = threading.Lock()


def _pool():
    """The threads that load parts of batches (one per CPU, at most 16), made on first use."""
    with _POOL_LOCK:  # two datasets' prefetch threads may ask at once
        if not _POOL:
            _POOL.append(concurrent.futures.ThreadPoolExecutor(_WORKERS, thread_name_prefix="minikeras-images"))
    return _POOL[0]


def _dataset(paths, labels, label_mode, num_classes, load, shuffle, buffer_size, seed, batch_size, names):
    paths = list(paths)
    index = np.arange(len(paths), dtype=np.int64)

    def read(i):
        rows = np.atleast_1d(i.numpy())
        images = load([paths[int(r)] for r in rows])
        return images if np.ndim(i.numpy()) else images[0]

    ds = Dataset.from_tensor_slices((index, encode_labels(labels, label_mode, num_classes)) if label_mode else index)
    if shuffle:
        ds = ds.shuffle(buffer_size, seed=seed)
    if batch_size is not None:
        ds = ds.batch(batch_size)
    ds = ds.map((lambda i, y: (read(i), y)) if label_mode else read)
    ds = ds.prefetch(AUTOTUNE)
    ds.class_names = names
    ds.file_paths = paths
    return ds


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, pad_to_aspect_ratio=False, data_format=None,
                                 format="tf", verbose=True):
    """A ``Dataset`` of ``(images, labels)`` batches from ``directory/<class>/*.png`` (Keras 3's).

        train = mk.utils.image_dataset_from_directory("flowers", image_size=(180, 180), batch_size=32,
                                                      validation_split=0.2, subset="training", seed=123)
        train.class_names      # the sorted sub-folders: label i is class_names[i]

    Args:
      directory: a folder with one sub-folder per class (``labels='inferred'``); images are
        .png, .jpg/.jpeg, .gif (first frame) and .bmp files.
      labels: 'inferred', None (images only), or a list of labels for the files in sorted order.
      label_mode: 'int' (int32), 'categorical' (one-hot float32), 'binary' (float32, shape (1,))
        or None.
      class_names: the classes' order (a subset of the sub-folders).
      color_mode: 'grayscale' (1 channel), 'rgb' (3) or 'rgba' (4).
      batch_size: images per batch (None: single images).
      image_size: (height, width) every image is resized to.
      shuffle, seed: shuffle the files (with ``seed``, the same order and split every run).
      validation_split, subset: the fraction held out, and 'training', 'validation' or 'both'
        (a list of the two datasets).
      interpolation: the resize method ('bilinear', 'nearest', 'bicubic', 'area', 'lanczos3',
        'lanczos5').
      crop_to_aspect_ratio / pad_to_aspect_ratio: crop the centre (or pad with zeros) to the
        target's aspect ratio before resizing, instead of stretching.
      data_format: 'channels_last' only.

    Returns:
      A Dataset (or a [training, validation] list for ``subset='both'``) with ``class_names``
      and ``file_paths`` attributes.

    Raises:
      ValueError: bad arguments, a directory without class folders or without images.
      NotFoundError / InvalidArgumentError (when a batch is read): a file that cannot be read
        or decoded, named in the message.
    """
    check_label_args(labels, label_mode, class_names, "image files", "images")
    if color_mode not in _CHANNELS:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f'Received: color_mode={color_mode}')
    if interpolation not in METHODS:
        raise ValueError(f"`interpolation` must be one of {METHODS}. Received: interpolation={interpolation}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError("Only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can be set to `True`.")
    if data_format not in (None, "channels_last"):
        raise ValueError(f"image_dataset_from_directory supports data_format='channels_last' only, received "
                         f"{data_format!r}")
    if format != "tf":
        raise ValueError(f'`format` must be "tf" (a minikeras Dataset). Received: format={format}')
    image_size = tuple(int(n) for n in image_size)
    if len(image_size) != 2 or min(image_size) <= 0:
        raise ValueError(f"`image_size` must be (height, width), two positive integers. Received: {image_size}")
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, names = index_directory(directory, labels, FORMATS, class_names=class_names, shuffle=shuffle,
                                           seed=seed, follow_links=follow_links, verbose=verbose, what="images")
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={names}")
    channels = _CHANNELS[color_mode]

    def load(part):
        return load_batch(part, channels, image_size, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio)

    buffer_size = shuffle_buffer_size(batch_size)
    num_classes = len(names) if names else 0

    def make(part_paths, part_labels, shuffled):
        return _dataset(part_paths, part_labels, label_mode, num_classes, load, shuffled, buffer_size, seed,
                        batch_size, names)

    return split_datasets(make, paths, labels, validation_split, subset, shuffle, os.fspath(directory), "images",
                          FORMATS, verbose)
