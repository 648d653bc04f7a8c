"""Weight initializers under Keras 3's names, defaults and formulas (``mk.initializers``).

    init = mk.initializers.get("glorot_uniform")
    w = init((784, 128))          # a float32 mk.Tensor

An initializer is called as ``init(shape, dtype=None)`` and returns a concrete Tensor, also
when called while ``mk.function`` traces (so layers built on the first call get real values).
Without a ``seed`` each call draws a fresh key from ``mk.random``'s initializer stream, so
``mk.random.set_seed(s)`` makes model initialisation repeatable; with an integer ``seed`` every
call returns the same values.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.backend import floatx
from minikeras.dtypes import as_dtype
from minikeras.module import compact_snake_case
from minikeras.ops.random import initializer_rng
from minikeras.ops.spectral_windows import check_window_name, fourier_kernel
from minikeras.tensor import Tensor, to_array

# std of a unit normal truncated to [-2, 2]: VarianceScaling divides by it so the *truncated*
# samples have the requested standard deviation.
_TRUNCATED_STD = 0.87962566103423978


def _draw(rng, a, b, kind, shape):
    """Host samples: normal ``a * z + b``, truncated normal (z redrawn outside +-2) ``a * z + b``,
    or uniform in [a, b)."""
    if kind == "uniform":
        return rng.uniform(a, b, shape)
    z = rng.standard_normal(shape)
    if kind == "truncated":
        outside = np.abs(z) > 2.0
        while outside.any():
            z[outside] = rng.standard_normal(int(outside.sum()))
            outside = np.abs(z) > 2.0
    return z * a + b


def _orthogonal(rng, gain, shape):
    rows = int(np.prod(shape[:-1], dtype=np.int64))
    cols = shape[-1]
    q, r = np.linalg.qr(rng.standard_normal((max(rows, cols), min(rows, cols))))
    q = q * np.sign(np.diag(r))  # makes the decomposition unique, so Q is uniformly distributed
    if rows < cols:
        q = q.T
    return gain * q.reshape(shape)


def _sample(rng, a, b, kind, shape, dtype):
    return _to_tensor(_draw(rng, a, b, kind, shape), dtype)


def _to_tensor(values, dtype):
    with jax.ensure_compile_time_eval():
        return Tensor(jnp.asarray(np.asarray(values, np.float32), dtype=np.dtype(dtype)))


def _filled(make, shape, dtype):
    """``make(shape, dtype)`` (np.zeros / np.ones) copied to the device: unlike jnp.zeros, no
    kernel is compiled per shape (~50 ms each on a small CPU, for every optimizer slot). (Inside a
    trace, jnp.asarray of a NumPy array compiles a program per shape as well; device_put does not.)"""
    with jax.ensure_compile_time_eval():
        return Tensor(jax.device_put(make(shape, np.dtype(as_dtype(dtype) or floatx()))))


def compute_fans(shape):
    """``(fan_in, fan_out)`` of a weight shape, as Keras computes them.

    Rank 0: (1, 1); rank 1: (n, n); rank 2: (rows, cols); convolution kernels
    ``(*spatial, in_channels, out_channels)``: each channel count times the receptive field size.
    """
    shape = tuple(int(n) for n in shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive_field = int(np.prod(shape[:-2], dtype=np.int64))
    return shape[-2] * receptive_field, shape[-1] * receptive_field


def _shape(shape, who):
    try:
        return tuple(int(n) for n in shape)
    except TypeError:
        raise TypeError(f"{who} expects shape as a tuple of ints, received {shape!r}") from None


def _float_dtype(dtype, who):
    dtype = as_dtype(dtype) if dtype is not None else floatx()
    if not jnp.issubdtype(dtype, jnp.floating):
        raise ValueError(f"{who} draws random values and needs a floating dtype, received dtype={dtype.name}")
    return dtype


class Initializer:
    """Base class: ``__call__(shape, dtype=None)`` returns a Tensor of that shape and dtype.

    Subclasses implement ``__call__`` and, if they take arguments, ``get_config``.
    """

    def __call__(self, shape, dtype=None):
        raise NotImplementedError(f"Initializer {self.__class__.__name__} must implement __call__(shape, dtype=None)")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def clone(self):
        return self.__class__.from_config(self.get_config())

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{self.__class__.__name__}({args})"


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape, dtype=None):
        return _filled(np.zeros, _shape(shape, "Zeros"), dtype)


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype=None):
        return _filled(np.ones, _shape(shape, "Ones"), dtype)


class Constant(Initializer):
    """Every element equal to ``value`` (a scalar, or an array broadcastable to the shape)."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        shape = _shape(shape, "Constant")
        dtype = as_dtype(dtype) or floatx()
        with jax.ensure_compile_time_eval():
            value = to_array(self.value).astype(dtype)
            try:
                return Tensor(jnp.broadcast_to(value, shape))
            except ValueError:
                raise ValueError(f"Constant initializer: value of shape {tuple(value.shape)} cannot fill shape "
                                 f"{shape}") from None

    def get_config(self):
        value = self.value
        if isinstance(value, (np.ndarray, np.generic, Tensor, jax.Array)):
            value = np.asarray(value).tolist()
        return {"value": value}


class Identity(Initializer):
    """``gain`` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = _shape(shape, "Identity")
        if len(shape) != 2:
            raise ValueError(f"Identity initializer needs a 2-D shape, received shape={shape} of rank {len(shape)}")
        dtype = _float_dtype(dtype, "Identity")
        with jax.ensure_compile_time_eval():
            return Tensor(self.gain * jnp.eye(*shape, dtype=dtype))

    def get_config(self):
        return {"gain": self.gain}


class RandomInitializer(Initializer):
    """Base of the random initializers: holds ``seed`` and hands out PRNG keys."""

    def __init__(self, seed=None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"`seed` argument should be an integer or None. Received: seed={seed!r}")
        self.seed = None if seed is None else int(seed)

    def _key(self):
        """A NumPy Generator: seeded by ``seed``, else the next of mk.random's initializer stream."""
        return initializer_rng(self.seed)

    def get_config(self):
        return {"seed": self.seed}


class RandomNormal(RandomInitializer):
    """Samples from N(mean, stddev^2)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean = mean
        self.stddev = stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape, dtype = _shape(shape, "RandomNormal"), _float_dtype(dtype, "RandomNormal")
        return _sample(self._key(), self.stddev, self.mean, "normal", shape, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, **super().get_config()}


class TruncatedNormal(RandomInitializer):
    """Samples from N(mean, stddev^2), redrawn beyond two standard deviations from the mean."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean = mean
        self.stddev = stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape, dtype = _shape(shape, "TruncatedNormal"), _float_dtype(dtype, "TruncatedNormal")
        return _sample(self._key(), self.stddev, self.mean, "truncated", shape, dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, **super().get_config()}


class RandomUniform(RandomInitializer):
    """Samples uniformly from [minval, maxval)."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval = minval
        self.maxval = maxval
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape, dtype = _shape(shape, "RandomUniform"), _float_dtype(dtype, "RandomUniform")
        return _sample(self._key(), self.minval, self.maxval, "uniform", shape, dtype)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, **super().get_config()}


class VarianceScaling(RandomInitializer):
    """Scales its distribution to the weight shape: variance ``scale / n``.

    ``n`` is fan_in, fan_out or their average (``mode``). ``distribution``:
    'truncated_normal' (stddev ``sqrt(scale / n) / 0.8796...`` before truncation at 2 sigma, so
    that the truncated samples have stddev ``sqrt(scale / n)``), 'untruncated_normal'
    (stddev ``sqrt(scale / n)``) or 'uniform' (limits ``+-sqrt(3 * scale / n)``).
    """

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be positive float. Received: scale={scale}")
        if mode not in self._MODES:
            raise ValueError(f"Invalid `mode` argument: {mode!r}. Please use one of {list(self._MODES)}")
        distribution = str(distribution).lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"Invalid `distribution` argument: {distribution!r}. Please use one of "
                             f"{list(self._DISTRIBUTIONS)}")
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        super().__init__(seed)

    def _variance(self, shape):
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        return self.scale / max(1.0, n)

    def __call__(self, shape, dtype=None):
        shape = _shape(shape, self.__class__.__name__)
        dtype = _float_dtype(dtype, self.__class__.__name__)
        variance = self._variance(shape)
        if self.distribution == "truncated_normal":
            return _sample(self._key(), math.sqrt(variance) / _TRUNCATED_STD, 0.0, "truncated", shape, dtype)
        if self.distribution == "untruncated_normal":
            return _sample(self._key(), math.sqrt(variance), 0.0, "normal", shape, dtype)
        limit = math.sqrt(3.0 * variance)
        return _sample(self._key(), -limit, limit, "uniform", shape, dtype)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, **super().get_config()}


def _preset(name, scale, mode, distribution, formula):
    class Preset(VarianceScaling):
        def __init__(self, seed=None):
            super().__init__(scale=scale, mode=mode, distribution=distribution, seed=seed)

        def get_config(self):
            return {"seed": self.seed}

    Preset.__name__ = Preset.__qualname__ = name
    Preset.__doc__ = (f"{name}: {formula} (VarianceScaling(scale={scale}, mode={mode!r}, "
                      f"distribution={distribution!r})).")
    return Preset


GlorotUniform = _preset("GlorotUniform", 1.0, "fan_avg", "uniform", "uniform in +-sqrt(6 / (fan_in + fan_out))")
GlorotNormal = _preset("GlorotNormal", 1.0, "fan_avg", "truncated_normal",
                       "truncated normal with stddev sqrt(2 / (fan_in + fan_out))")
HeUniform = _preset("HeUniform", 2.0, "fan_in", "uniform", "uniform in +-sqrt(6 / fan_in)")
HeNormal = _preset("HeNormal", 2.0, "fan_in", "truncated_normal", "truncated normal with stddev sqrt(2 / fan_in)")
LecunUniform = _preset("LecunUniform", 1.0, "fan_in", "uniform", "uniform in +-sqrt(3 / fan_in)")
LecunNormal = _preset("LecunNormal", 1.0, "fan_in", "truncated_normal", "truncated normal with stddev sqrt(1 / fan_in)")


class Orthogonal(RandomInitializer):
    """A (semi-)orthogonal matrix times ``gain``, from the QR decomposition of a normal matrix.

    Shapes of rank > 2 are treated as a ``(prod(shape[:-1]), shape[-1])`` matrix, then reshaped.
    With fewer rows than columns the rows are orthonormal, otherwise the columns are.
    """

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape = _shape(shape, "Orthogonal")
        if len(shape) < 2:
            raise ValueError(f"The tensor to initialize must be at least two-dimensional. Received: shape={shape} "
                             f"of rank {len(shape)}.")
        dtype = _float_dtype(dtype, "Orthogonal")
        return _to_tensor(_orthogonal(self._key(), self.gain, shape), dtype)

    def get_config(self):
        return {"gain": self.gain, **super().get_config()}


class STFT(Initializer):
    """Keras 3's ``STFT`` (``STFTInitializer``): Conv1D kernels of shape (frame_length, 1, bins)
    whose convolution with a signal gives the real (``side='real'``) or imaginary ('imag') part of
    its windowed DFT over ``(bins - 1) * 2`` points, as the ``STFTSpectrogram`` layer uses them.

    Args:
      side: 'real' (cos kernels, default) or 'imag' (sin kernels).
      window: 'hann' (default), 'hamming', another ``scipy.signal.get_window`` name (scipy
        needed), the window's values (frame_length of them), or None for no window.
      scaling: the window divided by its L2 norm ('density', default), its sum ('spectrum') or
        nothing (None).
      periodic: a periodic window (scipy's ``fftbins=True``) instead of a symmetric one.

    >>> mk.initializers.STFT("real", "hann", "density", False)((128, 1, 65)).shape
    (128, 1, 65)
    """

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        if side not in ("real", "imag"):
            raise ValueError(f"side should be 'real' or 'imag', not {side}")
        check_window_name(window, "STFT initializer")
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. Received "
                             f"scaling={scaling}")
        self.side = side
        self.window = window
        self.scaling = scaling
        self.periodic = periodic

    def __call__(self, shape, dtype=None):
        shape = _shape(shape, "STFT initializer")
        if len(shape) != 3 or shape[1] != 1 or shape[2] < 2:
            # Keras unpacks the shape without a check: it fails on a rank other than 3, returns a
            # (frame_length, 1, bins) kernel whatever the middle size, and NaNs for one bin
            raise ValueError(f"STFT initializer: the shape must be (frame_length, 1, bins) with bins >= 2, received "
                             f"shape={shape}")
        dtype = _float_dtype(dtype, "STFT initializer")
        kernel = fourier_kernel(self.side, self.window, self.scaling, self.periodic, shape, "STFT initializer")
        return _to_tensor(kernel, dtype)

    def get_config(self):
        window = self.window
        if isinstance(window, (np.ndarray, np.generic, Tensor, jax.Array)):
            window = np.asarray(window).tolist()
        return {"side": self.side, "window": window, "periodic": self.periodic, "scaling": self.scaling}


_CLASSES = (Zeros, Ones, Constant, Identity, RandomNormal, TruncatedNormal, RandomUniform, VarianceScaling,
            GlorotUniform, GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal, Orthogonal, STFT)



_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({compact_snake_case(cls.__name__): cls for cls in _CLASSES})
_BY_NAME.update({"zero": Zeros, "one": Ones, "uniform": RandomUniform, "normal": RandomNormal,
                 "OrthogonalInitializer": Orthogonal, "IdentityInitializer": Identity, "STFTInitializer": STFT,
                 "stft": STFT})

# Keras's lowercase function-style aliases: mk.initializers.glorot_uniform(seed=1) etc.
zeros, ones, constant, identity = Zeros, Ones, Constant, Identity
random_normal, truncated_normal, random_uniform = RandomNormal, TruncatedNormal, RandomUniform
variance_scaling, orthogonal = VarianceScaling, Orthogonal
OrthogonalInitializer, IdentityInitializer, STFTInitializer = Orthogonal, Identity, STFT  # Keras 3's other names
stft = STFT
glorot_uniform, glorot_normal, he_uniform, he_normal = GlorotUniform, GlorotNormal, HeUniform, HeNormal
lecun_uniform, lecun_normal = LecunUniform, LecunNormal


def serialize(initializer):
    """``{'module', 'class_name', 'config', 'registered_name'}`` for an Initializer (Keras 3's format).

    The module is ``"minikeras.initializers"``, as every minikeras ``serialize`` names its own
    package; a ``.keras`` file gets Keras 3's ``"keras.initializers"`` (``saving.keras_config``)."""
    if initializer is None:
        return None
    if not isinstance(initializer, Initializer):
        raise ValueError(f"Cannot serialize {initializer!r}: it is not an mk.initializers.Initializer")
    return {"module": "minikeras.initializers", "class_name": initializer.__class__.__name__,
            "config": initializer.get_config(), "registered_name": None}


def deserialize(config, custom_objects=None):
    """Rebuilds an initializer from ``serialize``'s dict or a name."""
    if isinstance(config, str):
        config = {"class_name": config, "config": {}}
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name)
    if cls is None:
        known = sorted(n for n in _BY_NAME if n[0].islower())
        raise ValueError(f"Unknown initializer: {name!r}. Known initializers: {', '.join(known)} "
                         "(or their CamelCase class names)")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier):
    """Returns an initializer from a name ('glorot_uniform', 'GlorotUniform'), a dict, a class,
    an instance or a callable; None gives None.

    Raises:
      ValueError: for an unknown name (the message lists the known ones) or an uninterpretable value.
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Initializer):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
