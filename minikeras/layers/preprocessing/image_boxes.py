"""Bounding boxes through Keras 3's image layers: ``{"images", "bounding_boxes": {"boxes",
"labels"}}`` dicts, and the box transforms of the layers that move pixels (``RandomFlip``,
``Resizing``, ``CenterCrop``, ``RandomTranslation``, ``RandomRotation``, ``RandomZoom``,
``RandomShear``, ``RandomPerspective``, ``RandomCrop``), written as Keras 3.15 writes them so that
a box lands where its pixels went (where Keras's own arithmetic misplaces them, each function
says how this one differs).

A layer that transforms boxes implements ``transform_with_boxes(images, bounding_boxes,
training)`` (one draw for both); ``image_base`` hands it a channels-last batch and the boxes
batched (``densify``), and restores single images and channels-first afterwards.
"""
import jax.numpy as jnp

from minikeras.image.bounding_boxes import affine_transform, clip_to_image_size, convert_format
from minikeras.image.bounding_boxes.recorded import box_op
from minikeras.image.keras_forwards import homography
from minikeras.ops.array import expand_dims, squeeze
from minikeras.ops.elementwise import cast
from minikeras.tensor import Tensor, Variable, to_array


def _tensor(value, dtype=None):
    tensor = value.value() if isinstance(value, Variable) else value if isinstance(value, Tensor) else \
        Tensor(to_array(value))
    return tensor if dtype is None or tensor.dtype == dtype else cast(tensor, dtype)


def densify(layer, bounding_boxes, single):
    """Keras's ``densify_bounding_boxes``: ``{"boxes": float32 (batch, n, 4), "labels": (batch,
    n)}`` (a single image's boxes get a batch axis), the dict checked first."""
    if not isinstance(bounding_boxes, dict) or "boxes" not in bounding_boxes or "labels" not in bounding_boxes:
        raise ValueError(f"{type(layer).__name__} '{layer.name}': Expected `bounding_boxes` agurment to be a dict with "
                         f"keys 'boxes' and 'labels'. Received: bounding_boxes={bounding_boxes}")
    boxes, labels = _tensor(bounding_boxes["boxes"], "float32"), _tensor(bounding_boxes["labels"])
    rank = 2 if single else 3
    if boxes.ndim != rank or boxes.shape[-1] != 4 or labels.ndim not in (rank - 1, rank):
        raise ValueError(f"{type(layer).__name__} '{layer.name}' expects bounding_boxes['boxes'] of shape "
                         f"{'(num_boxes, 4)' if single else '(batch_size, num_boxes, 4)'} and labels of one rank "
                         f"less, for {'an image' if single else 'a batch of images'}; received boxes of shape "
                         f"{tuple(boxes.shape)} and labels of shape {tuple(labels.shape)}")
    if single:
        boxes, labels = expand_dims(boxes, 0), expand_dims(labels, 0)
    return dict(bounding_boxes, boxes=boxes, labels=labels)


def undensify(bounding_boxes, single):
    """A single image's boxes without the batch axis again."""
    if not single:
        return bounding_boxes
    return dict(bounding_boxes, boxes=squeeze(bounding_boxes["boxes"], 0), labels=squeeze(bounding_boxes["labels"], 0))


def _flip(boxes, flips, horizontal, vertical):
    flips = flips.reshape(flips.shape[0], 1, 1)
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    if horizontal:
        boxes = jnp.where(flips, jnp.concatenate([1 - x2, y1, 1 - x1, y2], axis=-1), boxes)
        x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    if vertical:
        boxes = jnp.where(flips, jnp.concatenate([x1, 1 - y2, x2, 1 - y1], axis=-1), boxes)
    return boxes


def flip_boxes(bounding_boxes, flips, height, width, bounding_box_format, horizontal, vertical):
    """Keras's ``RandomFlip.transform_bounding_boxes``: the boxes of the images ``flips``
    (batch, ...) says are flipped, mirrored in relative coordinates; labels of boxes left
    without area set to -1."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "rel_xyxy", height=height, width=width)
    boxes["boxes"] = box_op("flip_boxes", _flip, boxes=boxes["boxes"], flips=jnp.asarray(flips),
                            horizontal=horizontal, vertical=vertical)
    boxes = clip_to_image_size(boxes, height=height, width=width, bounding_box_format="xyxy")  # as Keras 3.15
    return convert_format(boxes, "rel_xyxy", bounding_box_format, height=height, width=width)


def _resize(boxes, in_h, in_w, out_h, out_w, mode):
    dtype = boxes.dtype
    in_h, in_w = jnp.asarray(in_h, dtype), jnp.asarray(in_w, dtype)
    if mode == "pad":
        ratio = jnp.minimum((out_h / in_h).astype(dtype), (out_w / in_w).astype(dtype))
        x_offset, y_offset = (out_w - in_w * ratio) // 2, (out_h - in_h * ratio) // 2
        scale_x = scale_y = ratio
    elif mode == "crop":
        source, target = in_w / in_h, out_w / out_h
        new_w = jnp.where(source > target, out_h * source, out_w)
        new_h = jnp.where(source > target, out_h, out_w / source)
        scale_x, scale_y = new_w / in_w, new_h / in_h
        x_offset, y_offset = -((new_w - out_w) // 2), -((new_h - out_h) // 2)
    else:
        scale_x, scale_y = (out_w / in_w).astype(dtype), (out_h / in_h).astype(dtype)
        x_offset = y_offset = 0
    return jnp.stack([boxes[..., 0] * scale_x + x_offset, boxes[..., 1] * scale_y + y_offset,
                      boxes[..., 2] * scale_x + x_offset, boxes[..., 3] * scale_y + y_offset], axis=-1)


def _blank(boxes):
    """Padding boxes (all -1 or all 0) stay all 0, as Keras's Resizing keeps them."""
    return jnp.all(boxes == -1, axis=-1) | jnp.all(boxes == 0, axis=-1)


def _zero_where(boxes, blank):
    return jnp.where(blank[..., None], jnp.zeros((4,), boxes.dtype), boxes)


def resize_boxes(bounding_boxes, in_h, in_w, out_h, out_w, mode, bounding_box_format):
    """Keras's ``Resizing.transform_bounding_boxes``: boxes scaled with the image (``mode``
    "stretch", "crop" for ``crop_to_aspect_ratio``, "pad" for ``pad_to_aspect_ratio``),
    clipped to the new size (labels of boxes left without area: -1)."""
    blank = box_op("blank_boxes", _blank, boxes=bounding_boxes["boxes"])
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height=in_h, width=in_w)
    boxes["boxes"] = box_op("resize_boxes", _resize, boxes=boxes["boxes"], in_h=in_h, in_w=in_w, out_h=out_h,
                            out_w=out_w, mode=mode)
    boxes = clip_to_image_size(boxes, height=out_h, width=out_w)
    boxes["boxes"] = box_op("zero_blank_boxes", _zero_where, boxes=boxes["boxes"], blank=blank)
    return convert_format(boxes, "xyxy", bounding_box_format, height=out_h, width=out_w)


def _crop_window(boxes, top, left, bottom, right):
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    return jnp.concatenate([jnp.clip(x1, left, right) - left, jnp.clip(y1, top, bottom) - top,
                            jnp.clip(x2, left, right) - left, jnp.clip(y2, top, bottom) - top], axis=-1)


def center_crop_boxes(bounding_boxes, in_h, in_w, out_h, out_w, bounding_box_format):
    """Keras's ``CenterCrop.transform_bounding_boxes``: boxes clipped to the centred window
    and shifted into it; where the image is smaller than the target on a side, clipped to the
    centred window of the target's aspect ratio and scaled to the target size (as the image is
    resized); labels of boxes left without area set to -1."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height=in_h, width=in_w)
    if in_h >= out_h and in_w >= out_w:
        top, left = int((in_h - out_h) / 2), int((in_w - out_w) / 2)
        crop_h, crop_w = out_h, out_w
    else:
        crop_h = max(min(in_h, int(float(in_w * out_h) / out_w)), 1)
        crop_w = max(min(in_w, int(float(in_h * out_w) / out_h)), 1)
        top, left = int(float(in_h - crop_h) / 2), int(float(in_w - crop_w) / 2)
    boxes["boxes"] = box_op("center_crop_boxes", _crop_window, boxes=boxes["boxes"], top=top, left=left,
                            bottom=top + crop_h, right=left + crop_w)
    if (crop_h, crop_w) != (out_h, out_w):
        boxes = convert_format(boxes, "xyxy", "rel_xyxy", height=crop_h, width=crop_w)
        boxes = convert_format(boxes, "rel_xyxy", "xyxy", height=out_h, width=out_w)
    boxes = clip_to_image_size(boxes, height=out_h, width=out_w, bounding_box_format="xyxy")
    return convert_format(boxes, "xyxy", bounding_box_format, height=out_h, width=out_w)


def _translate(boxes, translations):
    dx, dy = translations[:, 0, None, None], translations[:, 1, None, None]
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    return jnp.concatenate([x1 + dx, y1 + dy, x2 + dx, y2 + dy], axis=-1)


def translate_boxes(bounding_boxes, translations, height, width, bounding_box_format):
    """Keras's ``RandomTranslation.transform_bounding_boxes``: each image's boxes shifted by
    its ``translations`` (batch, 2: the x and y shifts in pixels), clipped to the image (labels
    of boxes left without area set to -1)."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height=height, width=width)
    boxes["boxes"] = box_op("translate_boxes", _translate, boxes=boxes["boxes"], translations=translations)
    boxes = clip_to_image_size(boxes, height=height, width=width, bounding_box_format="xyxy")
    return convert_format(boxes, "xyxy", bounding_box_format, height=height, width=width)


def rotate_boxes(bounding_boxes, angle, height, width, bounding_box_format):
    """Keras's ``RandomRotation.transform_bounding_boxes``: each box becomes the box around its
    corners rotated by its image's ``angle`` (degrees, about the centre), clipped to the image
    (labels of boxes left without area set to -1). Keras 3.15 reads the boxes as xyxy whatever
    their format; they are converted to xyxy first here (the same for xyxy boxes)."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height=height, width=width)
    angle = jnp.asarray(angle, jnp.float32)
    zeros, ones = jnp.zeros(angle.shape, jnp.float32), jnp.ones(angle.shape, jnp.float32)
    boxes["boxes"] = affine_transform(boxes["boxes"], angle, zeros, zeros, ones, zeros, zeros, height, width)
    boxes = clip_to_image_size(boxes, height=height, width=width, bounding_box_format="xyxy")
    return convert_format(boxes, "xyxy", bounding_box_format, height=height, width=width)


def _zoom_to_relative(boxes, width_zoom, height_zoom, height, width):
    """Keras's zoom of xyxy boxes: clipped to the part of the image the zoom keeps, relative to it."""
    width_zoom, height_zoom = width_zoom.reshape(-1, 1), height_zoom.reshape(-1, 1)
    x_offset = ((jnp.float32(width) - 1.0) / 2.0) * (1.0 - width_zoom)
    y_offset = ((jnp.float32(height) - 1.0) / 2.0) * (1.0 - height_zoom)
    w_start, h_start = x_offset, y_offset
    w_end, h_end = width_zoom * width + 0.0 * height + x_offset, 0.0 * width + height_zoom * height + y_offset
    w_start, h_start, w_end, h_end = (v[..., None] for v in (w_start, h_start, w_end, h_end))
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    x1, x2 = jnp.clip(x1, w_start, w_end) - w_start, jnp.clip(x2, w_start, w_end) - w_start
    y1, y2 = jnp.clip(y1, h_start, h_end) - h_start, jnp.clip(y2, h_start, h_end) - h_start
    kept_w, kept_h = w_end - w_start, h_end - h_start
    return jnp.concatenate([x1 / kept_w, y1 / kept_h, x2 / kept_w, y2 / kept_h], axis=-1)


def zoom_boxes(bounding_boxes, width_zoom, height_zoom, height, width, bounding_box_format):
    """Keras's ``RandomZoom.transform_bounding_boxes``: ``width_zoom`` and ``height_zoom``
    (batch, 1) are the drawn zoom factors; boxes clipped to what the zoom keeps and scaled with
    it (labels of boxes left without area set to -1)."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height=height, width=width)
    boxes["boxes"] = box_op("zoom_boxes", _zoom_to_relative, boxes=boxes["boxes"],
                            width_zoom=jnp.asarray(width_zoom, jnp.float32),
                            height_zoom=jnp.asarray(height_zoom, jnp.float32), height=height, width=width)
    boxes = clip_to_image_size(boxes, bounding_box_format="rel_xyxy")
    return convert_format(boxes, "rel_xyxy", bounding_box_format, height=height, width=width)


def _shear(boxes, shear_factor):
    shear_x, shear_y = shear_factor[:, 0:1], shear_factor[:, 1:2]
    x1, y1, x2, y2 = (boxes[..., i] for i in range(4))
    x1 = jnp.where(shear_x < 0, x1 - shear_x * y1, x1 - shear_x * y2)
    x2 = jnp.where(shear_x < 0, x2 - shear_x * y2, x2 - shear_x * y1)
    y1 = jnp.where(shear_y > 0, y1 - shear_y * x2, y1 - shear_y * x1)  # x1, x2 already sheared, as in Keras
    y2 = jnp.where(shear_y > 0, y2 - shear_y * x1, y2 - shear_y * x2)
    return jnp.stack([x1, y1, x2, y2], axis=-1)


def shear_boxes(bounding_boxes, shear_factor, height, width, bounding_box_format, dtype):
    """Keras's ``RandomShear.transform_bounding_boxes``: ``shear_factor`` (batch, 2) holds each
    image's x and y shear amounts; relative boxes sheared at their corners, clipped to the image
    (labels of boxes left without area set to -1), in the layer's compute ``dtype``."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "rel_xyxy", height=height, width=width,
                           dtype=dtype)
    boxes["boxes"] = box_op("shear_boxes", _shear, boxes=boxes["boxes"],
                            shear_factor=jnp.asarray(shear_factor).astype(dtype))
    boxes = clip_to_image_size(boxes, bounding_box_format="rel_xyxy")
    return convert_format(boxes, "rel_xyxy", bounding_box_format, height=height, width=width, dtype=dtype)


def _warp(boxes, start_points, end_points, apply):
    transform = homography(start_points.astype(jnp.float32), end_points.astype(jnp.float32))
    batch = transform.shape[0]
    inverse = jnp.linalg.inv(jnp.concatenate([transform, jnp.ones((batch, 1), transform.dtype)], -1).reshape(batch, 3,
                                                                                                            3))
    x0, y0, x1, y1 = jnp.split(boxes, 4, axis=-1)
    xs, ys = [], []
    for x, y in ((x0, y0), (x1, y1), (x0, y1), (x1, y0)):
        points = jnp.moveaxis(jnp.concatenate([x, y, jnp.ones_like(x)], axis=-1), -1, -2)
        moved = jnp.moveaxis(jnp.matmul(inverse, points), -1, -2)
        xs.append(moved[..., 0] / moved[..., 2])
        ys.append(moved[..., 1] / moved[..., 2])
    xs, ys = jnp.stack(xs, axis=-1), jnp.stack(ys, axis=-1)
    warped = jnp.stack([xs.min(-1), ys.min(-1), xs.max(-1), ys.max(-1)], axis=-1)
    return jnp.where(apply[:, None, None], warped, boxes)


def perspective_boxes(bounding_boxes, transformation, height, width, bounding_box_format):
    """Keras's ``RandomPerspective.transform_bounding_boxes``: where ``apply_perspective``, each
    box becomes the box around its corners moved by the homography from ``end_points`` to
    ``start_points``' inverse, clipped to the image (labels of boxes left without area set to
    -1). Keras 3.15 returns them as xyxy whatever the layer's format; here in that format (the
    same for xyxy boxes)."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height=height, width=width)
    boxes["boxes"] = box_op("perspective_boxes", _warp, boxes=boxes["boxes"],
                            start_points=jnp.asarray(transformation["start_points"]),
                            end_points=jnp.asarray(transformation["end_points"]),
                            apply=jnp.asarray(transformation["apply_perspective"]))
    boxes = clip_to_image_size(boxes, height=height, width=width, bounding_box_format="xyxy")
    return convert_format(boxes, "xyxy", bounding_box_format, height=height, width=width)


def _crop_and_scale(boxes, offsets, crop_h, crop_w, out_h, out_w):
    top, left = offsets[0].astype(boxes.dtype), offsets[1].astype(boxes.dtype)
    x1, y1, x2, y2 = jnp.split(boxes, 4, axis=-1)
    scale_x, scale_y = out_w / crop_w, out_h / crop_h
    return jnp.concatenate([jnp.clip(x1 - left, 0, crop_w) * scale_x, jnp.clip(y1 - top, 0, crop_h) * scale_y,
                            jnp.clip(x2 - left, 0, crop_w) * scale_x, jnp.clip(y2 - top, 0, crop_h) * scale_y],
                           axis=-1)


def random_crop_boxes(bounding_boxes, offsets, crop_h, crop_w, in_h, in_w, out_h, out_w, bounding_box_format):
    """``RandomCrop``'s boxes: shifted by the window's ``offsets`` (top, left), clipped to the
    ``crop_h`` x ``crop_w`` window and scaled to the output where the window was resized
    (labels of boxes left without area set to -1). Keras 3.15's own subtracts the vertical offset
    from x and the horizontal one from y, and clips nothing."""
    boxes = convert_format(dict(bounding_boxes), bounding_box_format, "xyxy", height=in_h, width=in_w)
    boxes["boxes"] = box_op("random_crop_boxes", _crop_and_scale, boxes=boxes["boxes"], offsets=jnp.asarray(offsets),
                            crop_h=crop_h, crop_w=crop_w, out_h=out_h, out_w=out_w)
    boxes = clip_to_image_size(boxes, height=out_h, width=out_w, bounding_box_format="xyxy")
    return convert_format(boxes, "xyxy", bounding_box_format, height=out_h, width=out_w)
