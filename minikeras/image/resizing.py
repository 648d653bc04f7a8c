"""``mk.image.resize`` and the crops and pads around it (``tf.image``'s semantics).

The resize is separable: one ``(out, in)`` matrix per axis for bilinear, bicubic and area
(``_weights``, TensorFlow's sampling), an index gather for nearest, ``jax.image.resize`` for the
Lanczos kernels and antialiasing. Each is one differentiable op whose gradient is its
transpose (``_linear``).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.image import _weights
from minikeras.image._linear import linear_image_op
from minikeras.ops.array import concat, expand_dims, squeeze
from minikeras.ops.creation import fill
from minikeras.ops.elementwise import cast
from minikeras.tensor import Tensor, Variable, to_array

METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5")
_JAX_METHODS = {"bilinear": "linear", "bicubic": "cubic", "lanczos3": "lanczos3", "lanczos5": "lanczos5"}


@functools.lru_cache(maxsize=256)
def _matrix(method, in_size, out_size):
    return _weights.MATRICES[method](in_size, out_size)


@functools.lru_cache(maxsize=256)
def _indices(in_size, out_size):
    return _weights.nearest_indices(in_size, out_size)


def _resize_forward(images, *, size, method, antialias):
    batch, height, width, channels = images.shape
    out_h, out_w = size
    if method == "nearest":
        rows = images if out_h == height else jnp.take(images, _indices(height, out_h), axis=1)
        return rows if out_w == width else jnp.take(rows, _indices(width, out_w), axis=2)
    if method in _weights.MATRICES and not antialias:
        rows = jnp.einsum("yh,bhwc->bywc", _matrix(method, height, out_h), images)
        return jnp.einsum("xw,bywc->byxc", _matrix(method, width, out_w), rows)
    return jax.image.resize(images, (batch, out_h, out_w, channels), _JAX_METHODS[method], antialias=antialias)


_resize = linear_image_op("resize", _resize_forward)


def as_image_tensor(images):
    """``images`` as a Tensor (a Variable is read)."""
    if isinstance(images, Tensor):
        return images
    if isinstance(images, Variable):
        return images.value()
    return Tensor(to_array(images))


def check_rank(images, what):
    """Raises ValueError unless ``images`` is one image (rank 3) or a batch (rank 4)."""
    if images.ndim not in (3, 4):
        raise ValueError(f"{what}: invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                         f"Received input with shape: images.shape={tuple(images.shape)}")


def batched(fn, images, *args, **kwargs):
    """``fn`` (which takes a batch) applied to one image or a batch."""
    if images.ndim == 3:
        return squeeze(fn(expand_dims(images, 0), *args, **kwargs), 0)
    return fn(images, *args, **kwargs)


def _check_size(size, what):
    try:
        size = tuple(int(n) for n in (size.numpy() if hasattr(size, "numpy") else size))
    except TypeError:
        size = None
    if size is None or len(size) != 2 or min(size) <= 0:
        raise ValueError(f"{what}: `size` must be 2 positive integers (height, width). Received: size={size!r}")
    return size


def resize_batch(images, size, method="bilinear", antialias=False):
    """Resizes a batch (rank 4) to ``size``; floats out for every method but 'nearest'."""
    if method != "nearest" and images.dtype != jnp.float32:
        images = cast(images, "float32")
    if tuple(images.shape[1:3]) == tuple(size) and method == "nearest":
        return images
    return _resize(images, size=tuple(size), method=method, antialias=bool(antialias))


def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """Resizes images to ``size`` = (height, width), as ``tf.image.resize``.

    Args:
      images: one image (height, width, channels) or a batch (batch, height, width, channels).
      method: 'bilinear', 'nearest', 'bicubic', 'area', 'lanczos3' or 'lanczos5'.
      preserve_aspect_ratio: scale by the smaller of the two ratios, so that the result fits
        inside ``size`` with the input's aspect ratio.
      antialias: widen the kernel when downsampling (bilinear, bicubic, Lanczos).

    Returns:
      float32 images (``method='nearest'`` keeps the dtype).

    >>> mk.image.resize(np.zeros((4, 6, 3)), (2, 3)).shape
    (2, 3, 3)
    """
    images = as_image_tensor(images)
    check_rank(images, "mk.image.resize")
    method = str(getattr(method, "value", method)).lower()
    if method not in METHODS:
        raise ValueError(f"mk.image.resize: invalid value for argument `method`. Expected one of {METHODS}. "
                         f"Received: method={method!r}")
    size = _check_size(size, "mk.image.resize")
    if preserve_aspect_ratio:
        height, width = images.shape[-3:-1]
        factor = min(size[0] / height, size[1] / width)
        size = (max(int(round(height * factor)), 1), max(int(round(width * factor)), 1))
    return batched(resize_batch, images, size, method, antialias)


def crop_box_to_aspect_ratio(height, width, target_height, target_width):
    """The largest centred (top, left, height, width) box of the target's aspect ratio."""
    crop_height = max(min(height, int(float(width * target_height) / target_width)), 1)
    crop_width = max(min(width, int(float(height * target_width) / target_height)), 1)
    return (int(float(height - crop_height) / 2), int(float(width - crop_width) / 2), crop_height, crop_width)


def pad_to_aspect_ratio(images, target_height, target_width, fill_value):
    """Pads a batch evenly on its short side to the target's aspect ratio (Keras's rule)."""
    height, width = images.shape[1:3]
    pad_height = max(height, int(float(width * target_height) / target_width))
    pad_width = max(width, int(float(height * target_width) / target_height))
    top, left = int(float(pad_height - height) / 2), int(float(pad_width - width) / 2)
    if top > 0:
        band = fill((images.shape[0], top, width, images.shape[3]), np.asarray(fill_value, images.dtype.name))
        return concat([band, images, band], axis=1)
    if left > 0:
        band = fill((images.shape[0], height, left, images.shape[3]), np.asarray(fill_value, images.dtype.name))
        return concat([band, images, band], axis=2)
    return images


def keras_resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio_=False, fill_value=0.0):
    """``keras.ops.image.resize`` on a batch: optional centred crop or pad to the target's aspect
    ratio, then the resize (float32 out, the dtype kept for 'nearest')."""
    target_height, target_width = size
    if crop_to_aspect_ratio:
        top, left, crop_height, crop_width = crop_box_to_aspect_ratio(images.shape[1], images.shape[2],
                                                                      target_height, target_width)
        images = images[:, top:top + crop_height, left:left + crop_width, :]
    elif pad_to_aspect_ratio_:
        images = pad_to_aspect_ratio(images, target_height, target_width, fill_value)
    return resize_batch(images, size, interpolation, antialias)


@functools.lru_cache(maxsize=256)
def _taps(method, in_size, out_size):
    """The matrix as (index, weight) pairs per output row, (out, taps) each: a few taps per row,
    applied with gathers instead of a dense product (which BLAS threads make slow for small images)."""
    matrix = _matrix(method, in_size, out_size)
    taps = max(int((matrix != 0).sum(axis=1).max()), 1)
    order = np.argsort(matrix == 0, axis=1, kind="stable")[:, :taps]
    return order, np.take_along_axis(matrix, order, axis=1)


def _apply_taps(image, index, weight):
    out = weight[:, 0, None, None] * image[index[:, 0]]
    for k in range(1, index.shape[1]):
        out += weight[:, k, None, None] * image[index[:, k]]
    return out


def host_resize(image, size, method="bilinear"):
    """One float32 NumPy image (height, width, channels) resized on the host, with the same
    sampling as ``resize`` (for data pipelines: no device transfer, nothing to compile)."""
    height, width = image.shape[:2]
    out_h, out_w = size
    if (height, width) == (out_h, out_w):
        return image
    if method == "nearest":
        return image[_indices(height, out_h)][:, _indices(width, out_w)]
    if method in _weights.MATRICES:
        rows = _apply_taps(image, *_taps(method, height, out_h))
        return _apply_taps(rows.transpose(1, 0, 2), *_taps(method, width, out_w)).transpose(1, 0, 2)
    return np.asarray(jax.image.resize(image, (out_h, out_w, image.shape[2]), _JAX_METHODS[method], antialias=False))


def host_resize_batch(images, size, method="bilinear"):
    """``host_resize`` of each image of a NumPy batch (n, height, width, channels; uint8 or
    float32) with one set of array operations: the same float32 values, element by element.
    Lanczos goes image by image through ``host_resize``."""
    n, height, width, channels = images.shape
    out_h, out_w = size
    if (height, width) == (out_h, out_w):
        return images.astype(np.float32)
    if method == "nearest":
        return images[:, _indices(height, out_h)][:, :, _indices(width, out_w)].astype(np.float32)
    if method not in _weights.MATRICES:
        return np.stack([host_resize(image.astype(np.float32), size, method) for image in images])
    # The products and sums of _apply_taps, in its order (rows, then columns), so that each value
    # is the same; the other axes are merged so that each operation runs over long contiguous rows.
    images = images.astype(np.float32).reshape(n, height, width * channels)
    index, weight = _taps(method, height, out_h)
    rows = _taps_on_axis(images, index, weight.T[:, :, None], axis=1)
    index, weight = _taps(method, width, out_w)
    index = (index[:, None, :] * channels + np.arange(channels)[None, :, None]).reshape(out_w * channels, -1)
    weight = np.repeat(weight, channels, axis=0).T
    columns = _taps_on_axis(rows.reshape(n * out_h, width * channels), index, weight, axis=1)
    return columns.reshape(n, out_h, out_w, channels)


def _taps_on_axis(array, index, weight, axis):
    """sum over k of weight[k] * (array taken at index[:, k] along ``axis``), in k's order;
    ``weight[k]`` broadcasts against the taken array."""
    out = np.take(array, index[:, 0], axis=axis)
    out *= weight[0]
    for k in range(1, index.shape[1]):
        term = np.take(array, index[:, k], axis=axis)
        term *= weight[k]
        out += term
    return out
