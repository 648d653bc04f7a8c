"""``keras.utils.bounding_boxes.compute_iou`` (pairwise intersection over union) and
``compute_ciou`` (Complete IoU, elementwise), as Keras 3.15 computes them."""
import math

import jax.numpy as jnp

from minikeras.backend import epsilon
from minikeras.image.bounding_boxes.formats import check_conversion, convert
from minikeras.image.bounding_boxes.recorded import box_op, box_shape, size_input


def _area(yxyx):
    return (yxyx[..., 2] - yxyx[..., 0]) * (yxyx[..., 3] - yxyx[..., 1])


def _pairwise(boxes1, boxes2):
    """(..., M, 1) against (..., 1, N) views of the coordinates: boxes2 is transposed."""
    last = (1, 0) if boxes2.ndim == 2 else (0, 2, 1)
    return ([boxes1[..., i:i + 1] for i in range(4)], [jnp.transpose(boxes2[..., i:i + 1], last) for i in range(4)])


def _iou(boxes1, boxes2, source, height, width, use_masking, mask_val, eps):
    boxes1 = convert(boxes1, source, "yxyx", height, width)
    boxes2 = convert(boxes2, source, "yxyx", height, width)
    (y_min1, x_min1, y_max1, x_max1), (y_min2, x_min2, y_max2, x_max2) = _pairwise(boxes1, boxes2)
    intersect_height = jnp.maximum(0.0, jnp.minimum(y_max1, y_max2) - jnp.maximum(y_min1, y_min2))
    intersect_width = jnp.maximum(0.0, jnp.minimum(x_max1, x_max2) - jnp.maximum(x_min1, x_min2))
    intersection = intersect_height * intersect_width
    area2 = _area(boxes2)
    union = _area(boxes1)[..., None] + jnp.expand_dims(area2, 1 if area2.ndim == 2 else 0) - intersection
    iou = intersection / (union + eps)
    if not use_masking:
        return iou
    background1 = jnp.max(boxes1, axis=-1, keepdims=True) < 0.0
    background2 = jnp.max(boxes2, axis=-1, keepdims=True) < 0.0
    background2 = jnp.transpose(background2, (1, 0) if background2.ndim == 2 else (0, 2, 1))
    return jnp.where(background1 | background2, jnp.asarray(mask_val, iou.dtype), iou)


def _checked(caller, boxes1, boxes2, bounding_box_format, image_shape, relative_needs_shape=True):
    ranks = len(box_shape(boxes1)), len(box_shape(boxes2))
    for i, rank in enumerate(ranks):
        if caller == "compute_iou()" and rank not in (2, 3):
            raise ValueError(f"compute_iou() expects boxes{i + 1} to be batched, or to be unbatched. Received "
                             f"len(boxes1.shape)={ranks[0]}, len(boxes2.shape)={ranks[1]}. Expected either "
                             f"len(boxes{i + 1}.shape)=2 AND or len(boxes{i + 1}.shape)=3.")
    if "rel" in bounding_box_format and (image_shape is None or not relative_needs_shape):
        raise ValueError("When using relative bounding box formats (e.g. `rel_yxyx`) the `image_shape` argument must "
                         f"be provided. Received `image_shape`: {image_shape}")
    height, width = (None, None) if image_shape is None else map(size_input, tuple(image_shape)[:2])
    target = "yxyx" if caller == "compute_iou()" else "xyxy"
    for boxes in (boxes1, boxes2):
        source, _ = check_conversion(box_shape(boxes), bounding_box_format, target, height, width, caller)
    return source, height, width


def compute_iou(boxes1, boxes2, bounding_box_format, use_masking=False, mask_val=-1, image_shape=None):
    """The intersection over union of every box of ``boxes1`` with every box of ``boxes2``,
    as ``keras.utils.bounding_boxes.compute_iou``.

    Args:
      boxes1: (M, 4) or (batch, M, 4) boxes.
      boxes2: (N, 4) or (batch, N, 4) boxes.
      bounding_box_format: their format (``convert_format``'s names).
      use_masking: give ``mask_val`` to the pairs where a box has all its coordinates below 0
        (padding boxes).
      mask_val: the masked pairs' value (-1).
      image_shape: (height, width, channels), needed for relative formats.

    Returns:
      (M, N) or (batch, M, N) float32 IoUs (the union plus Keras's epsilon as divisor).
    """
    source, height, width = _checked("compute_iou()", boxes1, boxes2, bounding_box_format, image_shape)
    return box_op("compute_iou", _iou, boxes1=boxes1, boxes2=boxes2, source=source, height=height, width=width,
                  use_masking=bool(use_masking), mask_val=mask_val, eps=epsilon())


def _ciou(boxes1, boxes2, source, height, width, eps):
    boxes1 = convert(boxes1, source, "xyxy", height, width)
    boxes2 = convert(boxes2, source, "xyxy", height, width)
    x_min1, y_min1, x_max1, y_max1 = jnp.split(boxes1[..., :4], 4, axis=-1)
    x_min2, y_min2, x_max2, y_max2 = jnp.split(boxes2[..., :4], 4, axis=-1)
    width1, height1 = x_max1 - x_min1, y_max1 - y_min1 + eps
    width2, height2 = x_max2 - x_min2, y_max2 - y_min2 + eps
    intersection = (jnp.maximum(jnp.minimum(x_max1, x_max2) - jnp.maximum(x_min1, x_min2), 0)
                    * jnp.maximum(jnp.minimum(y_max1, y_max2) - jnp.maximum(y_min1, y_min2), 0))
    union = width1 * height1 + width2 * height2 - intersection + eps
    iou = jnp.squeeze(intersection / (union + eps), axis=-1)
    convex_width = jnp.maximum(x_max1, x_max2) - jnp.minimum(x_min1, x_min2)
    convex_height = jnp.maximum(y_max1, y_max2) - jnp.minimum(y_min1, y_min2)
    diagonal_squared = jnp.squeeze(convex_width ** 2 + convex_height ** 2 + eps, axis=-1)
    centers_squared = jnp.squeeze(((x_min1 + x_max1) / 2 - (x_min2 + x_max2) / 2) ** 2
                                  + ((y_min1 + y_max1) / 2 - (y_min2 + y_max2) / 2) ** 2, axis=-1)
    v = jnp.squeeze((4 / math.pi ** 2) * (jnp.arctan(width2 / height2) - jnp.arctan(width1 / height1)) ** 2, axis=-1)
    alpha = v / (v - iou + (1 + eps))
    return iou - (centers_squared / diagonal_squared + v * alpha)


def compute_ciou(boxes1, boxes2, bounding_box_format, image_shape=None):
    """The Complete IoU of each box of ``boxes1`` with the box of ``boxes2`` at the same place
    (shapes (..., 4) that broadcast), as ``keras.utils.bounding_boxes.compute_ciou``: the IoU
    less the squared distance of the centres over the squared diagonal of the enclosing box,
    less the aspect-ratio term ``v * alpha``. 1 - CIoU is a detection loss.

    Relative formats are refused, as Keras 3.15 refuses them (even with ``image_shape``).

    Returns:
      float32 values of shape ``broadcast(boxes1, boxes2).shape[:-1]``.
    """
    source, height, width = _checked("compute_ciou()", boxes1, boxes2, bounding_box_format, image_shape,
                                     relative_needs_shape=False)
    return box_op("compute_ciou", _ciou, boxes1=boxes1, boxes2=boxes2, source=source, height=height, width=width,
                  eps=epsilon())
