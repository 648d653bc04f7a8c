"""``timeseries_dataset_from_array``: sliding windows over a time series, as an ``mk.data.Dataset``.

The windows are never materialized all at once: the dataset holds the start positions, and
each batch gathers its windows from the series in one op.
"""
import numpy as np

from minikeras.data import Dataset
from minikeras.ops.array import gather
from minikeras.ops.creation import constant
from minikeras.ops.math import add


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """A dataset of sliding windows over ``data`` (axis 0 is time), as Keras 3's.

    Window ``k`` starts at ``start_index + k * sequence_stride`` and takes ``sequence_length``
    steps ``sampling_rate`` apart; only windows that end before ``end_index`` are made.

    Args:
      data: an array (or Tensor) of consecutive data points, time on axis 0.
      targets: ``targets[i]`` is the target of the window starting at index ``i`` (counted from
        ``start_index``), or None to yield only the windows.
      sequence_length: the number of steps per window.
      sequence_stride: the period between the starts of successive windows.
      sampling_rate: the period between successive steps within a window.
      batch_size: windows per batch (the last may be smaller); None yields single windows.
      shuffle: shuffle the windows (the start positions with NumPy's ``RandomState(seed)``, as
        Keras, then locally within ``batch_size * 8`` windows).
      seed: the shuffling seed.
      start_index, end_index: only data points in ``[start_index, end_index)`` are used.

    Returns:
      An ``mk.data.Dataset`` of ``(windows, targets)``, or of ``windows`` when ``targets`` is
      None; windows have shape ``(batch, sequence_length) + data.shape[1:]``.

    Example:
      >>> ds = timeseries_dataset_from_array(np.arange(10), np.arange(10), sequence_length=3,
      ...                                    batch_size=4)
      >>> x, y = next(iter(ds))   # x[1] == [1, 2, 3], y[1] == 1
    """
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError(f"`start_index` must be 0 or greater. Received: start_index={start_index}")
        if start_index >= n:
            raise ValueError(f"`start_index` must be lower than the length of the data. Received: "
                             f"start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(f"`end_index` must be higher than `start_index`. Received: start_index={start_index}, "
                             f"and end_index={end_index} ")
        if end_index >= n:
            raise ValueError(f"`end_index` must be lower than the length of the data. Received: "
                             f"end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: {name}={value}, "
                             f"for data of length {n}")
    start_index = start_index or 0
    end_index = end_index or n
    num_windows = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_windows = min(num_windows, len(targets))
    starts = np.arange(0, max(num_windows, 0), sequence_stride, dtype=np.int32)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(starts)

    series = constant(np.asarray(data)[start_index:end_index])
    offsets = constant(np.arange(sequence_length, dtype=np.int32) * sampling_rate)
    labels = None if targets is None else constant(np.asarray(targets)[start_index:end_index])

    def windows(start):
        steps = add(start[..., None], offsets)  # (..., sequence_length) indices into the series
        x = gather(series, steps)
        return x if labels is None else (x, gather(labels, start))

    dataset = Dataset.from_tensor_slices(starts)
    if shuffle:
        dataset = dataset.shuffle(1024 if batch_size is None else batch_size * 8, seed=seed)
    if batch_size is not None:
        dataset = dataset.batch(batch_size)
    return dataset.map(windows)
