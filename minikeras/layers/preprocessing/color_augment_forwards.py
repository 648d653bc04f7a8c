"""The jax forwards of Keras 3's colour augmentation layers: pure functions of a channels-last
batch (batch, height, width, channels) and the drawn values, static parameters as keywords, as
Keras 3 on JAX computes them (``image_augment_base.jax_image_op`` records each as one op).

Images arrive in the layer's ``value_range``; the ops that Keras computes on a 0-255 scale
(solarize, auto contrast, equalize, posterize) or on a 0-1 scale (hue) move there and back.
"""
import jax.numpy as jnp
from jax import lax

from minikeras.image import keras_forwards


def to_range(images, source, target):
    """Keras's ``_transform_value_range``: a linear map of ``source`` onto ``target``."""
    if tuple(source) == tuple(target):
        return images
    images = (images - source[0]) / (source[1] - source[0])
    return images * (target[1] - target[0]) + target[0]


def grayscale(images):
    """Luma (0.2989 R + 0.5870 G + 0.1140 B) as one channel, as Keras's ``rgb_to_grayscale``."""
    return keras_forwards.rgb_to_grayscale(images, channels_axis=-1)


def solarize(images, additions, thresholds, *, value_range):
    """On the 0-255 scale: ``x + addition`` clipped, then inverted (255 - x) from ``threshold`` up."""
    x = jnp.clip(to_range(images, value_range, (0, 255)) + additions, 0, 255)
    return to_range(jnp.where(x < thresholds, x, 255 - x), (0, 255), value_range).astype(images.dtype)


def auto_contrast(images, *, value_range):
    """Each image's channels stretched from their (min, max) to the whole range; channels whose
    stretch is NaN (a constant channel) keep their values."""
    x = to_range(images, value_range, (0, 255))
    low = jnp.min(x, axis=(1, 2), keepdims=True)
    high = jnp.max(x, axis=(1, 2), keepdims=True)
    scale = 255.0 / (high - low)
    offset = -low * scale
    stretched = to_range(jnp.clip(x * scale + offset, 0.0, 255.0), (0, 255), value_range)
    return jnp.where(jnp.isnan(stretched), images, stretched)


def _scale(values, source, target):
    """Keras's Equalization rescaling: ``values * scale + offset``."""
    scale = (target[1] - target[0]) / (source[1] - source[0])
    return values * scale + (target[0] - source[0] * scale)


def _equalize_channel(channel, bins):
    """Keras 3's histogram equalization of one channel (0-255) of the whole batch."""
    indices = jnp.clip((channel * (bins - 1) / 255.0).astype(jnp.int32), 0, bins - 1)
    hist = jnp.bincount(indices.reshape(-1), length=bins)
    cdf = jnp.cumsum(hist)
    cdf_min = cdf[jnp.argmax(cdf > 0)]
    denominator = jnp.where(cdf[-1] - cdf_min == 0, 1, cdf[-1] - cdf_min)
    lookup = jnp.clip(jnp.round((cdf - cdf_min) * 255 / denominator), 0, 255)
    equalized = jnp.take(lookup, jnp.clip(channel / 255.0 * (bins - 1), 0, bins - 1).astype(jnp.int32))
    return jnp.where(jnp.count_nonzero(hist) <= 1, channel, equalized.astype(channel.dtype))


def equalize(images, *, value_range, bins):
    """Each channel equalized by its histogram over the whole batch, as Keras 3 does (one
    histogram per channel of the batch, not per image)."""
    x = _scale(images, value_range, (0, 255))
    channels = [_equalize_channel(x[..., c], bins) for c in range(x.shape[-1])]
    return _scale(jnp.stack(channels, axis=-1), (0, 255), value_range).astype(images.dtype)


def posterize(images, shift, *, value_range):
    """On the 0-255 scale as uint8: the ``shift`` (batch,) lowest bits of each value cleared."""
    x = to_range(images, value_range, (0, 255)).astype(jnp.uint8)
    shift = shift.astype(jnp.uint8)[:, None, None, None]
    x = jnp.left_shift(jnp.right_shift(x, shift), shift)
    return to_range(x.astype(images.dtype), (0, 255), value_range)


def degenerate_color(images, factor, *, value_range):
    """Each image moved towards its grayscale by ``factor`` (batch, 1, 1, 1), clipped."""
    factor = factor.astype(images.dtype)
    return jnp.clip(images + factor * (grayscale(images) - images), value_range[0], value_range[1])


def to_grayscale_where(images, apply):
    """Grayscale (repeated over the channels) for the images where ``apply`` (batch, 1, 1, 1)."""
    return jnp.where(apply, grayscale(images), images)


def shift_hue(images, factor, *, value_range):
    """Hue (on the 0-1 scale) shifted by ``factor`` (batch,), wrapped once into [0, 1]."""
    hsv = keras_forwards.rgb_to_hsv(to_range(images, value_range, (0, 1)), channels_axis=-1)
    hue = hsv[..., 0] + factor[:, None, None].astype(images.dtype)
    hue = jnp.where(hue > 1.0, hue - 1.0, hue)
    hue = jnp.where(hue < 0.0, hue + 1.0, hue)
    rgb = keras_forwards.hsv_to_rgb(jnp.stack([hue, hsv[..., 1], hsv[..., 2]], axis=-1), channels_axis=-1)
    return to_range(jnp.clip(rgb, 0, 1), (0, 1), value_range)


def scale_saturation(images, factor, *, value_range):
    """Saturation multiplied by ``factor`` (batch,) and clipped to ``value_range``, as Keras 3
    does: on the images' own scale (HSV's value keeps it), so with a (0, 255) range a
    saturation above 1 is not clipped to 1."""
    hsv = keras_forwards.rgb_to_hsv(images, channels_axis=-1)
    saturation = jnp.clip(hsv[..., 1] * factor[:, None, None].astype(images.dtype), value_range[0], value_range[1])
    return keras_forwards.hsv_to_rgb(jnp.stack([hsv[..., 0], saturation, hsv[..., 2]], axis=-1), channels_axis=-1)


def sharpen(images, factor, *, value_range):
    """Blends each image with its 3x3 smoothing (centre 5/13, others 1/13, zero padded) by
    ``1 - 2 * factor`` (factor (batch,)), clipped: factor 0.5 keeps the image."""
    a, b = 1.0 / 13.0, 5.0 / 13.0
    channels = images.shape[-1]
    kernel = jnp.asarray([[a, a, a], [a, b, a], [a, a, a]], images.dtype)
    kernel = jnp.tile(kernel[:, :, None, None], (1, 1, 1, channels))
    smoothed = lax.conv_general_dilated(images, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        feature_group_count=channels)
    amount = (factor * 2).astype(images.dtype).reshape(-1, 1, 1, 1)
    return jnp.clip(images + (1.0 - amount) * (smoothed - images), value_range[0], value_range[1])


def invert(images, apply, *, top):
    """``top - x`` for the images where ``apply`` (batch,)."""
    return jnp.where(apply[:, None, None, None], top - images, images)
