"""``pad_sequences``: a list of sequences of different lengths as one NumPy array."""
import numpy as np


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Pads (or truncates) each sequence to ``maxlen`` steps, as ``keras.utils.pad_sequences``.

    Args:
      sequences: a list of sequences (lists or arrays; each step may itself be an array, all
        steps of the same shape).
      maxlen: the length of the result; None takes the longest sequence's length.
      dtype: the result's dtype (``object`` or a string dtype for variable-length strings).
      padding: 'pre' or 'post': pad before or after each sequence.
      truncating: 'pre' or 'post': drop steps from the start or the end of longer sequences.
      value: the padding value.

    Returns:
      A NumPy array of shape ``(len(sequences), maxlen) + step_shape``.

    Example:
      >>> pad_sequences([[1, 2, 3], [4]], maxlen=2)
      array([[2, 3], [0, 4]], dtype=int32)
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    if padding not in ("pre", "post"):
        raise ValueError(f'Padding type "{padding}" not understood')
    if truncating not in ("pre", "post"):
        raise ValueError(f'Truncating type "{truncating}" not understood')
    lengths, step_shape = [], None
    for s in sequences:
        try:
            lengths.append(len(s))
        except TypeError as e:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {s}") from e
        if step_shape is None and len(s):
            step_shape = np.asarray(s).shape[1:]
    step_shape = step_shape or ()
    if maxlen is None:
        maxlen = max(lengths, default=0)
    text_dtype = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not text_dtype:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: {type(value)}\n"
                         "You should set `dtype=object` for variable length strings.")
    out = np.full((len(sequences), maxlen) + step_shape, value, dtype=dtype)
    if maxlen == 0:
        return out
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        kept = np.asarray(s[-maxlen:] if truncating == "pre" else s[:maxlen], dtype=dtype)
        if kept.shape[1:] != step_shape:
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is different from "
                             f"expected shape {step_shape}")
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, -len(kept):] = kept
    return out
