"""``mk.utils.text_dataset_from_directory``: a folder of class folders of ``.txt`` files as a
``mk.data.Dataset`` of (string batch, label batch), as Keras 3 builds it.

The files are listed, labelled, shuffled and split by ``directory_index`` exactly as Keras does
(the same seed puts the same files in training and validation); each file is read when its
element is reached (lazily, row by row on the host), cut to ``max_length`` bytes if given.
"""
import numpy as np

from minikeras.data.dataset import AUTOTUNE, Dataset
from minikeras.errors import NotFoundError
from minikeras.string_tensor import StringTensor
from minikeras.utils.directory_index import (
    check_label_args,
    check_validation_split_arg,
    encode_labels,
    index_directory,
    shuffle_buffer_size,
    split_datasets,
)


def _reader(max_length):
    def read(path):
        name = path.numpy().decode("utf-8", "surrogateescape")
        try:
            with open(name, "rb") as f:
                text = f.read()
        except OSError as error:
            raise NotFoundError(None, "ReadFile", f"{name}; {error.strerror} [Op:ReadFile]") from error
        return StringTensor.of_bytes(np.array(text[:max_length], dtype=object))
    return read


def _dataset(paths, labels, label_mode, num_classes, max_length, shuffle, buffer_size, seed, batch_size, names):
    read = _reader(max_length)
    path_array = np.empty(len(paths), dtype=object)
    path_array[:] = [p.encode("utf-8", "surrogateescape") for p in paths]
    if label_mode:
        ds = Dataset.from_tensor_slices((path_array, encode_labels(labels, label_mode, num_classes)))
    else:
        ds = Dataset.from_tensor_slices(path_array)
    if shuffle:
        ds = ds.shuffle(buffer_size, seed=seed)
    ds = ds.map((lambda p, y: (read(p), y)) if label_mode else read)
    if batch_size is not None:
        ds = ds.batch(batch_size)
    ds = ds.prefetch(AUTOTUNE)
    ds.class_names = names
    ds.file_paths = list(paths)
    return ds


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):
    """A ``Dataset`` of ``(texts, labels)`` batches from ``directory/<class>/*.txt`` (Keras 3's).

        train = mk.utils.text_dataset_from_directory("aclImdb/train", batch_size=32,
                                                     validation_split=0.2, subset="training", seed=42)
        train.class_names      # ['neg', 'pos']: the sorted sub-folders, label i = class_names[i]

    Args:
      directory: a folder with one sub-folder per class (``labels='inferred'``).
      labels: 'inferred', None (texts only), or a list of labels for the files in sorted order.
      label_mode: 'int' (int32), 'categorical' (one-hot float32), 'binary' (float32, shape (1,))
        or None.
      class_names: the classes' order (a subset of the sub-folders).
      batch_size: rows per batch (None: single elements).
      max_length: keep at most this many bytes of each text.
      shuffle, seed: shuffle the files (and the batches' order: a buffer of 8 batches).
      validation_split, subset: the fraction held out, and 'training', 'validation' or 'both'
        (a list of the two datasets).
      follow_links: follow symbolic links to sub-folders.
      format: 'tf' only (a minikeras Dataset).
      verbose: print how many files were found and used.

    Raises:
      ValueError: bad arguments, no class folders, or no text files.
    """
    check_label_args(labels, label_mode, class_names, "text files", "text samples")
    if format != "tf":
        raise ValueError(f'`format` must be "tf" (a minikeras Dataset). Received: format={format}')
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, names = index_directory(directory, labels, (".txt",), class_names=class_names, shuffle=shuffle,
                                           seed=seed, follow_links=follow_links, verbose=verbose, what="text files")
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={names}")
    buffer_size = shuffle_buffer_size(batch_size)
    num_classes = len(names) if names else 0

    def make(part_paths, part_labels, shuffled):
        return _dataset(part_paths, part_labels, label_mode, num_classes, max_length, shuffled, buffer_size, seed,
                        batch_size, names)

    return split_datasets(make, paths, labels, validation_split, subset, shuffle, directory, "text files",
                          (".txt",), verbose)
