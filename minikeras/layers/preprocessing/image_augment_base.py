"""What Keras 3's newer augmentation layers share beyond ``image_base``: a draw split from its
use, and Keras's dict inputs.

Each layer draws a *transformation* for a batch (``get_random_transformation(shape)``: a dict
of jax arrays, named as Keras 3 names them) and applies it (``transform_images(images,
transformation)`` on a channels-last batch, ``transform_labels(labels, transformation)``), as
Keras 3's layers do; so a transformation Keras drew can be applied here and compared.

Inputs are an image or a batch, or Keras 3's dict ``{"images": ..., "labels": ...}``: the
images and the labels go through one draw (MixUp and CutMix mix the labels with the images) and
the dict comes back with both replaced. The layers that move no pixel (``keeps_boxes``: the
colour layers, blur, erasing, AugMix) pass a dict's ``bounding_boxes`` through, as Keras 3's;
those with a ``transform_bounding_boxes(bounding_boxes, transformation)`` (Keras's name; the
transformation with the batch's ``input_shape`` added) move them by the images' draw; the
others refuse them, and all refuse ``segmentation_masks``, with an error that says so.
"""
import functools

from minikeras.image.resizing import as_image_tensor
from minikeras.layers.preprocessing.image_base import (
    RandomImageLayer,
    images_of_dict,
    require_box_format,
    symmetric_factor,
)
from minikeras.layers.preprocessing.image_boxes import densify, undensify
from minikeras.ops.array import expand_dims, squeeze, transpose
from minikeras.ops.elementwise import cast
from minikeras.ops.jax_call import call_jax
from minikeras.tensor import Tensor, to_array


def probability_factor(factor, layer):
    """Keras 3's ``factor`` of these layers: a probability range in [0, 1]; a number f gives
    (0, f), a pair is sorted. Each image is transformed when a uniform draw falls below a
    probability drawn in that range."""
    return symmetric_factor(factor, (0, 1), f"{layer}: The `factor` argument should be a number (or a list of two "
                                            "numbers) in the range [0, 1]. ")


def _single_output(fn, params, *arrays):
    return (fn(*arrays, **params),)


def jax_image_op(name, fn, inputs, constant=(), **params):
    """``fn(*arrays, **params)`` (a pure jax function of the inputs' arrays, one output; the
    params hashable) as one recorded op, compiled once per params when eager."""
    key = (name, fn.__module__, fn.__qualname__, tuple(sorted(params.items())))
    return call_jax(functools.partial(_single_output, fn, params), inputs, name=name, constant=constant, key=key)[0]


class TakesImageDicts:
    """Mixed into an image layer: Keras 3's dict inputs, nested ones included, are converted to
    Tensors entry by entry."""

    def _convert_inputs(self, inputs):
        if isinstance(inputs, dict):  # Keras's dicts nest: {"bounding_boxes": {"boxes": ..., "labels": ...}}
            return {key: self._convert_inputs(value) for key, value in inputs.items()}
        return super()._convert_inputs(inputs)



class AugmentationLayer(TakesImageDicts, RandomImageLayer):
    """Base of the layers that draw a transformation and apply it to images (and labels)."""

    def get_random_transformation(self, shape):
        """The draws for a channels-last batch of ``shape``: a dict of jax arrays."""
        raise NotImplementedError

    def transform_images(self, images, transformation):
        """``images`` (a channels-last batch Tensor) transformed by ``transformation``."""
        raise NotImplementedError

    def transform_labels(self, labels, transformation):
        """``labels`` (batch, ...) for the transformed images; unchanged unless images mix."""
        return labels

    def transform(self, images, training):
        if not training:
            return images
        return self.transform_images(images, self.get_random_transformation(tuple(images.shape)))

    def call(self, inputs, training=None):
        if not isinstance(inputs, dict):
            return super().call(inputs, training=training)
        return self._call_on_dict(inputs, training is not False)

    def _call_on_dict(self, inputs, training):
        moves_boxes = hasattr(self, "transform_bounding_boxes")  # Keras's name: the layer moves boxes with pixels
        images = as_image_tensor(images_of_dict(self, inputs, boxes=self.keeps_boxes or moves_boxes))
        if images.dtype != self.compute_dtype:
            images = cast(images, self.compute_dtype)
        single = images.ndim == 3
        labels = inputs.get("labels")
        if labels is not None:
            labels = labels if isinstance(labels, Tensor) else Tensor(to_array(labels))
            if not single and (labels.ndim == 0 or labels.shape[0] != images.shape[0]):
                raise ValueError(f"{type(self).__name__} '{self.name}' expects one label per image; received labels "
                                 f"of shape {tuple(labels.shape)} for images of shape {tuple(images.shape)}")
            if single:
                labels = expand_dims(labels, 0)
        if single:
            images = expand_dims(images, 0)
        if self.data_format == "channels_first":
            images = transpose(images, (0, 2, 3, 1))
        boxes = None
        if "bounding_boxes" in inputs:  # made float32 and batched, as Keras's densify_bounding_boxes
            require_box_format(self)
            boxes = densify(self, inputs["bounding_boxes"], single)
        if training:
            transformation = self.get_random_transformation(tuple(images.shape))
            if boxes is not None and moves_boxes:
                boxes = self.transform_bounding_boxes(boxes, dict(transformation, input_shape=tuple(images.shape)))
            images = self.transform_images(images, transformation)
            if labels is not None:
                labels = self.transform_labels(labels, transformation)
        if self.data_format == "channels_first":
            images = transpose(images, (0, 3, 1, 2))
        outputs = dict(inputs, images=squeeze(images, 0) if single else images)
        if labels is not None:
            outputs["labels"] = squeeze(labels, 0) if single else labels
        if boxes is not None:
            outputs["bounding_boxes"] = undensify(boxes, single)
        return outputs
