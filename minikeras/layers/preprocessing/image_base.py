"""What Keras 3's image preprocessing layers share: one image (rank 3) or a batch (rank 4),
channels last or first, and for the random ones a draw from ``mk.random``'s generator.

The random layers draw with ``mk.random``'s global generator (``ops.random.next_key``, as
Dropout does; a layer's ``seed`` is folded into its draws): the draws advance with every
call, compiled or not, repeat after ``mk.random.set_seed``, and the generator's state is saved
with the weights, so a checkpoint restores the next augmentations exactly. They transform only
when called with ``training=True`` (``fit`` does); otherwise they return the input, cast to
the layer's dtype as Keras does. Each also takes Keras 3's dict ``{"images": ..., "labels":
...}`` and returns it with the images transformed.
"""
import jax

from minikeras.image.resizing import as_image_tensor
from minikeras.layers.base import Layer
from minikeras.layers.preprocessing.image_boxes import densify, undensify
from minikeras.ops.array import expand_dims, squeeze, transpose
from minikeras.ops.elementwise import cast
from minikeras.ops.random import next_key

DATA_FORMATS = ("channels_last", "channels_first")


class ImagePreprocessingLayer(Layer):
    """Base of the image layers: ``transform(batch, training)`` sees a channels-last batch.

    Args:
      data_format: 'channels_last' (default: (batch, height, width, channels)) or
        'channels_first'.
      bounding_box_format: the format of the ``bounding_boxes`` of dict inputs
        (``keras.utils.bounding_boxes.convert_format``'s names), for the layers that move them
        (``image_boxes``).
    """

    keeps_dtype = False  # Resizing returns integer images as integers; the others return floats
    keeps_boxes = False  # True: the layer moves no pixel, so a dict's bounding boxes pass unchanged (as Keras's)

    def __init__(self, data_format=None, bounding_box_format=None, **kwargs):
        super().__init__(**kwargs)
        self.bounding_box_format = bounding_box_format
        data_format = "channels_last" if data_format is None else str(data_format).lower()
        if data_format not in DATA_FORMATS:
            raise ValueError(f"{type(self).__name__}: the `data_format` argument must be one of {DATA_FORMATS}. "
                             f"Received: data_format={data_format!r}")
        self.data_format = data_format

    def _check_input(self, inputs):
        if isinstance(inputs, dict) and "images" in inputs:
            inputs = inputs["images"]
        shape = getattr(inputs, "shape", None)
        if shape is not None and len(shape) not in (3, 4):
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects images of rank 3 (height, width, channels) or 4 "
                f"(batch, height, width, channels); received input of rank {len(shape)}, shape {tuple(shape)}")

    def call(self, inputs, training=None):
        if isinstance(inputs, dict):
            if "bounding_boxes" in inputs and (self.keeps_boxes or hasattr(self, "transform_with_boxes")):
                return self._call_with_boxes(inputs, bool(training))
            return dict(inputs, images=ImagePreprocessingLayer.call(self, images_of_dict(self, inputs), training))
        images = as_image_tensor(inputs)
        if not self.keeps_dtype and images.dtype != self.compute_dtype:
            images = cast(images, self.compute_dtype)
        single = images.ndim == 3
        if single:
            images = expand_dims(images, 0)
        if self.data_format == "channels_first":
            images = transpose(images, (0, 2, 3, 1))
        images = self.transform(images, bool(training))
        if self.data_format == "channels_first":
            images = transpose(images, (0, 3, 1, 2))
        return squeeze(images, 0) if single else images

    def transform(self, images, training):
        """The layer's work on a channels-last batch (batch, height, width, channels)."""
        raise NotImplementedError

    def _call_with_boxes(self, inputs, training):
        """Keras 3's dict with ``bounding_boxes``: the images and the boxes through one
        ``transform_with_boxes`` (one draw; the boxes unchanged where ``keeps_boxes``), the
        other entries unchanged."""
        require_box_format(self)
        images = as_image_tensor(images_of_dict(self, inputs, boxes=True))
        if not self.keeps_dtype and images.dtype != self.compute_dtype:
            images = cast(images, self.compute_dtype)
        single = images.ndim == 3
        boxes = densify(self, inputs["bounding_boxes"], single)
        if single:
            images = expand_dims(images, 0)
        if self.data_format == "channels_first":
            images = transpose(images, (0, 2, 3, 1))
        if self.keeps_boxes:
            images = self.transform(images, training)
        else:
            images, boxes = self.transform_with_boxes(images, boxes, training)
        if self.data_format == "channels_first":
            images = transpose(images, (0, 3, 1, 2))
        return dict(inputs, images=squeeze(images, 0) if single else images, bounding_boxes=undensify(boxes, single))

    def _spatial_axes(self, input_shape):
        """The (height, width) axes of ``input_shape`` (rank 3 or 4) in this layer's format."""
        first = len(input_shape) - 3
        return (first, first + 1) if self.data_format == "channels_last" else (first + 1, first + 2)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = {**super().get_config(), "data_format": self.data_format}
        if self.bounding_box_format is not None:
            config["bounding_box_format"] = self.bounding_box_format
        return config


def require_box_format(layer):
    """Keras's error for a dict with bounding boxes given to a layer without a box format."""
    if not layer.bounding_box_format:
        raise ValueError("You passed an input with a 'bounding_boxes' key, but you didn't specify a bounding box "
                         f"format. Pass a `bounding_box_format` argument to your {type(layer).__name__} layer, "
                         "e.g. `bounding_box_format='xyxy'`.")


def images_of_dict(layer, inputs, boxes=False):
    """The images of Keras 3's dict input ``{"images": ..., "labels": ...}`` (the labels pass
    unchanged through a layer that does not mix images); ``bounding_boxes`` only where
    ``boxes`` (a layer that moves them); segmentation masks are refused, as minikeras's image
    layers do not transform them."""
    name = f"{type(layer).__name__} '{layer.name}'"
    if "images" not in inputs:
        raise ValueError(f"{name} expects a dict with an 'images' entry (and optionally 'labels'); received keys "
                         f"{sorted(inputs)}")
    extra = sorted(set(inputs) - {"images", "labels"} - ({"bounding_boxes"} if boxes else set()))
    if extra:
        raise NotImplementedError(f"{name} transforms 'images' and 'labels'; it does not carry {extra} here "
                                  "(bounding boxes go through RandomFlip, RandomTranslation, RandomRotation, "
                                  "RandomZoom, RandomShear, RandomPerspective, RandomCrop, MixUp, Resizing, CenterCrop "
                                  "and the colour layers; segmentation masks through none of minikeras's image "
                                  "layers)")
    return inputs["images"]


class RandomImageLayer(ImagePreprocessingLayer):
    """A random layer: transforms when ``training`` is True or not given (Keras's default for
    these layers: a direct call augments); ``fit`` passes True, ``evaluate``/``predict`` False."""

    def call(self, inputs, training=None):
        return super().call(inputs, training=training is not False)


def uniform(seed, shape, low, high):
    """float32 draws in [low, high) from ``mk.random``'s generator, as a jax array (for the
    transform matrices, which carry no gradient)."""
    return jax.random.uniform(next_key(seed), shape, "float32", low, high)


def symmetric_factor(factor, bounds, message):
    """Keras's factor: a number f gives (max(-|f|, bounds[0]), |f|); a pair is sorted."""
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(f"{message}Received: factor={factor}")
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(f"{message}Received: factor={factor}")
        return (max(-abs(factor), bounds[0]), abs(factor))
    raise ValueError(f"{message}Received: factor={factor}")
