"""``keras.ops.math``: Keras 3's ``keras/src/ops/math.py``: segment reductions, ``top_k``,
``in_top_k``, ``logsumexp``, ``cdist``, ``extract_sequences``, the FFTs and ``stft``/``istft``
(complex values as ``(real, imag)`` pairs), ``rsqrt``, ``erf``, ``erfc``, ``erfinv``,
``logdet`` and ``view_as_complex``/``view_as_real``.

Each computes what Keras 3's JAX backend computes, as one recorded op differentiable to any
order (``numpy_call``); on symbolic tensors it records a node of the functional graph.

    values, indices = keras.ops.top_k(scores, k=5)
"""
import math as _math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.keras.ops import numpy_forwards as fw
from minikeras.keras.ops.keras_op import keras_op
from minikeras.keras.ops.numpy_call import as_axis, keras_input, run
from minikeras.ops.spectral_windows import window_values


def _shape(x):
    return tuple(keras_input(x).shape)


def _dtype_name(x):
    return jnp.dtype(keras_input(x).dtype).name


# ----------------------------------------------------------------------------- segments, top k


def _segment(name, jax_fn):
    def forward(data, segment_ids, *, num_segments, sorted):  # noqa: A002
        return jax_fn(data, segment_ids, num_segments, indices_are_sorted=sorted)

    def op(data, segment_ids, num_segments=None, sorted=False):  # noqa: A002
        data_shape, ids_shape = _shape(data), _shape(segment_ids)
        if len(ids_shape) != 1:
            raise ValueError(f"Argument `segment_ids` should be an 1-D vector, got shape: {len(ids_shape)}. "
                             "Consider either flatten input with segment_ids.reshape((-1)) and "
                             "data.reshape((-1, ) + data.shape[len(segment_ids.shape):]) or vectorize with vmap.")
        if data_shape[:1] != ids_shape[:1] and None not in data_shape[:1] + ids_shape[:1]:
            raise ValueError(f"{name}: argument `segment_ids` and `data` should have same leading dimension. "
                             f"Got {ids_shape} v.s. {data_shape}.")
        if num_segments is None:
            raise ValueError("Argument `num_segments` must be set when using the JAX backend. "
                             "Received: num_segments=None")
        return run(name, forward, data, segment_ids, num_segments=int(num_segments), sorted=bool(sorted))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{name}``: ``data`` reduced over the rows with the same ``segment_ids`` (``num_segments`` "
                  "rows out; required, as on Keras's JAX backend).")
    return keras_op(name)(op)


segment_sum = _segment("segment_sum", jax.ops.segment_sum)
segment_max = _segment("segment_max", jax.ops.segment_max)
segment_min = _segment("segment_min", jax.ops.segment_min)
segment_prod = _segment("segment_prod", jax.ops.segment_prod)


def _top_k(x, *, k):
    return tuple(jax.lax.top_k(x, k))


@keras_op("top_k")
def top_k(x, k, sorted=True):  # noqa: A002
    """The ``k`` largest entries of ``x`` along its last axis and their indices (a list, as Keras
    on JAX)."""
    return list(run("top_k", _top_k, x, k=int(k)))


def _in_top_k(targets, predictions, *, k):
    at_label = jnp.take_along_axis(predictions, jnp.expand_dims(targets, axis=-1), axis=-1)
    at_label = jnp.where(jnp.isnan(at_label), -jnp.inf, at_label)
    rank = 1 + jnp.sum(jnp.greater(predictions, at_label), axis=-1)
    return jnp.less_equal(rank, k)


@keras_op("in_top_k")
def in_top_k(targets, predictions, k):
    """Whether each target is among the ``k`` largest ``predictions`` of its row (bool)."""
    return run("in_top_k", _in_top_k, targets, predictions, k=int(k))


def _logsumexp(x, *, axis, keepdims):
    return jax.scipy.special.logsumexp(x, axis=axis, keepdims=keepdims)


@keras_op("logsumexp")
def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, computed stably."""
    return run("logsumexp", _logsumexp, x, axis=as_axis(axis), keepdims=keepdims)


def _cdist(x, y):
    d = jnp.expand_dims(x, -2) - jnp.expand_dims(y, -3)
    return jnp.sqrt(jnp.sum(d * d, axis=-1))


@keras_op("cdist")
def cdist(x, y):
    """The Euclidean distances between the rows of ``x`` and of ``y`` (batched)."""
    xs, ys = _shape(x), _shape(y)
    if len(xs) < 2 or len(ys) < 2:
        raise ValueError(f"`cdist` inputs must have rank >= 2; received shapes {xs} and {ys}")
    if xs[-1] != ys[-1]:
        raise ValueError(f"Last dimension of inputs to `cdist` must match; received shapes {xs} and {ys}")
    return run("cdist", _cdist, x, y)


def _extract_sequences(x, *, length, stride):
    *batch, signal = x.shape
    x = jnp.reshape(x, (_math.prod(batch), signal, 1))
    x = jax.lax.conv_general_dilated_patches(x, (length,), (stride,), "VALID", dimension_numbers=("NTC", "OIT", "NTC"))
    return jnp.reshape(x, (*batch, *x.shape[-2:]))


@keras_op("extract_sequences")
def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of ``sequence_length`` every ``sequence_stride`` along ``x``'s last axis."""
    if len(_shape(x)) < 1:
        raise ValueError(f"Input should have rank >= 1. Received: input.shape = {_shape(x)}")
    return run("extract_sequences", _extract_sequences, x, length=int(sequence_length), stride=int(sequence_stride))


# ----------------------------------------------------------------------------- FFTs


def _check_complex_pair(x):
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"Input `x` should be a tuple of two tensors - real and imaginary.Received: x={x}")
    real, imag = keras_input(x[0]), keras_input(x[1])
    if tuple(real.shape) != tuple(imag.shape):
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary.Both the real and "
                         f"imaginary parts should have the same shape. Received: x[0].shape = {tuple(real.shape)}, "
                         f"x[1].shape = {tuple(imag.shape)}")
    if not (jnp.issubdtype(real.dtype, jnp.floating) and jnp.issubdtype(imag.dtype, jnp.floating)):
        raise ValueError(f"At least one tensor in input `x` is not of type float.Received: x={x}.")
    return real, imag


def _complex_fn(fn):
    def forward(real, imag, **params):
        out = fn(jax.lax.complex(real, imag), **params)
        return jnp.real(out), jnp.imag(out)
    forward.__name__ = fn.__name__
    return forward


_FFT, _FFT2, _IFFT2 = _complex_fn(jnp.fft.fft), _complex_fn(jnp.fft.fft2), _complex_fn(jnp.fft.ifft2)


@keras_op("fft")
def fft(x):
    """The FFT along the last axis of the complex ``x = (real, imag)``; a ``(real, imag)`` tuple."""
    return run("fft", _FFT, *_check_complex_pair(x))


@keras_op("fft2")
def fft2(x):
    """The 2-D FFT over the last two axes of ``x = (real, imag)``; a ``(real, imag)`` tuple."""
    return run("fft2", _FFT2, *_check_complex_pair(x))


@keras_op("ifft2")
def ifft2(x):
    """The inverse 2-D FFT over the last two axes of ``x = (real, imag)``."""
    return run("ifft2", _IFFT2, *_check_complex_pair(x))


def _rfft(x, *, n):
    out = jnp.fft.rfft(x, n=n, axis=-1, norm="backward")
    return jnp.real(out), jnp.imag(out)


@keras_op("rfft")
def rfft(x, fft_length=None):
    """The FFT of the real ``x`` along its last axis (``fft_length // 2 + 1`` bins), as ``(real, imag)``."""
    return run("rfft", _rfft, x, n=fft_length)


def _irfft(real, imag, *, n):
    return jnp.fft.irfft(jax.lax.complex(real, imag), n=n, axis=-1, norm="backward")


@keras_op("irfft")
def irfft(x, fft_length=None):
    """The real signal whose ``rfft`` is ``x = (real, imag)``."""
    return run("irfft", _irfft, *_check_complex_pair(x), n=fft_length)


def _window(window, sequence_length, dtype):
    """The window as NumPy (scipy's periodic ``hann``/``hamming``, as ``get_window``)."""
    if window is None:
        return None
    if isinstance(window, str):
        return window_values(window, sequence_length, True, "stft").astype(dtype)
    win = np.asarray(keras_input(window)).astype(dtype)
    if win.ndim != 1 or win.shape[-1] != sequence_length:
        raise ValueError(f"The shape of `window` must be equal to [sequence_length].Received: window shape={win.shape}")
    return win


def _stft(x, win, *, fft_length, stride, center):
    if center:
        pad_width = [(0, 0)] * x.ndim
        pad_width[-1] = (fft_length // 2, fft_length // 2)
        x = jnp.pad(x, pad_width, mode="reflect")
    n = win.shape[0]
    result = jax.scipy.signal.stft(x, fs=1.0, window=win, nperseg=n, noverlap=n - stride, nfft=fft_length,
                                   boundary=None, padded=False)[-1]
    result = result * jnp.sum(win)
    result = jnp.swapaxes(result, -2, -1)
    return jnp.real(result), jnp.imag(result)


def _check_window_name(window):
    if isinstance(window, str) and window not in ("hann", "hamming"):
        raise ValueError('If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                         f"Received: window={window}")


def _padded_window(window, sequence_length, fft_length, dtype):
    l_pad = (fft_length - sequence_length) // 2
    r_pad = fft_length - sequence_length - l_pad
    win = _window(window, sequence_length, dtype)
    if win is None:
        return np.ones(fft_length, dtype)
    return np.pad(win, (l_pad, r_pad))


@keras_op("stft")
def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """The short-time Fourier transform of the real ``x`` along its last axis: ``(real, imag)``,
    each ``(..., frames, fft_length // 2 + 1)``."""
    dtype = _dtype_name(x)
    if dtype not in ("float32", "float64"):
        raise TypeError(f"Invalid input type. Expected `float32` or `float64`. Received: input type={dtype}")
    if fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. "
                         f"Received: sequence_length={sequence_length}, fft_length={fft_length}")
    _check_window_name(window)
    win = _padded_window(window, sequence_length, fft_length, dtype)
    return run("stft", _stft, x, jnp.asarray(win), fft_length=int(fft_length), stride=int(sequence_stride),
               center=bool(center), constant=(1,))


def _istft(real, imag, win, *, fft_length, stride, length, center, windowed):
    n = win.shape[0]
    expected = fft_length + stride * (real.shape[-2] - 1)
    x = jax.scipy.signal.istft(jax.lax.complex(real, imag), fs=1.0, window=win, nperseg=n, noverlap=n - stride,
                               nfft=fft_length, boundary=False, time_axis=-2, freq_axis=-1)[-1]
    x = x / jnp.sum(win) if windowed else x / stride
    start = 0 if not center else fft_length // 2
    if length is not None:
        end = start + length
    elif center:
        end = -(fft_length // 2)
    else:
        end = expected
    return x[..., start:end]


@keras_op("istft")
def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann", center=True):
    """The inverse of ``stft``: the real signal from ``x = (real, imag)``."""
    real, imag = _check_complex_pair(x)
    if len(real.shape) < 2:
        raise ValueError(f"Input `x` must have at least 2 dimensions. Received shape: {tuple(real.shape)}")
    _check_window_name(window)
    win = _padded_window(window, sequence_length, fft_length, jnp.dtype(real.dtype).name)
    return run("istft", _istft, real, imag, jnp.asarray(win), fft_length=int(fft_length),
               stride=int(sequence_stride), length=length, center=bool(center), windowed=window is not None,
               constant=(2,))


# ----------------------------------------------------------------------------- elementwise


def _rsqrt(x):
    return jax.lax.rsqrt(x)


def _erf(x):
    return jax.lax.erf(x)


def _erfc(x):
    return jax.scipy.special.erfc(x)


def _erfinv(x):
    return jax.scipy.special.erfinv(x)


@keras_op("rsqrt")
def rsqrt(x):
    """``1 / sqrt(x)``; floats only (an integer ``x`` is an error naming its dtype)."""
    return run("rsqrt", _rsqrt, x)


@keras_op("erf")
def erf(x):
    """The error function of the float ``x``."""
    return run("erf", _erf, x)


@keras_op("erfc")
def erfc(x):
    """The complementary error function ``1 - erf(x)``."""
    return run("erfc", _erfc, x)


@keras_op("erfinv")
def erfinv(x):
    """The inverse error function."""
    return run("erfinv", _erfinv, x)


def _logdet(x):
    return jnp.linalg.slogdet(x)[1]


@keras_op("logdet")
def logdet(x):
    """The log of the absolute determinant of the (batched) square matrix ``x``."""
    return run("logdet", _logdet, x)


@keras_op("view_as_complex")
def view_as_complex(x):
    """The real ``x`` of last axis 2 (real, imaginary) as a complex64 tensor."""
    shape = _shape(x)
    if len(shape) < 1 or shape[-1] != 2:
        raise ValueError(f"Last dimension of input must be size 2 (real and imaginary). Received shape: {shape}")
    return run("view_as_complex", fw.view_as_complex, x)


@keras_op("view_as_real")
def view_as_real(x):
    """The complex ``x`` as a real tensor with a last axis of 2 (real, imaginary)."""
    return run("view_as_real", fw.view_as_real, x)


__all__ = sorted(_n for _n, _v in list(globals().items())
                 if not _n.startswith("_") and callable(_v) and not isinstance(_v, type)
                 and _n not in ("as_axis", "keras_input", "run", "keras_op"))
