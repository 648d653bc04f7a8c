"""Flips and quarter turns: ``tf.image``'s ``flip_left_right``, ``flip_up_down``, ``rot90``,
``transpose``."""
import jax.numpy as jnp

from minikeras.image.resizing import as_image_tensor, check_rank
from minikeras.ops.array import transpose as _transpose
from minikeras.ops.primitive import Primitive

_reverse = Primitive("reverse", lambda x, *, axis: jnp.flip(x, axis))
_reverse.defgrad(lambda g, out, x, *, axis: _reverse(g, axis=axis))


def reverse_axis(x, axis):
    """``x`` reversed along ``axis`` (differentiable)."""
    return _reverse(x, axis=int(axis) % x.ndim)


def _image(image, what):
    image = as_image_tensor(image)
    check_rank(image, f"mk.image.{what}")
    return image


def flip_left_right(image):
    """Mirrors each image left to right (the width axis)."""
    image = _image(image, "flip_left_right")
    return reverse_axis(image, -2)


def flip_up_down(image):
    """Mirrors each image top to bottom (the height axis)."""
    image = _image(image, "flip_up_down")
    return reverse_axis(image, -3)


def transpose(image):
    """Swaps the height and width axes."""
    image = _image(image, "transpose")
    perm = (1, 0, 2) if image.ndim == 3 else (0, 2, 1, 3)
    return _transpose(image, perm)


def rot90(image, k=1):
    """Rotates each image by ``k`` quarter turns counter-clockwise."""
    image = _image(image, "rot90")
    k = int(k) % 4
    if k == 0:
        return image
    if k == 2:
        return reverse_axis(reverse_axis(image, -2), -3)
    if k == 1:
        return flip_up_down(transpose(image))
    return transpose(flip_up_down(image))
