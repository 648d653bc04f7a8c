"""Keras 3's bounding box formats and the pure jax conversions between them.

Every conversion goes through ``xyxy`` (left, top, right, bottom, in pixels), as Keras's
``BoundingBox.convert_format`` does, so the values (and their rounding) are Keras's. The
relative formats (``rel_*``) are fractions of the image's ``height`` and ``width``.
"""
import jax.numpy as jnp

SUPPORTED_FORMATS = ("xyxy", "yxyx", "xywh", "center_xywh", "center_yxhw", "rel_xyxy", "rel_yxyx", "rel_xywh",
                     "rel_center_xywh")


def _split(boxes):
    return jnp.split(boxes, 4, axis=-1)


def _join(*parts):
    return jnp.concatenate(parts, axis=-1)


def _to_xyxy(boxes, fmt, height, width):
    a, b, c, d = _split(boxes)
    if fmt == "xyxy":
        return boxes
    if fmt == "yxyx":
        return _join(b, a, d, c)
    if fmt == "xywh":
        return _join(a, b, a + c, b + d)
    if fmt == "center_xywh":
        return _join(a - c / 2.0, b - d / 2.0, a + c / 2.0, b + d / 2.0)
    if fmt == "center_yxhw":
        return _join(b - d / 2.0, a - c / 2.0, b + d / 2.0, a + c / 2.0)
    if fmt == "rel_xyxy":
        return _join(a * width, b * height, c * width, d * height)
    if fmt == "rel_yxyx":
        return _join(b * width, a * height, d * width, c * height)
    if fmt == "rel_xywh":
        return _join(a * width, b * height, (a + c) * width, (b + d) * height)
    # rel_center_xywh
    return _join((a - c / 2.0) * width, (b - d / 2.0) * height, (a + c / 2.0) * width, (b + d / 2.0) * height)


def _from_xyxy(boxes, fmt, height, width):
    x1, y1, x2, y2 = _split(boxes)
    if fmt == "xyxy":
        return boxes
    if fmt == "yxyx":
        return _join(y1, x1, y2, x2)
    if fmt == "xywh":
        return _join(x1, y1, x2 - x1, y2 - y1)
    if fmt in ("center_xywh", "center_yxhw"):
        cx, cy, w, h = x1 + (x2 - x1) / 2.0, y1 + (y2 - y1) / 2.0, x2 - x1, y2 - y1
        return _join(cx, cy, w, h) if fmt == "center_xywh" else _join(cy, cx, h, w)
    if fmt == "rel_xyxy":
        return _join(x1 / width, y1 / height, x2 / width, y2 / height)
    if fmt == "rel_yxyx":
        return _join(y1 / height, x1 / width, y2 / height, x2 / width)
    if fmt == "rel_xywh":
        return _join(x1 / width, y1 / height, (x2 - x1) / width, (y2 - y1) / height)
    # rel_center_xywh
    return _join((x1 + (x2 - x1) / 2.0) / width, (y1 + (y2 - y1) / 2.0) / height, (x2 - x1) / width,
                 (y2 - y1) / height)


def check_conversion(shape, source, target, height, width, caller="convert_format()"):
    """Keras's checks of a conversion; returns the lower-cased ``(source, target)``."""
    if not shape or shape[-1] != 4:
        raise ValueError(f"{caller}: `boxes` must be a tensor with the last dimension of 4. Received: "
                         f"boxes.shape={tuple(shape)}")
    if not isinstance(source, str) or not isinstance(target, str):
        raise ValueError(f"{caller}: `source` and `target` must be format names, one of {SUPPORTED_FORMATS}. "
                         f"Received: source={source!r}, target={target!r}")
    source, target = source.lower(), target.lower()
    if source not in SUPPORTED_FORMATS or target not in SUPPORTED_FORMATS:
        raise ValueError(f"{caller}: Invalid source or target format. Supported formats: {SUPPORTED_FORMATS}. "
                         f"Received: source={source!r}, target={target!r}")
    if (source.startswith("rel_") or target.startswith("rel_")) and (width is None or height is None):
        raise ValueError(f"{caller} must receive `height` and `width` transforming between relative and absolute "
                         f"formats. Received source=`{source}`, target=`{target}`, but height={height} and "
                         f"width={width}.")
    return source, target


def convert(boxes, source, target, height=None, width=None, dtype="float32"):
    """``boxes`` (..., 4) from ``source`` to ``target`` (checked, lower-case names), cast to
    ``dtype`` first, as Keras: a pure jax function."""
    boxes = boxes.astype(dtype)
    if source == target:
        return boxes
    width = None if width is None else jnp.asarray(width).astype(dtype)
    height = None if height is None else jnp.asarray(height).astype(dtype)
    if source.startswith("rel_") and target.startswith("rel_"):  # no need of the image's size
        source, target = source[4:], target[4:]
    return _from_xyxy(_to_xyxy(boxes, source, height, width), target, height, width)
