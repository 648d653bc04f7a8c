"""Synthetic pictures for the transfer-learning and segmentation examples: one shape (an ellipse, a
rectangle or a triangle) of a random colour, size and place on a background of two random colours
blended along a random direction, with Gaussian noise.

    image, inside = draw(KINDS.index("triangle"), 64, np.random.default_rng(0))
"""
import numpy as np

KINDS = ["ellipse", "rectangle", "triangle"]


def draw(kind, size, rng):
    """``(image, inside)``: a float32 image (size, size, 3) in [0, 1] with one ``KINDS[kind]``,
    and the boolean mask of the shape's pixels."""
    inside = shape_pixels(kind, size, rng)
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    angle = rng.uniform(0, 2 * np.pi)
    along = np.cos(angle) * xx + np.sin(angle) * yy
    blend = ((along - along.min()) / np.ptp(along))[..., None]
    background = (1 - blend) * rng.uniform(0, 1, 3) + blend * rng.uniform(0, 1, 3)
    image = np.where(inside[..., None], rng.uniform(0, 1, 3), background) + rng.normal(0, 0.05, (size, size, 3))
    return np.clip(image, 0, 1).astype(np.float32), inside


def shape_pixels(kind, size, rng):
    """The pixels inside an ellipse (kind 0), a rectangle (1) or an upright triangle (2), each
    centred in the middle 40% of the image, 12% to 30% of its size in each half-axis."""
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    cy, cx = rng.uniform(0.3, 0.7, 2) * size
    ry, rx = rng.uniform(0.12, 0.3, 2) * size
    if kind == 0:
        return ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
    if kind == 1:
        return (np.abs(yy - cy) <= ry) & (np.abs(xx - cx) <= rx)
    corners = [(cy - ry, cx), (cy + ry, cx - rx), (cy + ry, cx + rx)]
    sides = np.array([(x1 - x0) * (yy - y0) - (y1 - y0) * (xx - x0)
                      for (y0, x0), (y1, x1) in zip(corners, corners[1:] + corners[:1])])
    return np.all(sides >= 0, axis=0) | np.all(sides <= 0, axis=0)  # on the same side of the three edges
