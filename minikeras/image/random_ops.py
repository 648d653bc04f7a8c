"""``tf.image``'s random augmentations, in two kinds:

- ``random_*(image, ..., seed=None)`` draw from ``mk.random``'s generator (``seed`` folded in):
  fresh values on every call, compiled or not, repeating after ``mk.random.set_seed``;
- ``stateless_random_*(image, ..., seed)`` take ``seed``, a pair of integers, and give the same
  result for the same seed, run after run (not TensorFlow's numbers: the draws are jax's).

Flips decide per image of a batch; brightness, contrast, saturation and hue draw one factor
for the whole call, as TensorFlow does.
"""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.image import color
from minikeras.image.crop import dynamic_crop
from minikeras.image.flips import reverse_axis
from minikeras.image.resizing import as_image_tensor, check_rank
from minikeras.ops.array import expand_dims, squeeze
from minikeras.ops.math import where
from minikeras.ops.random import next_key
from minikeras.tensor import Tensor, Variable, to_array


def stateless_key(seed, what):
    """The jax key of a stateless op's ``seed`` (two integers; a Tensor inside a trace too)."""
    pair = to_array(seed) if isinstance(seed, (Tensor, Variable)) else np.asarray(seed)
    if tuple(pair.shape) != (2,) or np.dtype(pair.dtype).kind not in "iu":
        raise ValueError(f"mk.image.{what}: `seed` must be a pair of integers (shape (2,)), received {seed!r}")
    pair = jnp.asarray(pair).astype(jnp.uint32)
    return jax.random.fold_in(jax.random.key(pair[0]), pair[1])


def _flip(image, key, axis, what):
    image = as_image_tensor(image)
    check_rank(image, f"mk.image.{what}")
    single = image.ndim == 3
    batch = expand_dims(image, 0) if single else image
    flips = Tensor(jax.random.uniform(key, (batch.shape[0], 1, 1, 1)) < 0.5)
    out = where(flips, reverse_axis(batch, axis), batch)
    return squeeze(out, 0) if single else out


def _uniform(key, low, high):
    return Tensor(jax.random.uniform(key, (), "float32", low, high))


def _check_range(lower, upper, what):
    if float(upper) <= float(lower):
        raise ValueError(f"mk.image.{what}: `upper` must be greater than `lower`, received lower={lower}, "
                         f"upper={upper}")
    if float(lower) < 0:
        raise ValueError(f"mk.image.{what}: `lower` must be non-negative, received lower={lower}")


def _check_delta(max_delta, what, limit=None):
    if float(max_delta) < 0 or (limit is not None and float(max_delta) > limit):
        bound = f" and at most {limit}" if limit is not None else ""
        raise ValueError(f"mk.image.{what}: `max_delta` must be non-negative{bound}, received {max_delta}")


def _brightness(image, max_delta, key, what):
    _check_delta(max_delta, what)
    return color.adjust_brightness(image, _uniform(key, -float(max_delta), float(max_delta)))


def _contrast(image, lower, upper, key, what):
    _check_range(lower, upper, what)
    return color.adjust_contrast(image, _uniform(key, float(lower), float(upper)))


def _saturation(image, lower, upper, key, what):
    _check_range(lower, upper, what)
    return color.adjust_saturation(image, _uniform(key, float(lower), float(upper)))


def _hue(image, max_delta, key, what):
    _check_delta(max_delta, what, 0.5)
    return color.adjust_hue(image, _uniform(key, -float(max_delta), float(max_delta)))


def _crop(value, size, key, what):
    value = as_image_tensor(value)
    size = tuple(int(n) for n in size)
    if len(size) != value.ndim or any(s > n or s <= 0 for s, n in zip(size, value.shape)):
        raise ValueError(f"mk.image.{what}: `size` {size} must have one positive entry per axis of the value's shape "
                         f"{tuple(value.shape)}, none larger")
    if value.ndim != 3 or size[2] != value.shape[2]:
        raise ValueError(f"mk.image.{what} crops one image (height, width, channels) keeping its channels; "
                         f"received shape {tuple(value.shape)} and size {size}")
    limits = np.array([value.shape[0] - size[0] + 1, value.shape[1] - size[1] + 1])
    starts = Tensor(jax.random.randint(key, (2,), 0, limits))
    return squeeze(dynamic_crop(expand_dims(value, 0), starts, size[:2]), 0)


def random_flip_left_right(image, seed=None):
    """Flips each image left-right with probability 1/2."""
    return _flip(image, next_key(seed), -2, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """Flips each image top-bottom with probability 1/2."""
    return _flip(image, next_key(seed), -3, "random_flip_up_down")


def random_brightness(image, max_delta, seed=None):
    """``adjust_brightness`` by a delta drawn in [-max_delta, max_delta)."""
    return _brightness(image, max_delta, next_key(seed), "random_brightness")


def random_contrast(image, lower, upper, seed=None):
    """``adjust_contrast`` by a factor drawn in [lower, upper)."""
    return _contrast(image, lower, upper, next_key(seed), "random_contrast")


def random_saturation(image, lower, upper, seed=None):
    """``adjust_saturation`` by a factor drawn in [lower, upper)."""
    return _saturation(image, lower, upper, next_key(seed), "random_saturation")


def random_hue(image, max_delta, seed=None):
    """``adjust_hue`` by a delta drawn in [-max_delta, max_delta), max_delta <= 0.5."""
    return _hue(image, max_delta, next_key(seed), "random_hue")


def random_crop(value, size, seed=None, name=None):
    """A window of ``size`` (height, width, channels) at a random offset of one image."""
    return _crop(value, size, next_key(seed), "random_crop")


def stateless_random_flip_left_right(image, seed):
    """``random_flip_left_right`` decided by ``seed`` (two integers)."""
    return _flip(image, stateless_key(seed, "stateless_random_flip_left_right"), -2, "stateless_random_flip_left_right")


def stateless_random_flip_up_down(image, seed):
    """``random_flip_up_down`` decided by ``seed`` (two integers)."""
    return _flip(image, stateless_key(seed, "stateless_random_flip_up_down"), -3, "stateless_random_flip_up_down")


def stateless_random_brightness(image, max_delta, seed):
    """``random_brightness`` decided by ``seed`` (two integers)."""
    what = "stateless_random_brightness"
    return _brightness(image, max_delta, stateless_key(seed, what), what)


def stateless_random_contrast(image, lower, upper, seed):
    """``random_contrast`` decided by ``seed`` (two integers)."""
    what = "stateless_random_contrast"
    return _contrast(image, lower, upper, stateless_key(seed, what), what)


def stateless_random_saturation(image, lower, upper, seed):
    """``random_saturation`` decided by ``seed`` (two integers)."""
    what = "stateless_random_saturation"
    return _saturation(image, lower, upper, stateless_key(seed, what), what)


def stateless_random_hue(image, max_delta, seed):
    """``random_hue`` decided by ``seed`` (two integers)."""
    what = "stateless_random_hue"
    return _hue(image, max_delta, stateless_key(seed, what), what)


def stateless_random_crop(value, size, seed, name=None):
    """``random_crop`` decided by ``seed`` (two integers)."""
    what = "stateless_random_crop"
    return _crop(value, size, stateless_key(seed, what), what)
