"""Crops and pads: ``tf.image``'s ``central_crop``, ``resize_with_crop_or_pad``,
``crop_to_bounding_box``, ``pad_to_bounding_box``, and a crop at a drawn offset."""
import jax

from minikeras.image._linear import linear_image_op
from minikeras.image.resizing import as_image_tensor, check_rank
from minikeras.ops.array import pad


def _dynamic_crop_forward(images, starts, *, size):
    batch, _, _, channels = images.shape
    zero = jax.numpy.zeros((), starts.dtype)
    return jax.lax.dynamic_slice(images, (zero, starts[0], starts[1], zero), (batch, size[0], size[1], channels))


_dynamic_crop = linear_image_op("dynamic_crop", _dynamic_crop_forward)


def dynamic_crop(images, starts, size):
    """The (height, width) = ``size`` window of a batch at offset ``starts`` = (top, left), an
    int32 Tensor (drawn values, also inside a compiled step)."""
    return _dynamic_crop(images, starts, size=tuple(size))


def _int(value, name, what):
    try:
        return int(value)
    except (TypeError, ValueError):
        raise TypeError(f"{what}: `{name}` must be an integer, received {value!r}") from None


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The window of ``target_height`` x ``target_width`` at (offset_height, offset_width)."""
    image = as_image_tensor(image)
    check_rank(image, "mk.image.crop_to_bounding_box")
    top, left = _int(offset_height, "offset_height", "crop_to_bounding_box"), _int(offset_width, "offset_width",
                                                                                    "crop_to_bounding_box")
    height, width = int(target_height), int(target_width)
    in_h, in_w = image.shape[-3:-1]
    if top < 0 or left < 0 or height <= 0 or width <= 0 or top + height > in_h or left + width > in_w:
        raise ValueError(f"mk.image.crop_to_bounding_box: the box (offset {top}, {left}, size {height}x{width}) "
                         f"does not fit in images of height {in_h} and width {in_w}")
    return image[..., top:top + height, left:left + width, :]


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """Pads with zeros: ``offset_height`` rows on top, ``offset_width`` columns on the left, and
    to ``target_height`` x ``target_width`` in all."""
    image = as_image_tensor(image)
    check_rank(image, "mk.image.pad_to_bounding_box")
    top, left, height, width = int(offset_height), int(offset_width), int(target_height), int(target_width)
    in_h, in_w = image.shape[-3:-1]
    bottom, right = height - top - in_h, width - left - in_w
    if min(top, left, bottom, right) < 0:
        raise ValueError(f"mk.image.pad_to_bounding_box: images of height {in_h} and width {in_w} at offset "
                         f"({top}, {left}) do not fit in {height}x{width}")
    paddings = [[top, bottom], [left, right], [0, 0]]
    return pad(image, ([[0, 0]] if image.ndim == 4 else []) + paddings)


def resize_with_crop_or_pad(image, target_height, target_width):
    """Centres the image in a ``target_height`` x ``target_width`` frame: crops the centre of a
    larger side, pads a smaller side evenly with zeros (an odd remainder at the bottom/right)."""
    image = as_image_tensor(image)
    check_rank(image, "mk.image.resize_with_crop_or_pad")
    target_height, target_width = int(target_height), int(target_width)
    if target_height <= 0 or target_width <= 0:
        raise ValueError(f"mk.image.resize_with_crop_or_pad: the target size must be positive, received "
                         f"{target_height}x{target_width}")
    in_h, in_w = image.shape[-3:-1]
    top, left = max((in_h - target_height) // 2, 0), max((in_w - target_width) // 2, 0)
    cropped = crop_to_bounding_box(image, top, left, min(in_h, target_height), min(in_w, target_width))
    pad_top, pad_left = max((target_height - in_h) // 2, 0), max((target_width - in_w) // 2, 0)
    return pad_to_bounding_box(cropped, pad_top, pad_left, target_height, target_width)


def central_crop(image, central_fraction):
    """The centred ``central_fraction`` (in (0, 1]) of each side, as ``tf.image.central_crop``."""
    image = as_image_tensor(image)
    check_rank(image, "mk.image.central_crop")
    fraction = float(central_fraction)
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"mk.image.central_crop: central_fraction must be within (0, 1], received {fraction}")
    if fraction == 1.0:
        return image
    in_h, in_w = image.shape[-3:-1]
    top, left = int((in_h - in_h * fraction) / 2), int((in_w - in_w * fraction) / 2)
    return image[..., top:in_h - top, left:in_w - left, :]


__all__ = ["central_crop", "crop_to_bounding_box", "dynamic_crop", "pad_to_bounding_box",
           "resize_with_crop_or_pad"]
