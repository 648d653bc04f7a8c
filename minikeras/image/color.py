"""Colour ops of ``tf.image``: ``convert_image_dtype``, ``rgb_to_grayscale``,
``grayscale_to_rgb``, ``rgb_to_hsv``/``hsv_to_rgb``, ``adjust_brightness``, ``adjust_contrast``,
``adjust_saturation``, ``adjust_hue``, ``adjust_gamma``, ``per_image_standardization``.

Like TensorFlow, the ``adjust_*`` ops take images of any dtype: integer images are converted
to floats in [0, 1] (``convert_image_dtype``), adjusted, and converted back.
"""
import numpy as np

from minikeras.dtypes import as_dtype
from minikeras.image.resizing import as_image_tensor
from minikeras.ops.array import concat, stack, unstack
from minikeras.ops.elementwise import abs as abs_, cast, floor, floordiv, floormod, sqrt
from minikeras.ops.math import maximum, minimum, multiply, pow as pow_, where
from minikeras.ops.reduce import reduce_max, reduce_mean, reduce_min, reduce_sum
from minikeras.tensor import Tensor


def _is_float(dtype):
    return np.dtype(dtype.name).kind == "f" or dtype.name == "bfloat16"


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts between image dtypes, rescaling: floats are in [0, 1], integers in [0, MAX].

    Args:
      image: a Tensor or array.
      dtype: the target dtype.
      saturate: clip floats into the target integer range before converting (no overflow).

    >>> mk.image.convert_image_dtype(np.array([0, 255], np.uint8), mk.float32).numpy()
    array([0., 1.], dtype=float32)
    """
    image = as_image_tensor(image)
    dtype = as_dtype(dtype)
    source = image.dtype
    if source == dtype:
        return image
    if not _is_float(source) and not _is_float(dtype):  # integer -> integer: shift the bits
        in_max, out_max = np.iinfo(source.name).max, np.iinfo(dtype.name).max
        if in_max > out_max:
            scale = (in_max + 1) // (out_max + 1)
            scaled = floordiv(image, np.asarray(scale, source.name))
            return _saturate_cast(scaled, dtype) if saturate else cast(scaled, dtype)
        scale = (out_max + 1) // (in_max + 1)
        converted = _saturate_cast(image, dtype) if saturate else cast(image, dtype)
        return multiply(converted, np.asarray(scale, dtype.name))
    if _is_float(source) and _is_float(dtype):
        return cast(image, dtype)
    if not _is_float(source):  # integer -> float
        return multiply(cast(image, dtype), np.asarray(1.0 / np.iinfo(source.name).max, dtype.name))
    out_max = np.iinfo(dtype.name).max  # float -> integer
    scaled = image * np.asarray(out_max + 0.5, source.name)
    return _saturate_cast(scaled, dtype) if saturate else cast(scaled, dtype)


def _saturate_cast(x, dtype):
    info = np.iinfo(dtype.name)
    low, high = max(info.min, _lowest(x.dtype)), min(info.max, _highest(x.dtype))
    if low > _lowest(x.dtype) or high < _highest(x.dtype):
        x = minimum(maximum(x, np.asarray(low, x.dtype.name)), np.asarray(high, x.dtype.name))
    return cast(x, dtype)


def _lowest(dtype):
    return np.finfo(dtype.name).min if _is_float(dtype) else np.iinfo(dtype.name).min


def _highest(dtype):
    return np.finfo(dtype.name).max if _is_float(dtype) else np.iinfo(dtype.name).max


def _as_float(image):
    """(float image, original dtype): float16/32/64 kept, others converted to float32 in [0, 1]."""
    image = as_image_tensor(image)
    if image.dtype.name in ("float16", "float32", "float64"):
        return image, image.dtype
    return convert_image_dtype(image, "float32"), image.dtype


def _back(image, dtype):
    return convert_image_dtype(image, dtype, saturate=True)


def rgb_to_grayscale(images, name=None):
    """One channel of luma, ``0.2989 R + 0.5870 G + 0.1140 B``, in the input's dtype."""
    images = as_image_tensor(images)
    _check_channels(images, 3, "rgb_to_grayscale")
    flt = convert_image_dtype(images, "float32")
    gray = reduce_sum(flt * np.array([0.2989, 0.5870, 0.1140], np.float32), axis=-1, keepdims=True)
    return convert_image_dtype(gray, images.dtype)


def grayscale_to_rgb(images, name=None):
    """Repeats the one channel three times."""
    images = as_image_tensor(images)
    _check_channels(images, 1, "grayscale_to_rgb")
    return concat([images, images, images], axis=-1)


def _check_channels(images, channels, what):
    if images.ndim < 2 or images.shape[-1] != channels:
        raise ValueError(f"mk.image.{what} expects images whose last axis has {channels} channels, received shape "
                         f"{tuple(images.shape)}")


def rgb_to_hsv(images, name=None):
    """RGB floats in [0, 1] to hue, saturation, value in [0, 1] (TensorFlow's formulas)."""
    images = as_image_tensor(images)
    _check_channels(images, 3, "rgb_to_hsv")
    r, g, b = unstack(images, axis=-1)
    value = reduce_max(images, axis=-1)
    spread = value - reduce_min(images, axis=-1)
    zero = np.asarray(0, images.dtype.name)
    saturation = where(value > 0, spread / where(value > 0, value, 1), zero)
    norm = 1.0 / (6.0 * where(spread > 0, spread, 1))
    hue = where(r == value, norm * (g - b), where(g == value, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0))
    hue = where(spread > 0, hue, zero)
    hue = where(hue < 0, hue + 1.0, hue)
    return stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images, name=None):
    """Hue, saturation, value in [0, 1] back to RGB (TensorFlow's formulas)."""
    images = as_image_tensor(images)
    _check_channels(images, 3, "hsv_to_rgb")
    h, s, v = unstack(images, axis=-1)
    c = s * v
    m = v - c
    dh = h * 6.0
    sector = floor(dh)
    x = c * (1.0 - abs_(floormod(dh, np.asarray(2.0, images.dtype.name)) - 1.0))
    zero = c * 0.0
    rgb = []
    for channel in ((c, x, zero, zero, x, c), (x, c, c, x, zero, zero), (zero, zero, x, c, c, x)):
        out = zero
        for k, piece in enumerate(channel):
            out = where(sector == float(k), piece, out)
        rgb.append(out + m)
    return stack(rgb, axis=-1)


def adjust_brightness(image, delta):
    """Adds ``delta`` (on the [0, 1] scale for integer images) to every pixel."""
    flt, dtype = _as_float(image)
    return _back(flt + np.asarray(delta, flt.dtype.name), dtype)


def adjust_contrast(images, contrast_factor):
    """``(x - mean) * contrast_factor + mean``, the mean per image and channel."""
    flt, dtype = _as_float(images)
    mean = reduce_mean(flt, axis=(-3, -2), keepdims=True)
    return _back((flt - mean) * _factor(contrast_factor, flt) + mean, dtype)


def _factor(value, like):
    return value if isinstance(value, Tensor) else np.asarray(value, like.dtype.name)


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the saturation (in HSV) by ``saturation_factor``, clipped to [0, 1]."""
    flt, dtype = _as_float(image)
    _check_channels(flt, 3, "adjust_saturation")
    h, s, v = unstack(rgb_to_hsv(flt), axis=-1)
    s = minimum(maximum(s * _factor(saturation_factor, flt), 0.0), 1.0)
    return _back(hsv_to_rgb(stack([h, s, v], axis=-1)), dtype)


def adjust_hue(image, delta, name=None):
    """Rotates the hue (in HSV) by ``delta`` in [-1, 1]."""
    flt, dtype = _as_float(image)
    _check_channels(flt, 3, "adjust_hue")
    h, s, v = unstack(rgb_to_hsv(flt), axis=-1)
    h = floormod(h + _factor(delta, flt), np.asarray(1.0, flt.dtype.name))
    return _back(hsv_to_rgb(stack([h, s, v], axis=-1)), dtype)


def adjust_gamma(image, gamma=1, gain=1):
    """``gain * image ** gamma`` (on the [0, 1] scale for integer images)."""
    flt, dtype = _as_float(image)
    if float(gamma) < 0:
        raise ValueError(f"mk.image.adjust_gamma: gamma must be non-negative, received {gamma}")
    return _back(pow_(flt, float(gamma)) * float(gain), dtype)


def per_image_standardization(image):
    """Each image scaled to mean 0 and standard deviation 1 (at least ``1/sqrt(pixels)``)."""
    image = as_image_tensor(image)
    if image.ndim < 3:
        raise ValueError(f"mk.image.per_image_standardization expects images of rank >= 3, received shape "
                         f"{tuple(image.shape)}")
    flt = cast(image, "float32")
    pixels = int(np.prod(image.shape[-3:]))
    mean = reduce_mean(flt, axis=(-3, -2, -1), keepdims=True)
    std = sqrt(reduce_mean((flt - mean) * (flt - mean), axis=(-3, -2, -1), keepdims=True))
    return (flt - mean) / maximum(std, np.float32(1.0 / np.sqrt(pixels)))
