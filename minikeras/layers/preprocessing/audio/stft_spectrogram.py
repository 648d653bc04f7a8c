"""STFTSpectrogram: a short-time Fourier transform as a 1-D convolution with (trainable) Fourier kernels."""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import epsilon, standardize_data_format
from minikeras.initializers import STFT
from minikeras.layers.base import Layer
from minikeras.layers.input_spec import InputSpec
from minikeras.ops.jax_call import call_jax
from minikeras.ops.spectral_windows import check_window_name
from minikeras.saving.registry import register_builtin

MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")


def _frames_conv(x, kernel, stride, padding, channels_last):
    """(batch, channels, bins, frames): each channel convolved with ``kernel`` alone."""
    if channels_last:
        batch, steps, channels = x.shape
        x = jnp.reshape(jnp.transpose(x, (0, 2, 1)), (-1, steps, 1))
        spec = ("NWC", "WIO", "NWC")
    else:
        batch, channels, steps = x.shape
        x = jnp.reshape(x, (-1, 1, steps))
        spec = ("NCW", "WIO", "NCW")
    out = jax.lax.conv_general_dilated(x, kernel.astype(x.dtype), (stride,), padding.upper(), dimension_numbers=spec)
    if channels_last:
        out = jnp.transpose(out, (0, 2, 1))
    return jnp.reshape(out, (batch, channels) + out.shape[1:])


def _arrange(out, channels_last, expand_dims):
    """(batch, channels, bins, frames) to the layer's output layout."""
    batch, channels, bins, frames = out.shape
    if expand_dims:
        return jnp.transpose(out, (0, 3, 2, 1) if channels_last else (0, 1, 3, 2))
    out = jnp.reshape(out, (batch, channels * bins, frames))
    return jnp.transpose(out, (0, 2, 1)) if channels_last else out


def _spectrogram(x, real_kernel, imag_kernel, *, mode, stride, padding, channels_last, expand_dims, eps):
    real = _frames_conv(x, real_kernel, stride, padding, channels_last) if mode != "imag" else None
    imag = _frames_conv(x, imag_kernel, stride, padding, channels_last) if mode != "real" else None
    if mode in ("real", "imag"):
        out = real if mode == "real" else imag
    elif mode == "angle":
        out = jnp.arctan2(imag, real)
    elif mode == "stft":
        out = jnp.concatenate([real, imag], axis=2)
    else:
        power = jnp.square(real) + jnp.square(imag)
        if mode == "psd":  # the bins but the first and last count for both halves of the spectrum
            out = power + jnp.pad(power[:, :, 1:-1, :], ((0, 0), (0, 0), (1, 1), (0, 0)))
        else:
            out = jnp.sqrt(jnp.maximum(power, eps))
            if mode == "log":
                out = jnp.log(jnp.maximum(out, eps))
    return (_arrange(out, channels_last, expand_dims),)


@register_builtin("minikeras.layers")
class STFTSpectrogram(Layer):
    """The short-time Fourier transform of 1-D signals, as Keras 3's ``STFTSpectrogram``: each
    channel is convolved (stride ``frame_step``) with the kernels of the real and imaginary parts
    of the windowed DFT, trainable like any weight.

    Args:
      mode: 'log' (default: log magnitude), 'magnitude', 'psd' (power spectral density), 'real',
        'imag', 'angle' or 'stft' (real bins then imaginary bins).
      frame_length: samples per frame (256). frame_step: the hop (default frame_length // 2).
      fft_length: the DFT size (default the power of two at least frame_length); bins:
        fft_length // 2 + 1.
      window: 'hann' (default), 'hamming', another scipy window name (scipy needed), values, or
        None. periodic: a periodic window (scipy's ``fftbins``). scaling: the window divided by its
        L2 norm ('density', default), its sum ('spectrum') or nothing (None).
      padding: 'valid' or 'same'. expand_dims: the bins as an axis of their own (an image).
      data_format: 'channels_last' (batch, time, channels) or 'channels_first'.

    Output: (batch, frames, channels * bins) channels_last, (batch, channels * bins, frames)
    channels_first; with expand_dims (batch, frames, bins, channels) or (batch, channels, frames,
    bins). Weights: ``real_kernel`` (but in 'imag' mode) and ``imag_kernel`` (but in 'real'
    mode), (frame_length, 1, bins), in Keras's order and names.

    >>> mk.layers.STFTSpectrogram(frame_length=32, fft_length=64)(mk.ones((2, 320, 1))).shape
    (2, 19, 33)
    """

    def __init__(self, mode="log", frame_length=256, frame_step=None, fft_length=None, window="hann",
                 periodic=False, scaling="density", padding="valid", expand_dims=False, data_format=None, **kwargs):
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError("`frame_step` should be a positive integer not greater than `frame_length`. Received "
                             f"frame_step={frame_step}, frame_length={frame_length}")
        if fft_length is not None and fft_length < frame_length:
            raise ValueError("`fft_length` should be not less than `frame_length`. Received "
                             f"fft_length={fft_length}, frame_length={frame_length}")
        if fft_length is not None and (fft_length & -fft_length) != fft_length:
            warnings.warn(f"`fft_length` is recommended to be a power of two. Received fft_length={fft_length}",
                          stacklevel=2)
        if mode not in MODES:
            raise ValueError(f"Output mode is invalid, it must be one of {', '.join(MODES)}. Received: mode={mode}")
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received "
                             f"scaling={scaling}")
        if padding not in ("valid", "same"):
            raise ValueError(f"Padding is invalid, it should be 'valid', 'same'. Received: padding={padding}")
        check_window_name(window, "STFTSpectrogram")
        super().__init__(**kwargs)
        self.mode = mode
        self.frame_length = frame_length
        self.frame_step = frame_step
        self._frame_step = frame_step or frame_length // 2
        self.fft_length = fft_length
        self._fft_length = fft_length or 2 ** int(math.ceil(math.log2(frame_length)))
        self.window = window
        self.periodic = periodic
        self.scaling = scaling
        self.padding = padding
        self.expand_dims = expand_dims
        self.data_format = standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=3)

    def build(self, input_shape):
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        for side in ("real", "imag"):
            if self.mode != ("imag" if side == "real" else "real"):
                initializer = STFT(side, self.window, self.scaling, self.periodic)
                setattr(self, f"{side}_kernel", self.add_weight(name=f"{side}_kernel", shape=shape,
                                                                 initializer=initializer))
        self.built = True

    def call(self, inputs):
        if inputs.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
            raise TypeError(f"STFTSpectrogram '{self.name}': invalid input type. Expected `float16`, `float32` or "
                            f"`float64`. Received: input type={inputs.dtype.name}")
        real = getattr(self, "real_kernel", None)
        imag = getattr(self, "imag_kernel", None)
        params = {"mode": self.mode, "stride": self._frame_step, "padding": self.padding,
                  "channels_last": self.data_format == "channels_last", "expand_dims": bool(self.expand_dims),
                  "eps": epsilon()}

        def forward(x, real_kernel, imag_kernel):
            return _spectrogram(x, real_kernel, imag_kernel, **params)
        kernels = [k if k is not None else np.zeros((), np.float32) for k in (real, imag)]
        constant = tuple(i + 1 for i, k in enumerate((real, imag)) if k is None)
        return call_jax(forward, [inputs] + kernels, name="stft_spectrogram", constant=constant,
                        key=("stft_spectrogram", tuple(sorted(params.items())), constant))[0]

    def compute_output_shape(self, input_shape):
        channels_last = self.data_format == "channels_last"
        channels = input_shape[-1] if channels_last else input_shape[1]
        steps = input_shape[1] if channels_last else input_shape[-1]
        bins = (self._fft_length // 2 + 1) * (2 if self.mode == "stft" else 1)
        if steps is None:
            frames = None
        elif self.padding == "same":
            frames = -(-steps // self._frame_step)
        else:
            frames = (steps - self.frame_length) // self._frame_step + 1
        if self.expand_dims:
            if channels_last:
                return (input_shape[0], frames, bins, channels)
            return (input_shape[0], channels, frames, bins)
        features = None if channels is None else bins * channels
        return (input_shape[0], frames, features) if channels_last else (input_shape[0], features, frames)

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "frame_length": self.frame_length,
                "frame_step": self.frame_step, "fft_length": self.fft_length, "window": self.window,
                "periodic": self.periodic, "scaling": self.scaling, "padding": self.padding,
                "data_format": self.data_format, "expand_dims": self.expand_dims}
