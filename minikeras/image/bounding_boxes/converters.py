"""``keras.utils.bounding_boxes``' conversions and geometry, with Keras 3.15's signatures,
defaults, dtypes and errors: ``convert_format``, ``clip_to_image_size``, ``crop``, ``pad``.

    boxes = np.array([[10, 20, 30, 40], [50, 60, 70, 80]])
    convert_format(boxes, source="xyxy", target="xywh")  # [[10, 20, 20, 20], [50, 60, 20, 20]]

Boxes are (N, 4) or (batch, N, 4) Tensors, Variables, NumPy or jax arrays; results are
Tensors, differentiable on the tape in the boxes (and in Tensor heights and widths).
"""
import jax.numpy as jnp

from minikeras.image.bounding_boxes.formats import check_conversion, convert
from minikeras.image.bounding_boxes.recorded import box_op, box_shape, size_input


def convert_format(boxes, source, target, height=None, width=None, dtype="float32"):
    """Converts bounding boxes between formats, as ``keras.utils.bounding_boxes.convert_format``.

    Formats (case-insensitive): ``"xyxy"`` [left, top, right, bottom], ``"yxyx"``, ``"xywh"``
    [left, top, width, height], ``"center_xywh"``, ``"center_yxhw"``, and the relative
    ``"rel_xyxy"``, ``"rel_yxyx"``, ``"rel_xywh"``, ``"rel_center_xywh"`` (fractions of the
    image's ``height`` and ``width``, which a conversion between relative and absolute needs).

    Args:
      boxes: (..., 4) boxes, or a dict whose ``"boxes"`` entry is converted (Keras writes the
        result into that dict and returns it; so does this function).
      source, target: the formats.
      height, width: the image's size.
      dtype: the boxes are cast to it first (float32 by default).

    Returns:
      The converted boxes, a Tensor of ``dtype`` (or the dict).

    Raises:
      ValueError: a last dimension other than 4, an unknown format, or a relative format
        without ``height`` and ``width``.
    """
    if isinstance(boxes, dict):
        boxes["boxes"] = convert_format(boxes["boxes"], source, target, height=height, width=width, dtype=dtype)
        return boxes
    source, target = check_conversion(box_shape(boxes), source, target, height, width)
    return box_op("convert_format", convert, boxes=boxes, source=source, target=target, height=size_input(height),
                  width=size_input(width), dtype=dtype)


def _clip(boxes, labels, height, width, relative):
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    high_x, high_y = (1.0, 1.0) if relative else (jnp.asarray(width).astype(boxes.dtype),
                                                  jnp.asarray(height).astype(boxes.dtype))
    x1, x2 = jnp.clip(x1, 0, high_x), jnp.clip(x2, 0, high_x)
    y1, y2 = jnp.clip(y1, 0, high_y), jnp.clip(y2, 0, high_y)
    boxes = jnp.concatenate([x1, y1, x2, y2], axis=-1)
    if labels is None:
        return boxes
    areas = ((x2 - x1) * (y2 - y1))[..., 0]
    return boxes, jnp.where(areas > 0, labels, -1)


def clip_to_image_size(bounding_boxes, height=None, width=None, bounding_box_format="xyxy"):
    """Clips boxes to the image, as ``keras.utils.bounding_boxes.clip_to_image_size``.

    Args:
      bounding_boxes: a dict with ``"boxes"`` (N, 4) or (batch, N, 4) and, optionally,
        ``"labels"`` (N,) or (batch, N).
      height, width: the image's size (needed for ``"xyxy"``).
      bounding_box_format: ``"xyxy"`` (clipped to [0, width] x [0, height]) or ``"rel_xyxy"``
        (clipped to [0, 1]); Keras 3.15 takes no other.

    Returns:
      A copy of the dict with the clipped boxes and, where given, the labels of boxes left
      with no area set to -1.
    """
    if bounding_box_format not in ("xyxy", "rel_xyxy"):
        raise NotImplementedError(f"clip_to_image_size(): `bounding_box_format` must be 'xyxy' or 'rel_xyxy', as in "
                                  f"Keras 3.15. Received: bounding_box_format={bounding_box_format!r}")
    if bounding_box_format == "xyxy" and (height is None or width is None):
        raise ValueError("clip_to_image_size(): `height` and `width` must be set if `format='xyxy'`. Received: "
                         f"height={height}, width={width}")
    if not isinstance(bounding_boxes, dict) or "boxes" not in bounding_boxes:
        raise ValueError(f"clip_to_image_size(): `bounding_boxes` must be a dict with a 'boxes' entry. Received: "
                         f"{bounding_boxes!r}")
    labels = bounding_boxes.get("labels")
    relative = bounding_box_format == "rel_xyxy"
    out = box_op("clip_to_image_size", _clip, boxes=bounding_boxes["boxes"], labels=labels,
                 height=None if relative else size_input(height), width=None if relative else size_input(width),
                 relative=relative)
    result = dict(bounding_boxes)
    if labels is None:
        result["boxes"] = out
    else:
        result["boxes"], result["labels"] = out
    return result


def _only_xyxy(caller, bounding_box_format):
    if bounding_box_format != "xyxy":
        raise NotImplementedError(f"{caller}(): only bounding_box_format='xyxy' is supported, as in Keras 3.15. "
                                  f"Received: bounding_box_format={bounding_box_format!r}; convert the boxes with "
                                  "`convert_format` first")


def _crop(boxes, top, left, height, width):
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    return jnp.concatenate([jnp.clip(x1 - left, 0, width), jnp.clip(y1 - top, 0, height),
                            jnp.clip(x2 - left, 0, width), jnp.clip(y2 - top, 0, height)], axis=-1)


def crop(boxes, top, left, height, width, bounding_box_format="xyxy"):
    """The boxes in the frame of the crop of the image at ``(top, left)`` of size
    ``height`` x ``width``: shifted by the offset and clipped to the crop, as
    ``keras.utils.bounding_boxes.crop`` (``"xyxy"`` boxes only, as Keras 3.15)."""
    _only_xyxy("crop", bounding_box_format)
    return box_op("crop", _crop, boxes=boxes, top=size_input(top), left=size_input(left), height=size_input(height),
                  width=size_input(width))


def _pad(boxes, top, left):
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    return jnp.concatenate([x1 + left, y1 + top, x2 + left, y2 + top], axis=-1)


def pad(boxes, top, left, height=None, width=None, bounding_box_format="xyxy"):
    """The boxes in the frame of the image padded by ``top`` rows and ``left`` columns, as
    ``keras.utils.bounding_boxes.pad`` (``"xyxy"`` boxes only; ``height`` and ``width`` are
    accepted and unused, as in Keras 3.15)."""
    _only_xyxy("pad", bounding_box_format)
    return box_op("pad", _pad, boxes=boxes, top=size_input(top), left=size_input(left))
