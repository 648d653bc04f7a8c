"""Keras 3's ``ContrastLimitedAdaptiveHistogramEqualization`` (CLAHE): each channel equalized by
the clipped histograms of a grid of tiles, the tiles' lookup tables blended bilinearly."""
import jax.numpy as jnp

from minikeras.layers.preprocessing.color_augment_forwards import to_range
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, jax_image_op
from minikeras.layers.preprocessing.image_color_ops import checked_value_range

LEVELS = 256


def _tile_histograms(tiles):
    """Counts of the levels 0-255 of ``tiles`` (..., pixels), as float32 (..., 256)."""
    groups = tiles.reshape(-1, tiles.shape[-1])
    offsets = jnp.arange(groups.shape[0], dtype=jnp.int32)[:, None] * LEVELS
    counts = jnp.bincount((groups + offsets).reshape(-1), length=groups.shape[0] * LEVELS)
    return counts.reshape(tiles.shape[:-1] + (LEVELS,)).astype(jnp.float32)


def _sample_positions(size, tile, grid):
    """For each pixel row (or column): the two neighbouring tile centres (indices into the
    edge-padded grid of tables) and the weight of the second."""
    position = (jnp.arange(size, dtype=jnp.float32) - tile / 2.0) / tile + 1.0
    first = jnp.floor(position)
    weight = position - first
    return (jnp.clip(first, 0, grid + 1).astype(jnp.int32), jnp.clip(first + 1.0, 0, grid + 1).astype(jnp.int32),
            weight)


def clahe(images, *, value_range, clip_limit, tile_grid_size):
    """CLAHE of a channels-last batch, as Keras 3 computes it: the image padded symmetrically to
    whole tiles; per tile and channel a 256-level histogram whose counts above
    ``clip_limit * pixels / 256`` are spread evenly over all levels; its normalized cumulative
    sum as the tile's table; each pixel's value read from the four nearest tiles' tables and
    blended bilinearly."""
    dtype = images.dtype
    x = to_range(images.astype(jnp.float32), value_range, (0, 255))
    batch, height, width, channels = x.shape
    grid_h, grid_w = tile_grid_size
    tile_h, tile_w = -(-height // grid_h), -(-width // grid_w)
    pad_h, pad_w = tile_h * grid_h - height, tile_w * grid_w - width
    if pad_h or pad_w:
        x = jnp.pad(x, ((0, 0), (0, pad_h), (0, pad_w), (0, 0)), mode="symmetric")
    tiles = x.reshape(batch, grid_h, tile_h, grid_w, tile_w, channels).transpose(0, 1, 3, 5, 2, 4)
    tiles = jnp.clip(tiles.reshape(batch, grid_h, grid_w, channels, tile_h * tile_w).astype(jnp.int32), 0, 255)
    hists = _tile_histograms(tiles)
    if clip_limit > 0:
        clipped = jnp.clip(hists, 0, jnp.float32(clip_limit * (tile_h * tile_w) / 256.0))
        hists = clipped + jnp.sum(hists - clipped, axis=-1, keepdims=True) / 256.0
    cdf = jnp.cumsum(hists, axis=-1)
    cdf_min = jnp.min(cdf, axis=-1, keepdims=True)
    denominator = jnp.float32(tile_h * tile_w) - cdf_min
    tables = jnp.clip((cdf - cdf_min) * 255.0 / jnp.where(denominator == 0, 1.0, denominator), 0, 255)
    tables = jnp.pad(tables, ((0, 0), (1, 1), (1, 1), (0, 0), (0, 0)), mode="edge")
    top, bottom, wy = _sample_positions(tile_h * grid_h, tile_h, grid_h)
    left, right, wx = _sample_positions(tile_w * grid_w, tile_w, grid_w)
    pixels = jnp.clip(x, 0, 255).astype(jnp.int32)
    b = jnp.arange(batch)[:, None, None, None]
    c = jnp.arange(channels)[None, None, None, :]

    def read(rows, cols):
        return tables[b, rows[None, :, None, None], cols[None, None, :, None], c, pixels]

    wy, wx = wy[None, :, None, None], wx[None, None, :, None]
    upper = read(top, left) * (1.0 - wx) + read(top, right) * wx
    lower = read(bottom, left) * (1.0 - wx) + read(bottom, right) * wx
    result = (upper * (1.0 - wy) + lower * wy)[:, :height, :width, :]
    return to_range(result, (0, 255), value_range).astype(dtype)


class ContrastLimitedAdaptiveHistogramEqualization(AugmentationLayer):
    """Contrast limited adaptive histogram equalization of each image and channel. As in Keras 3
    it works at inference too (``training=False`` does not skip it).

    Args:
      value_range: the images' range, (0, 255) by default; values are equalized as 256 levels
        of it.
      clip_limit: histogram counts above ``clip_limit`` times the mean count are spread over all
        levels (limiting the contrast gained in flat regions); 0 or less equalizes unclipped.
        4.0 by default.
      tile_grid_size: (rows, columns) of tiles, (8, 8) by default.
      data_format: 'channels_last' (default) or 'channels_first'.
    """

    def __init__(self, value_range=(0, 255), clip_limit=4.0, tile_grid_size=(8, 8), data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        name = "ContrastLimitedAdaptiveHistogramEqualization"
        self.value_range = checked_value_range(value_range, name, sort=False)
        if isinstance(clip_limit, bool) or not isinstance(clip_limit, (int, float)):
            raise ValueError(f"{name}: `clip_limit` should be a number. Received: clip_limit={clip_limit}")
        if (not isinstance(tile_grid_size, (tuple, list)) or len(tile_grid_size) != 2
                or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in tile_grid_size)):
            raise ValueError(f"{name}: `tile_grid_size` should be a pair of positive integers (rows, columns). "
                             f"Received: tile_grid_size={tile_grid_size}")
        self.clip_limit = clip_limit
        self.tile_grid_size = tuple(tile_grid_size)

    def call(self, inputs, training=None):
        return super().call(inputs, training=True)

    def get_random_transformation(self, shape):
        return None

    def transform_images(self, images, transformation=None):
        return jax_image_op("clahe", clahe, [images], value_range=tuple(self.value_range),
                            clip_limit=float(self.clip_limit), tile_grid_size=self.tile_grid_size)

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range, "clip_limit": self.clip_limit,
                "tile_grid_size": self.tile_grid_size}
