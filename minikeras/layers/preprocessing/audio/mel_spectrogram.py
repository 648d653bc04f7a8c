"""MelSpectrogram: power spectrogram on the mel scale, in decibels (Keras 3's)."""
import jax.numpy as jnp
import numpy as np

from minikeras.layers.base import Layer
from minikeras.ops.jax_call import call_jax
from minikeras.ops.spectral_windows import window_values
from minikeras.saving.registry import register_builtin

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def hertz_to_mel(frequencies_hertz):
    """HTK's mel scale: ``1127 ln(1 + f / 700)``."""
    return _MEL_HIGH_FREQUENCY_Q * np.log(1.0 + np.asarray(frequencies_hertz) / _MEL_BREAK_FREQUENCY_HERTZ)


def linear_to_mel_weight_matrix(num_mel_bins, num_spectrogram_bins, sampling_rate, lower_edge_hertz,
                                upper_edge_hertz, dtype="float32"):
    """The (num_spectrogram_bins, num_mel_bins) matrix of triangular mel filters (TensorFlow's and
    Keras's ``linear_to_mel_weight_matrix``: HTK's mel scale, the DC bin left out)."""
    linear = np.linspace(0.0, sampling_rate / 2.0, num_spectrogram_bins)[1:]
    spectrogram_mel = hertz_to_mel(linear)[:, None]
    edges = np.linspace(hertz_to_mel(lower_edge_hertz), hertz_to_mel(upper_edge_hertz), num_mel_bins + 2)
    lower, center, upper = edges[:-2][None], edges[1:-1][None], edges[2:][None]
    lower_slopes = (spectrogram_mel - lower) / (center - lower)
    upper_slopes = (upper - spectrogram_mel) / (upper - center)
    weights = np.maximum(0.0, np.minimum(lower_slopes, upper_slopes))
    return np.pad(weights, ((1, 0), (0, 0))).astype(dtype)


def _stft_power(x, win, *, fft_length, stride, mag_exp):
    """``|STFT(x)| ** mag_exp`` along the last axis, frames centred (reflect padding), as Keras's
    ``ops.stft(center=True)``: (..., frames, fft_length // 2 + 1)."""
    half = fft_length // 2
    x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(half, half)], mode="reflect")
    frames = 1 + (x.shape[-1] - fft_length) // stride
    index = np.arange(frames)[:, None] * stride + np.arange(fft_length)[None, :]
    spectrum = jnp.fft.rfft(x[..., index] * win, n=fft_length, axis=-1)
    magnitude = jnp.sqrt(jnp.square(jnp.real(spectrum)) + jnp.square(jnp.imag(spectrum)))
    return jnp.power(magnitude, mag_exp)


def _mel_spectrogram(x, win, mel_matrix, *, fft_length, stride, mag_exp, power_to_db, min_power, ref_power, top_db,
                     out_dtype):
    mel = jnp.tensordot(_stft_power(x, win, fft_length=fft_length, stride=stride, mag_exp=mag_exp), mel_matrix, 1)
    if power_to_db:
        log_spec = 10.0 * jnp.log10(jnp.maximum(mel, min_power))
        log_spec = log_spec - 10.0 * np.log10(max(abs(ref_power), min_power))
        mel = jnp.maximum(log_spec, jnp.max(log_spec) - top_db)  # top_db below the largest value of the whole batch
    return (jnp.swapaxes(mel, -1, -2).astype(out_dtype),)


@register_builtin("minikeras.layers")
class MelSpectrogram(Layer):
    """Mel spectrograms of audio signals, as Keras 3's ``MelSpectrogram``: the short-time Fourier
    transform (frames centred by reflect padding), magnitudes to the power ``mag_exp``, triangular
    mel filters (HTK scale), then decibels relative to ``ref_power``, clipped ``top_db`` below the
    largest value of the batch.

    Input: (time,) or (batch, time). Output: (num_mel_bins, frames) or (batch, num_mel_bins,
    frames), frames = 1 + time // sequence_stride. No weights.

    Args:
      fft_length (2048), sequence_stride (512), sequence_length (default fft_length): the DFT size,
        the hop and the frame length (zero-padded to fft_length, window centred).
      window: 'hann' (default, periodic), 'hamming', values of length sequence_length, or None.
      sampling_rate (16000), num_mel_bins (128), min_freq (20.0), max_freq (default sampling_rate / 2).
      power_to_db (True), top_db (80.0), mag_exp (2.0: power), min_power (1e-10), ref_power (1.0).

    >>> mk.layers.MelSpectrogram(fft_length=64, sequence_stride=32, num_mel_bins=16)(mk.ones((2, 320))).shape
    (2, 16, 11)
    """

    def __init__(self, fft_length=2048, sequence_stride=512, sequence_length=None, window="hann", sampling_rate=16000,
                 num_mel_bins=128, min_freq=20.0, max_freq=None, power_to_db=True, top_db=80.0, mag_exp=2.0,
                 min_power=1e-10, ref_power=1.0, **kwargs):
        self.fft_length = fft_length
        self.sequence_stride = sequence_stride
        self.sequence_length = sequence_length or fft_length
        if self.fft_length < self.sequence_length:
            raise ValueError("`fft_length` must be greater than or equal to  `sequence_length`. Received: "
                             f"`sequence_length`={self.sequence_length}, `fft_length`={self.fft_length}.")
        if isinstance(window, str) and window not in ("hann", "hamming"):
            raise ValueError('If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                             f"Received: window={window}")
        self.window = window
        self.sampling_rate = sampling_rate
        self.num_mel_bins = num_mel_bins
        self.min_freq = min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db = power_to_db
        self.top_db = top_db
        self.mag_exp = mag_exp
        self.min_power = min_power
        self.ref_power = ref_power
        super().__init__(**kwargs)
        self.built = True

    def _window(self):
        win = window_values(self.window, self.sequence_length, True, f"MelSpectrogram '{self.name}'")
        if win is None:
            return np.ones(self.fft_length, np.float32)
        left = (self.fft_length - self.sequence_length) // 2
        return np.pad(win, (left, self.fft_length - self.sequence_length - left)).astype(np.float32)

    def call(self, inputs):
        if inputs.ndim not in (1, 2):
            raise ValueError(f"MelSpectrogram '{self.name}' expects audio of shape (time,) or (batch, time); "
                             f"received shape {tuple(inputs.shape)}")
        if inputs.shape[-1] <= self.fft_length // 2:
            raise ValueError(f"MelSpectrogram '{self.name}': the signal must be longer than fft_length // 2 = "
                             f"{self.fft_length // 2} samples (the frames are centred by reflect padding); received "
                             f"shape {tuple(inputs.shape)}")
        compute = "float32" if self.compute_dtype not in ("float32", "float64") else self.compute_dtype
        mel_matrix = linear_to_mel_weight_matrix(self.num_mel_bins, self.fft_length // 2 + 1, self.sampling_rate,
                                                 self.min_freq, self.max_freq)
        params = {"fft_length": int(self.fft_length), "stride": int(self.sequence_stride),
                  "mag_exp": float(self.mag_exp), "power_to_db": bool(self.power_to_db),
                  "min_power": float(self.min_power), "ref_power": float(self.ref_power),
                  "top_db": float(self.top_db), "out_dtype": self.compute_dtype}

        def forward(x, win, matrix):
            return _mel_spectrogram(x.astype(compute), win.astype(compute), matrix.astype(compute), **params)
        return call_jax(forward, [inputs, self._window(), mel_matrix], name="mel_spectrogram", constant=(1, 2),
                        key=("mel_spectrogram", compute, tuple(sorted(params.items()))))[0]

    def compute_output_shape(self, input_shape):
        steps = input_shape[-1]
        frames = None if steps is None else (steps + self.sequence_stride + 1) // self.sequence_stride
        if len(input_shape) == 1:
            return (self.num_mel_bins, frames)
        return (input_shape[0], self.num_mel_bins, frames)

    def get_config(self):
        return {**super().get_config(), "fft_length": self.fft_length, "sequence_stride": self.sequence_stride,
                "sequence_length": self.sequence_length, "window": self.window, "sampling_rate": self.sampling_rate,
                "num_mel_bins": self.num_mel_bins, "min_freq": self.min_freq, "max_freq": self.max_freq,
                "power_to_db": self.power_to_db, "top_db": self.top_db, "mag_exp": self.mag_exp,
                "min_power": self.min_power, "ref_power": self.ref_power}
