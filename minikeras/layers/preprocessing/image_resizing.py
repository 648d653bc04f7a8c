"""Keras 3's ``Resizing``, ``CenterCrop`` and ``RandomCrop`` layers."""
import jax
import numpy as np

from minikeras.image import resizing as _resize
from minikeras.image.crop import dynamic_crop
from minikeras.layers.preprocessing.image_base import ImagePreprocessingLayer, RandomImageLayer
from minikeras.layers.preprocessing.image_boxes import center_crop_boxes, random_crop_boxes, resize_boxes
from minikeras.ops.elementwise import cast
from minikeras.ops.math import maximum, minimum, round as round_
from minikeras.ops.random import next_key
from minikeras.tensor import Tensor


def _positive_int(value, name, layer):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{layer}: `{name}` must be a positive integer. Received: {name}={value!r}")
    return int(value)


def _saturate_cast(images, dtype):
    """Rounds and clips float images into an integer dtype's range, then casts (Keras's rule)."""
    info = np.iinfo(dtype.name)
    images = minimum(maximum(round_(images), float(info.min)), float(info.max))
    return cast(images, dtype)


def _spatial_shape(layer, input_shape, height, width):
    shape = list(input_shape)
    h_axis, w_axis = layer._spatial_axes(shape)
    shape[h_axis], shape[w_axis] = height, width
    return tuple(shape)


class Resizing(ImagePreprocessingLayer):
    """Resizes images to (``height``, ``width``).

    Args:
      height, width: the output size.
      interpolation: 'bilinear' (default), 'nearest', 'bicubic', 'area', 'lanczos3', 'lanczos5'.
      crop_to_aspect_ratio: first crop the largest centred window of the target's aspect ratio
        (no distortion).
      pad_to_aspect_ratio: first pad the short side evenly with ``fill_value`` to the target's
        aspect ratio. ``fill_mode`` must be 'constant'.
      antialias: widen the kernel when downsampling.
      data_format: 'channels_last' (default) or 'channels_first'.

    Integer images come back rounded into their own dtype; float images as floats.

    >>> mk.layers.Resizing(4, 4)(np.zeros((2, 8, 6, 3), np.uint8)).shape
    (2, 4, 4, 3)
    """

    keeps_dtype = True

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
                 fill_mode="constant", fill_value=0.0, antialias=False, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height = _positive_int(height, "height", "Resizing")
        self.width = _positive_int(width, "width", "Resizing")
        if interpolation not in _resize.METHODS:
            raise ValueError(f"Resizing: invalid value for argument `interpolation`. Expected one of "
                             f"{_resize.METHODS}. Received: interpolation={interpolation!r}")
        if fill_mode != "constant":
            raise ValueError(f"Resizing: invalid value for argument `fill_mode`. Only 'constant' is supported. "
                             f"Received: fill_mode={fill_mode!r}")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Resizing: only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.antialias = bool(antialias)

    def transform(self, images, training):
        dtype = images.dtype
        resized = _resize.keras_resize(images, (self.height, self.width), self.interpolation, self.antialias,
                                       self.crop_to_aspect_ratio, self.pad_to_aspect_ratio, self.fill_value)
        if resized.dtype == dtype:
            return resized
        if dtype.kind in "iu":
            return _saturate_cast(resized, dtype)
        return cast(resized, dtype)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is the input's (height, width);
        ``bounding_boxes`` batched."""
        in_h, in_w = transformation
        mode = "pad" if self.pad_to_aspect_ratio else "crop" if self.crop_to_aspect_ratio else "stretch"
        return resize_boxes(bounding_boxes, in_h, in_w, self.height, self.width, mode, self.bounding_box_format)

    def transform_with_boxes(self, images, bounding_boxes, training):
        transformation = tuple(images.shape[1:3])
        return self.transform(images, training), self.transform_bounding_boxes(bounding_boxes, transformation)

    def compute_output_shape(self, input_shape):
        return _spatial_shape(self, input_shape, self.height, self.width)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias}


def _center_crop_or_resize(images, height, width):
    """The centred (height, width) window; when the image is smaller on a side, the largest
    centred window of the target's aspect ratio resized bilinearly (Keras's ``smart_resize``)."""
    in_h, in_w = images.shape[1:3]
    if in_h >= height and in_w >= width:
        top, left = (in_h - height) // 2, (in_w - width) // 2
        return images[:, top:top + height, left:left + width, :]
    return _resize.keras_resize(images, (height, width), crop_to_aspect_ratio=True)


class CenterCrop(ImagePreprocessingLayer):
    """Crops the centred (``height``, ``width``) window of each image; an image smaller than
    that on a side is cropped to the target's aspect ratio and resized instead (as Keras).
    Outputs are floats (the layer's dtype)."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.height = _positive_int(height, "height", "CenterCrop")
        self.width = _positive_int(width, "width", "CenterCrop")

    def transform(self, images, training):
        return _center_crop_or_resize(images, self.height, self.width)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Keras 3's box transform: ``transformation`` is ``{"input_shape": the channels-last
        batch shape}``; ``bounding_boxes`` batched."""
        in_h, in_w = transformation["input_shape"][1:3]
        return center_crop_boxes(bounding_boxes, in_h, in_w, self.height, self.width, self.bounding_box_format)

    def transform_with_boxes(self, images, bounding_boxes, training):
        transformation = {"input_shape": tuple(images.shape)}
        return self.transform(images, training), self.transform_bounding_boxes(bounding_boxes, transformation)

    def compute_output_shape(self, input_shape):
        return _spatial_shape(self, input_shape, self.height, self.width)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}


class RandomCrop(RandomImageLayer):
    """Crops a random (``height``, ``width``) window, at one offset for the whole batch (as
    Keras 3), when training (``training=True``, or not given: Keras's default for this
    layer); an image not larger than the window on both sides is cropped to the target's
    aspect ratio and resized. With ``training=False`` the centred window is taken that way.

    Args:
      height, width: the output size.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(data_format=data_format, name=name, **kwargs)
        self.height = _positive_int(height, "height", "RandomCrop")
        self.width = _positive_int(width, "width", "RandomCrop")
        self.seed = seed

    def transform(self, images, training):
        return self.transform_with_boxes(images, None, training)[0]

    def transform_with_boxes(self, images, bounding_boxes, training):
        in_h, in_w = images.shape[1:3]
        if not (training and in_h > self.height and in_w > self.width):
            # Keras 3 starts the window where the centred box of the target's aspect ratio starts,
            # takes (height, width) from there (cut at the border), and resizes what it got
            top, left, _, _ = _resize.crop_box_to_aspect_ratio(in_h, in_w, self.height, self.width)
            images = images[:, top:top + self.height, left:left + self.width, :]
            crop_h, crop_w = images.shape[1:3]
            if (crop_h, crop_w) != (self.height, self.width):
                images = _resize.resize_batch(images, (self.height, self.width))
            offsets = np.array([top, left], "int32")
        else:
            offsets = jax.random.randint(next_key(self.seed), (2,), 0, np.array([in_h - self.height + 1,
                                                                                  in_w - self.width + 1]))
            images = dynamic_crop(images, Tensor(offsets), (self.height, self.width))
            crop_h, crop_w = self.height, self.width
        if bounding_boxes is not None:
            bounding_boxes = random_crop_boxes(bounding_boxes, offsets, crop_h, crop_w, in_h, in_w, self.height,
                                               self.width, self.bounding_box_format)
        return images, bounding_boxes

    def compute_output_shape(self, input_shape):
        return _spatial_shape(self, input_shape, self.height, self.width)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width, "seed": self.seed}
