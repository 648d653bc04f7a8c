"""``keras.utils.bounding_boxes``: Keras 3.15's bounding box utilities (format conversion,
clipping, cropping, padding, affine moves, IoU and CIoU, anchor deltas), on minikeras Tensors,
Variables and NumPy or jax arrays, differentiable on the tape.

    from minikeras import keras
    boxes = keras.utils.bounding_boxes.convert_format(boxes, source="xywh", target="xyxy")
    iou = keras.utils.bounding_boxes.compute_iou(boxes, anchors, bounding_box_format="xyxy")
"""
from minikeras.image.bounding_boxes.converters import clip_to_image_size, convert_format, crop, pad  # noqa: F401
from minikeras.image.bounding_boxes.affine import affine_transform  # noqa: F401
from minikeras.image.bounding_boxes.iou import compute_ciou, compute_iou  # noqa: F401
from minikeras.image.bounding_boxes.deltas import decode_deltas_to_boxes, encode_box_to_deltas  # noqa: F401
