"""Files of a directory of class folders, labelled and split as Keras 3's ``index_directory``
and ``get_training_or_validation_split`` do (used by ``image_dataset_from_directory`` and
``text_dataset_from_directory``).

Class names are the sorted sub-folders (or ``class_names`` in its order); files are listed
sorted, per class, then shuffled with ``np.random.RandomState(seed)`` (paths and labels with
the same seed), and the validation split takes the last ``int(validation_split * n)`` files:
for a given seed the same files go to training and validation as in Keras.
"""
import os

import numpy as np

LABEL_MODES = ("int", "categorical", "binary", None)


def check_label_args(labels, label_mode, class_names, files, samples):
    """Keras's checks of ``labels``, ``class_names`` and ``label_mode`` for a ``*_dataset_from_directory``
    whose folder holds ``files`` (e.g. "image files") read as ``samples`` (e.g. "images")."""
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError(f"`labels` argument should be a list/tuple of integer labels, of the same size as the number "
                         f"of {files} in the target directory. If you wish to infer the labels from the "
                         f"subdirectory names in the target directory, pass `labels=\"inferred\"`. If you wish to get "
                         f"a dataset that only contains {samples} (no labels), pass `labels=None`. Received: "
                         f"labels={labels}")
    if class_names and labels != "inferred":
        raise ValueError(f"You can only pass `class_names` if `labels=\"inferred\"`. Received: labels={labels}, and "
                         f"class_names={class_names}")
    if label_mode not in LABEL_MODES:
        raise ValueError(f'`label_mode` argument must be one of "int", "categorical", "binary", or None. Received: '
                         f"label_mode={label_mode}")


def encode_labels(labels, label_mode, num_classes):
    """Integer class ids as Keras gives them for ``label_mode``: float32 (n, 1) for 'binary', one-hot
    float32 for 'categorical', int32 otherwise."""
    if label_mode == "binary":
        return np.asarray(labels, np.float32)[:, None]
    if label_mode == "categorical":
        return np.eye(num_classes, dtype=np.float32)[np.asarray(labels)]
    return np.asarray(labels, np.int32)


def check_validation_split_arg(validation_split, subset, shuffle, seed):
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both", received: {subset}')
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, to "
                         "make sure that there is no overlap between the training and validation subset.")


def _valid_files(directory, follow_links, formats):
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda x: x[0]):
        for name in sorted(files):
            if name.lower().endswith(formats):
                yield root, name


def index_directory(directory, labels, formats, class_names=None, shuffle=True, seed=None, follow_links=False,
                    verbose=True, what="files"):
    """``(file_paths, labels, class_names)`` for ``directory`` (see the module docstring).

    Raises:
      ValueError: ``directory`` is missing, or has no class folders when labels are inferred,
        or ``class_names`` is not a subset of them.
    """
    if not os.path.isdir(directory):
        raise ValueError(f"The directory {directory!r} does not exist or is not a directory")
    if labels == "inferred":
        subdirs = [d for d in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")]
        if not subdirs:
            raise ValueError(f"No class folders found in directory {directory!r}: with labels='inferred' each class "
                             f"needs a sub-folder holding its {what} (e.g. {directory}/pos/1.txt, "
                             f"{directory}/neg/2.txt)"
                             f"; received a directory with {len(os.listdir(directory))} entries and no sub-folders")
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError(f"The `class_names` passed did not match the names of the subdirectories of the "
                                 f"target directory. Expected: {subdirs} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            subdirs = list(class_names)
    else:
        subdirs = [""]
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` cannot be specified.")
            raise ValueError("When argument `labels` is specified, argument `class_names` cannot be specified (the "
                             "`class_names` will be the sorted list of labels).")
    class_indices = {name: i for i, name in enumerate(subdirs)}
    filenames, label_list = [], []
    for subdir in subdirs:
        folder = os.path.join(directory, subdir)
        for root, name in _valid_files(folder, follow_links, formats):
            filenames.append(os.path.join(subdir, os.path.relpath(os.path.join(root, name), folder)))
            label_list.append(class_indices[subdir])
    if labels == "inferred":
        labels = np.asarray(label_list, dtype="int32")
        names = subdirs
    elif labels is None:
        names = None
    else:
        if len(labels) != len(filenames):
            raise ValueError(f"Expected the lengths of `labels` to match the number of files in the target directory. "
                             f"len(labels) is {len(labels)} while we found {len(filenames)} files in directory "
                             f"{directory}.")
        names = [str(label) for label in sorted(set(labels))]
    if verbose:
        print(f"Found {len(filenames)} files." if labels is None else
              f"Found {len(filenames)} files belonging to {len(names)} classes.")
    file_paths = [os.path.join(directory, name) for name in filenames]
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(file_paths)
        if labels is not None:
            labels = np.array(labels)
            np.random.RandomState(seed).shuffle(labels)
    return file_paths, labels, names


def training_or_validation_split(samples, labels, validation_split, subset, verbose=True):
    """The training (first) or validation (last ``int(validation_split * n)``) part."""
    if not validation_split:
        return samples, labels
    num_val = int(validation_split * len(samples))
    if subset == "training":
        if verbose:
            print(f"Using {len(samples) - num_val} files for training.")
        return samples[:len(samples) - num_val], None if labels is None else labels[:len(samples) - num_val]
    if subset == "validation":
        if verbose:
            print(f"Using {num_val} files for validation.")
        return samples[len(samples) - num_val:], None if labels is None else labels[len(samples) - num_val:]
    raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')


def shuffle_buffer_size(batch_size):
    """The shuffle buffer of a ``*_dataset_from_directory``: 8 batches, or 1024 elements unbatched."""
    return batch_size * 8 if batch_size is not None else 1024


def split_datasets(make, samples, labels, validation_split, subset, shuffle, directory, what, formats,
                   verbose=True):
    """The dataset of ``subset`` (None: all the files; 'training' or 'validation'; 'both': a
    [training, validation] list, the validation part unshuffled), each built by
    ``make(samples, labels, shuffle)`` from its part of ``samples`` and ``labels``.

    Raises:
      ValueError: a part with no files, naming ``what`` (e.g. 'images'), ``directory`` and the
        allowed ``formats``.
    """
    def build(subset_name, shuffled):
        part_samples, part_labels = training_or_validation_split(samples, labels, validation_split, subset_name,
                                                                 verbose)
        if not part_samples:
            kind = {"training": "training ", "validation": "validation "}.get(subset_name, "")
            allowed = f"formats: {formats}" if len(formats) > 1 else f"format: {formats[0]}"
            raise ValueError(f"No {kind}{what} found in directory {directory}. Allowed {allowed}")
        return make(part_samples, part_labels, shuffled)

    if subset == "both":
        return [build("training", shuffle), build("validation", False)]
    return build(subset, shuffle)
