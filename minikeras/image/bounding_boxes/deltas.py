"""``keras.utils.bounding_boxes``' anchor encodings: boxes as offsets and log-scales of anchors
(``encode_box_to_deltas``) and back (``decode_deltas_to_boxes``), as a detection head's
regression targets."""
import jax.numpy as jnp
import numpy as np

from minikeras.backend import epsilon
from minikeras.image.bounding_boxes.formats import check_conversion, convert
from minikeras.image.bounding_boxes.recorded import box_op, box_shape, size_input

ENCODINGS = ("center_xywh", "center_yxhw")


def _variance(variance):
    if variance is None:
        return None
    variance = np.asarray(variance, "float32") if not hasattr(variance, "shape") else variance
    if len(variance.shape) == 0 or variance.shape[-1] != 4:
        raise ValueError(f"`variance` must be length 4, got {variance}")
    return variance


def _image_size(image_shape):
    if image_shape is None:
        return None, None
    height, width, _ = image_shape
    return size_input(height), size_input(width)


def _encode(anchors, boxes, variance, anchor_format, box_format, encoding, height, width, eps):
    anchors = convert(anchors, anchor_format, encoding, height, width)
    boxes = convert(boxes, box_format, encoding, height, width)
    anchor_sizes = jnp.maximum(anchors[..., 2:], eps)
    box_sizes = jnp.maximum(boxes[..., 2:], eps)
    deltas = jnp.concatenate([(boxes[..., :2] - anchors[..., :2]) / anchor_sizes, jnp.log(box_sizes / anchor_sizes)],
                             axis=-1)
    return deltas if variance is None else deltas / variance


def encode_box_to_deltas(anchors, boxes, anchor_format, box_format, encoding_format="center_yxhw", variance=None,
                         image_shape=None):
    """The deltas of ``boxes`` from ``anchors``, as ``keras.utils.bounding_boxes.encode_box_to_deltas``.

    Both are converted to ``encoding_format`` (``"center_yxhw"`` or ``"center_xywh"``); the
    deltas are the centres' offsets in anchor sizes and the logs of the size ratios (sizes at
    least Keras's epsilon), divided by ``variance`` (4 numbers) where given.

    Args:
      anchors: (N, 4) anchors in ``anchor_format``.
      boxes: (N, 4) or (batch, N, 4) boxes in ``box_format``.
      image_shape: (height, width, channels), for relative formats.

    Returns:
      The deltas, the shape of ``boxes``, float32.
    """
    variance = _variance(variance)
    if encoding_format not in ENCODINGS:
        raise ValueError(f"`encoding_format` should be one of 'center_xywh' or 'center_yxhw', got {encoding_format}")
    height, width = _image_size(image_shape)
    anchor_format, encoding_format = check_conversion(box_shape(anchors), anchor_format, encoding_format, height,
                                                      width, "encode_box_to_deltas()")
    box_format, _ = check_conversion(box_shape(boxes), box_format, encoding_format, height, width,
                                     "encode_box_to_deltas()")
    return box_op("encode_box_to_deltas", _encode, anchors=anchors, boxes=boxes, variance=variance,
                  anchor_format=anchor_format, box_format=box_format, encoding=encoding_format, height=height,
                  width=width, eps=epsilon())


def _decode(anchors, deltas, variance, anchor_format, box_format, encoding, height, width):
    anchors = convert(anchors, anchor_format, encoding, height, width)
    if variance is not None:
        deltas = deltas * variance
    boxes = jnp.concatenate([deltas[..., :2] * anchors[..., 2:] + anchors[..., :2],
                             jnp.exp(deltas[..., 2:]) * anchors[..., 2:]], axis=-1)
    return convert(boxes, encoding, box_format, height, width)


def decode_deltas_to_boxes(anchors, boxes_delta, anchor_format, box_format, encoded_format="center_yxhw",
                           variance=None, image_shape=None):
    """Boxes in ``box_format`` from their deltas to ``anchors`` (``encode_box_to_deltas``'s
    inverse), as ``keras.utils.bounding_boxes.decode_deltas_to_boxes``.

    Args:
      anchors: (N, 4) anchors, or a dict of them per feature level.
      boxes_delta: (N, 4) or (batch, N, 4) deltas, or a dict with the keys of ``anchors``.
      encoded_format: ``"center_yxhw"`` or ``"center_xywh"``: the deltas' encoding.
      variance: 4 numbers the deltas are multiplied by first.
      image_shape: (height, width, channels), for relative formats.

    Returns:
      The boxes (float32), or a dict of them per level.
    """
    variance = _variance(variance)
    if encoded_format not in ENCODINGS:
        raise ValueError(f"`encoded_format` should be 'center_xywh' or 'center_yxhw', but got '{encoded_format}'.")
    height, width = _image_size(image_shape)

    def decode(anchor, delta):
        shape = box_shape(anchor)
        source, encoding = check_conversion(shape, anchor_format, encoded_format, height, width,
                                            "decode_deltas_to_boxes()")
        _, target = check_conversion(shape, encoded_format, box_format, height, width, "decode_deltas_to_boxes()")
        return box_op("decode_deltas_to_boxes", _decode, anchors=anchor, deltas=delta, variance=variance,
                      anchor_format=source, box_format=target, encoding=encoding, height=height, width=width)

    if isinstance(anchors, dict) and isinstance(boxes_delta, dict):
        return {level: decode(anchor, boxes_delta[level]) for level, anchor in anchors.items()}
    return decode(anchors, boxes_delta)
