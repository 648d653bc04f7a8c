"""Window functions for the spectrogram layers, as ``scipy.signal.get_window`` gives them."""
import numpy as np


def _cosine_window(a0, length, periodic):
    if length == 1:
        return np.ones(1)
    period = length if periodic else length - 1
    return a0 - (1.0 - a0) * np.cos(2.0 * np.pi * np.arange(length) / period)


def window_values(window, length, periodic, what):
    """``window`` (a name or values) as a float64 array of ``length``: 'hann' and 'hamming'
    computed here (``periodic``: scipy's ``fftbins=True``), other names by scipy (when
    installed); values are checked to have ``length``. None for no window."""
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
