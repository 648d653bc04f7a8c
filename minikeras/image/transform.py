"""Projective transforms of images: TensorFlow's ``ImageProjectiveTransformV3`` (what Keras 3's
``RandomRotation``, ``RandomZoom`` and ``RandomTranslation`` call), on jax arrays.

A transform is 8 numbers ``[a0, a1, a2, b0, b1, b2, c0, c1]`` per image, mapping each *output*
pixel (x, y) to the input point ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``,
``k = c0 x + c1 y + 1``. Points outside the image are mapped back in by ``fill_mode``:

- 'reflect': ``d c b a | a b c d | d c b a``;  'wrap': ``a b c d | a b c d | a b c d``;
- 'nearest': ``a a a a | a b c d | d d d d``;  'constant': ``k k k k | a b c d | k k k k``
  (``fill_value``);

then sampled by 'nearest' or 'bilinear' interpolation (a bilinear neighbour outside the
image reads ``fill_value``).
"""
import math

import jax.numpy as jnp
import numpy as np

from minikeras.image._linear import linear_image_op

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("nearest", "bilinear")


def _map_coordinate(coord, size, fill_mode):
    """TensorFlow's ``MapCoordinate``: a coordinate outside [0, size - 1] mapped inside."""
    last = float(size - 1)
    if fill_mode == "constant":
        return coord
    if fill_mode == "nearest" or size <= 1:
        return jnp.clip(coord, 0.0, last)
    if fill_mode == "reflect":
        period = 2.0 * size
        low = jnp.where(coord < period, period * jnp.trunc(-coord / period) + coord, coord)
        low = jnp.where(low < -size, low + period, -low - 1.0)
        high = coord - period * jnp.trunc(coord / period)
        high = jnp.where(high >= size, period - high - 1.0, high)
        mapped = jnp.where(coord < 0, low, jnp.where(coord > last, high, coord))
    else:  # wrap
        low = coord + size * (jnp.trunc(-coord / last) + 1.0)
        high = coord - size * jnp.trunc(coord / last)
        mapped = jnp.where(coord < 0, low, jnp.where(coord > last, high, coord))
    return jnp.clip(mapped, 0.0, last)


def _read(flat, y, x, height, width, fill_value):
    """Pixels at integer (y, x) of a (batch, height * width, channels) batch; fill outside."""
    inside = (y >= 0) & (y < height) & (x >= 0) & (x < width)
    index = jnp.clip(y, 0, height - 1) * width + jnp.clip(x, 0, width - 1)
    batch, out_h, out_w = index.shape
    values = jnp.take_along_axis(flat, index.reshape(batch, -1, 1), axis=1).reshape(batch, out_h, out_w, -1)
    return jnp.where(inside[..., None], values, jnp.asarray(fill_value, flat.dtype))


def _round_half_away(v):
    return jnp.sign(v) * jnp.floor(jnp.abs(v) + 0.5)


def _projective_forward(images, transforms, *, output_size, interpolation, fill_mode, fill_value):
    batch, height, width, channels = images.shape
    out_h, out_w = output_size
    ys, xs = np.meshgrid(np.arange(out_h, dtype=np.float32), np.arange(out_w, dtype=np.float32), indexing="ij")
    t = transforms.astype(jnp.float32)[:, :, None, None]
    k = t[:, 6] * xs + t[:, 7] * ys + 1.0
    safe_k = jnp.where(k == 0, 1.0, k)
    x = _map_coordinate((t[:, 0] * xs + t[:, 1] * ys + t[:, 2]) / safe_k, width, fill_mode)
    y = _map_coordinate((t[:, 3] * xs + t[:, 4] * ys + t[:, 5]) / safe_k, height, fill_mode)
    flat = images.reshape(batch, height * width, channels)
    if interpolation == "nearest":
        out = _read(flat, _round_half_away(y).astype(jnp.int32), _round_half_away(x).astype(jnp.int32), height,
                    width, fill_value)
    else:
        y0, x0 = jnp.floor(y), jnp.floor(x)
        wy, wx = (y - y0)[..., None], (x - x0)[..., None]
        iy, ix = y0.astype(jnp.int32), x0.astype(jnp.int32)
        top = (1.0 - wx) * _read(flat, iy, ix, height, width, fill_value) + wx * _read(
            flat, iy, ix + 1, height, width, fill_value)
        bottom = (1.0 - wx) * _read(flat, iy + 1, ix, height, width, fill_value) + wx * _read(
            flat, iy + 1, ix + 1, height, width, fill_value)
        out = (1.0 - wy) * top + wy * bottom
    return jnp.where((k == 0)[..., None], jnp.asarray(fill_value, out.dtype), out).astype(images.dtype)


_projective = linear_image_op("projective_transform", _projective_forward, affine_param="fill_value")


def check_fill_and_interpolation(fill_mode, interpolation, what):
    """Raises NotImplementedError (Keras's type) for an unknown fill mode or interpolation."""
    if fill_mode not in FILL_MODES:
        raise NotImplementedError(f"{what}: unknown `fill_mode` {fill_mode!r}. Expected one of {FILL_MODES}.")
    if interpolation not in INTERPOLATIONS:
        raise NotImplementedError(
            f"{what}: unknown `interpolation` {interpolation!r}. Expected one of {INTERPOLATIONS}.")


def projective_transform(images, transforms, interpolation="bilinear", fill_mode="constant", fill_value=0.0,
                         output_size=None):
    """Applies one transform per image of a batch (Tensors: images (batch, h, w, c) float,
    transforms (batch, 8)); the output has ``output_size`` (default: the input's)."""
    size = tuple(images.shape[1:3]) if output_size is None else tuple(int(n) for n in output_size)
    return _projective(images, transforms, output_size=size, interpolation=interpolation, fill_mode=fill_mode,
                       fill_value=float(fill_value))


def affine_matrix(angle, translate_x, translate_y, scale, height, width):
    """Keras 3's ``_compute_affine_matrix`` (centred, no shear) on jax arrays: angles in degrees,
    shape (batch,) each; returns (batch, 8)."""
    angle = angle * (math.pi / 180.0)
    cx, cy = 0.5 * (width - 1), 0.5 * (height - 1)
    cos, sin = jnp.cos(angle), jnp.sin(angle)
    a0, a1 = scale * cos, scale * -sin
    b0, b1 = scale * sin, scale * cos
    a2 = translate_x + cx - cx * a0 - cy * a1
    b2 = translate_y + cy - cx * b0 - cy * b1
    zeros = jnp.zeros_like(a0)
    return jnp.stack([a0, a1, a2, b0, b1, b2, zeros, zeros], axis=1)
