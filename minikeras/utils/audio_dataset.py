"""``mk.utils.audio_dataset_from_directory``: a folder of class folders of ``.wav`` files as a
``mk.data.Dataset`` of (audio batch, label batch), as Keras 3 builds it.

The files are listed, labelled, shuffled and split by ``directory_index`` as Keras does; each
file is read when its element is reached and decoded as ``tf.audio.decode_wav`` decodes it
(``wav.decode_wav``: 16-bit PCM, float32 in [-1, 1), (samples, channels)). Batches are padded
with zeros to their longest file, or every file is cut or padded to ``output_sequence_length``.
"""
import numpy as np

from minikeras.data.dataset import AUTOTUNE, Dataset
from minikeras.utils.directory_index import (
    check_label_args,
    check_validation_split_arg,
    encode_labels,
    index_directory,
    shuffle_buffer_size,
    split_datasets,
)
from minikeras.utils.image_dataset import read_file
from minikeras.utils.wav import decode_wav

FORMATS = (".wav",)


def _dataset(paths, labels, label_mode, num_classes, output_sequence_length, shuffle, buffer_size, seed,
             batch_size, names):
    paths = list(paths)
    desired = -1 if output_sequence_length is None else output_sequence_length

    def read(path):  # the elements hold the paths as strings: the map runs on the host, row by row
        return decode_wav(read_file(path.numpy().decode("utf-8", "surrogateescape")), desired)[0]

    path_array = np.empty(len(paths), dtype=object)
    path_array[:] = [p.encode("utf-8", "surrogateescape") for p in paths]
    ds = Dataset.from_tensor_slices(
        (path_array, encode_labels(labels, label_mode, num_classes)) if label_mode else path_array)
    if shuffle:
        ds = ds.shuffle(buffer_size, seed=seed)
    ds = ds.map((lambda i, y: (read(i), y)) if label_mode else read)
    if batch_size is not None:
        ds = ds.padded_batch(batch_size) if output_sequence_length is None else ds.batch(batch_size)
    ds = ds.prefetch(AUTOTUNE)
    ds.class_names = names
    ds.file_paths = paths
    return ds


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                 sampling_rate=None, output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None, follow_links=False, verbose=True):
    """A ``Dataset`` of ``(audio, labels)`` batches from ``directory/<class>/*.wav`` (Keras 3's).

        train, val = mk.utils.audio_dataset_from_directory("speech_commands", batch_size=32, seed=0,
                                                           validation_split=0.2, subset="both",
                                                           output_sequence_length=16000)
        train.class_names   # the sorted sub-folders: label i = class_names[i]

    Args:
      directory: a folder with one sub-folder per class (``labels='inferred'``).
      labels: 'inferred', None (audio only), or a list of labels for the files in sorted order.
      label_mode: 'int' (int32), 'categorical' (one-hot float32), 'binary' (float32, shape (1,))
        or None.
      class_names: the classes' order (a subset of the sub-folders).
      batch_size: rows per batch (None: single elements, (samples, channels)).
      sampling_rate: Keras resamples with tensorflow-io; minikeras has no resampler and refuses
        any value but None.
      output_sequence_length: cut or zero-pad every file to this many samples; None pads each
        batch to its longest file.
      ragged: Keras's ragged batches; refused (minikeras's Datasets hold no RaggedTensors).
      shuffle, seed: shuffle the files (and then the elements: a buffer of 8 batches).
      validation_split, subset: the fraction held out, and 'training', 'validation' or 'both'
        (a list of the two datasets).
      follow_links: follow symbolic links to sub-folders.
      verbose: print how many files were found and used.

    Returns:
      A Dataset of float32 audio ``(batch, samples, channels)`` and labels (Keras's encodings),
      with ``class_names`` and ``file_paths``.

    Raises:
      ValueError: bad arguments (Keras's messages), no class folders, or no .wav files.
      InvalidArgumentError: (when read) a file that is not 16-bit PCM WAV, as TensorFlow.
    """
    check_label_args(labels, label_mode, class_names, "audio files", "audio samples")
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if ragged:
        raise ValueError("audio_dataset_from_directory(ragged=True): minikeras's Datasets do not hold RaggedTensors; "
                         "leave ragged=False for batches zero-padded to their longest file, or set "
                         "output_sequence_length")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError(f"`sampling_rate` should have an integer value. Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
        raise ValueError(f"audio_dataset_from_directory(sampling_rate={sampling_rate}): Keras resamples with "
                         "tensorflow-io, and minikeras has no resampler; leave sampling_rate=None to keep each file's "
                         "own rate")
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, names = index_directory(directory, labels, FORMATS, class_names=class_names, shuffle=shuffle,
                                           seed=seed, follow_links=follow_links, verbose=verbose, what="audio files")
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         f"class_names={names}")
    buffer_size = shuffle_buffer_size(batch_size)
    num_classes = len(names) if names else 0

    def make(part_paths, part_labels, shuffled):
        return _dataset(part_paths, part_labels, label_mode, num_classes, output_sequence_length, shuffled,
                        buffer_size, seed, batch_size, names)

    return split_datasets(make, paths, labels, validation_split, subset, shuffle, directory, "audio files", FORMATS,
                          verbose)
