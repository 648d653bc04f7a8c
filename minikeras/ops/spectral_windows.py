"""Window functions and the STFT's Fourier kernels, computed in NumPy at build time.

One home for what ``mk.initializers.STFT``, the ``STFTSpectrogram`` and ``MelSpectrogram``
layers and ``keras.ops.stft`` share: windows as ``scipy.signal.get_window`` gives them ('hann'
and 'hamming' computed here, other names by scipy when installed) and the cos/sin kernels whose
1-D convolution with a signal is its windowed DFT.

    kernel = fourier_kernel("real", "hann", "density", False, (256, 1, 129))
"""
import numpy as np


def _cosine_window(a0, length, periodic):
    if length == 1:
        return np.ones(1)
    period = length if periodic else length - 1
    return a0 - (1.0 - a0) * np.cos(2.0 * np.pi * np.arange(length) / period)


def window_values(window, length, periodic, what):
    """``window`` (a name or values) as a float64 array of ``length``: 'hann' and 'hamming'
    computed here (``periodic``: scipy's ``fftbins=True``), other names by scipy (when
    installed); values are checked to have ``length``. None for no window. ``what`` names the
    caller in errors."""
    if window is None:
        return None
    if isinstance(window, str):
        if window in ("hann", "hamming"):
            return _cosine_window(0.5 if window == "hann" else 0.54, length, periodic)
        try:
            from scipy.signal import get_window
        except ImportError:
            raise ValueError(f"{what}: window={window!r} needs scipy (pip install scipy); 'hann' and 'hamming' "
                             "do not") from None
        return np.asarray(get_window(window, length, periodic), np.float64)
    values = np.asarray(window, np.float64)
    if values.ndim != 1 or values.shape[-1] != length:
        raise ValueError(f"{what}: the shape of `window` must be equal to [{length}]. Received: window shape="
                         f"{values.shape}")
    return values


def check_window_name(window, what):
    """Raises ValueError for a window name scipy does not know (as Keras checks it)."""
    if isinstance(window, str) and window not in ("hann", "hamming"):
        window_values(window, 1, False, what)


def fourier_kernel(side, window, scaling, periodic, shape, what="STFT"):
    """Keras 3's ``initializers.STFT`` values as a float64 NumPy array of ``shape`` =
    (frame_length, 1, bins): the kernel whose convolution with a signal gives the real
    (``side='real'``: cos) or imaginary (sin) part of its DFT over ``(bins - 1) * 2`` points, the
    window applied and divided by its L2 norm (``scaling='density'``), its sum ('spectrum') or
    nothing (None)."""
    frame_length, _, bins = shape
    time = np.arange(frame_length, dtype=np.float64)[:, None, None]
    freq = np.arange(bins, dtype=np.float64)[None, None, :] / ((bins - 1) * 2)
    args = -2.0 * time * freq * np.pi
    kernel = np.cos(args) if side == "real" else np.sin(args)
    win = window_values(window, frame_length, periodic, what)
    if win is not None:
        scale = 1.0
        if scaling == "density":
            scale = np.sqrt(np.sum(win ** 2))
        elif scaling == "spectrum":
            scale = np.sum(np.abs(win))
        kernel = kernel * win[:, None, None] / scale
    return kernel
