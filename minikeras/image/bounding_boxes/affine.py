"""``keras.utils.bounding_boxes.affine_transform``: boxes moved by the affine transformation
that Keras 3's RandomRotation/RandomTranslation/RandomZoom/RandomShear apply to images."""
import math

import jax.numpy as jnp

from minikeras.image.bounding_boxes.recorded import as_input, box_op, box_shape, size_input


def inverse_affine_matrix(center_x, center_y, angle, translate_x, translate_y, scale, shear_x, shear_y, height,
                          width):
    """(batch, 3, 3): the matrix Keras builds from per-image draws (TF's
    ``_get_inverse_affine_matrix``); angles in degrees, translations and centres as fractions."""
    dtype = angle.dtype
    angle, shear_x, shear_y = -angle, -shear_x, -shear_y
    cx, cy = center_x * (width - 1), center_y * (height - 1)
    rot = angle * (1.0 / 180.0 * math.pi)
    tx, ty = -translate_x * (width - 1), -translate_y * (height - 1)
    sx, sy = shear_x * (1.0 / 180.0 * math.pi), shear_y * (1.0 / 180.0 * math.pi)
    cos_sy, tan_sx = jnp.cos(sy), jnp.tan(sx)
    cx_plus_tx, cy_plus_ty = cx + tx, cy + ty
    a = jnp.cos(rot - sy) / cos_sy
    b = a * tan_sx + jnp.sin(rot)
    c = -jnp.sin(rot - sy) / cos_sy
    d = jnp.cos(rot) - c * tan_sx
    a0, a1, b0, b1 = d * scale, -b * scale, -c * scale, a * scale
    a2 = cx - a0 * cx_plus_tx - a1 * cy_plus_ty
    b2 = cy - b0 * cx_plus_tx - b1 * cy_plus_ty
    zeros = jnp.zeros(angle.shape, dtype)
    matrix = jnp.stack([a0, a1, a2, b0, b1, b2, zeros, zeros, zeros + 1], axis=-1)
    return matrix.reshape(angle.shape[0], 3, 3).astype(dtype)


def _affine(boxes, angle, translate_x, translate_y, scale, shear_x, shear_y, height, width, center_x, center_y):
    matrix = inverse_affine_matrix(center_x, center_y, angle, translate_x, translate_y, scale, shear_x, shear_y,
                                   height, width)
    boxes = boxes.astype(matrix.dtype)
    batch, count = boxes.shape[0], boxes.shape[1]
    corners = jnp.stack([boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 1], boxes[..., 2], boxes[..., 3],
                         boxes[..., 0], boxes[..., 3]], axis=-1).reshape(batch, count, 4, 2)
    corners = jnp.concatenate([corners, jnp.ones((batch, count, 4, 1), corners.dtype)], axis=-1)
    moved = jnp.einsum("bnxy,byz->bnxz", corners, jnp.transpose(matrix[:, :2, :], (0, 2, 1)))
    return jnp.concatenate([jnp.min(moved, axis=2), jnp.max(moved, axis=2)], axis=-1)


def affine_transform(boxes, angle, translate_x, translate_y, scale, shear_x, shear_y, height, width, center_x=None,
                     center_y=None, bounding_box_format="xyxy"):
    """Moves each box's four corners by the image's affine transformation and returns the
    boxes around them, as ``keras.utils.bounding_boxes.affine_transform``.

    Args:
      boxes: (batch, N, 4) ``"xyxy"`` boxes (the only format Keras 3.15 takes here).
      angle: (batch,) rotations in degrees.
      translate_x, translate_y: (batch,) translations, as fractions of the width and height.
      scale: (batch,) scale factors.
      shear_x, shear_y: (batch,) shear angles in degrees.
      height, width: the image's size.
      center_x, center_y: the centre of the transformation, as fractions (0.5 by default).

    Returns:
      (batch, N, 4) boxes, in the dtype of ``angle``.
    """
    if bounding_box_format != "xyxy":
        raise NotImplementedError("affine_transform(): only bounding_box_format='xyxy' is supported, as in Keras "
                                  f"3.15. Received: bounding_box_format={bounding_box_format!r}")
    shape = box_shape(boxes)
    if len(shape) != 3 or shape[-1] != 4:
        raise ValueError(f"affine_transform(): `boxes` must have shape (batch, num_boxes, 4). Received: "
                         f"boxes.shape={shape}")
    draws = {"angle": angle, "translate_x": translate_x, "translate_y": translate_y, "scale": scale,
             "shear_x": shear_x, "shear_y": shear_y}
    for name, value in draws.items():
        draws[name] = as_input(value)
        if tuple(draws[name].shape) != shape[:1]:
            raise ValueError(f"affine_transform(): `{name}` must have one value per image, shape ({shape[0]},). "
                             f"Received: {name}.shape={tuple(draws[name].shape)}")
    return box_op("affine_transform", _affine, boxes=boxes, **draws, height=size_input(height),
                  width=size_input(width), center_x=0.5 if center_x is None else size_input(center_x),
                  center_y=0.5 if center_y is None else size_input(center_y))
