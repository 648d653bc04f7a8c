"""Keras 3's ``MaxNumBoundingBoxes``: a batch's bounding boxes cut or padded to a fixed number,
so that batches of images with different numbers of boxes stack."""
from minikeras.layers.preprocessing.image_augment_base import TakesImageDicts
from minikeras.layers.preprocessing.image_base import ImagePreprocessingLayer
from minikeras.ops.array import pad, slice_along

BOX_KEYS = ("boxes", "labels")


class MaxNumBoundingBoxes(TakesImageDicts, ImagePreprocessingLayer):
    """Cuts or pads ``bounding_boxes`` to ``max_number`` boxes per image.

    Takes Keras 3's dict ``{"images": (batch, h, w, c), "bounding_boxes": {"boxes": (batch, n,
    4), "labels": (batch, n)}, ...}`` and returns it with the first ``max_number`` boxes and
    labels of each image, padded with ``fill_value`` where there are fewer; the images and
    other entries pass unchanged (an image or a batch alone is returned as it is).

    Args:
      max_number: the number of boxes per image.
      fill_value: the padding of boxes and labels (-1 by default).

    >>> out = mk.layers.MaxNumBoundingBoxes(3)({"images": np.zeros((2, 8, 8, 3)), "bounding_boxes": {
    ...     "boxes": np.ones((2, 1, 4)), "labels": np.ones((2, 1))}})
    >>> out["bounding_boxes"]["labels"].numpy()[0]
    array([ 1., -1., -1.], dtype=float32)
    """

    keeps_dtype = True

    def __init__(self, max_number, fill_value=-1, **kwargs):
        super().__init__(**kwargs)
        self.max_number = int(max_number)
        if self.max_number < 1:
            raise ValueError(f"MaxNumBoundingBoxes: `max_number` should be a positive integer. Received: "
                             f"max_number={max_number}")
        self.fill_value = int(fill_value)

    def call(self, inputs, training=None):
        if not isinstance(inputs, dict) or "bounding_boxes" not in inputs:
            return inputs
        boxes = inputs["bounding_boxes"]
        extra = sorted(set(boxes) - set(BOX_KEYS)) if isinstance(boxes, dict) else None
        if extra is None or extra or "boxes" not in boxes or "labels" not in boxes:
            raise KeyError(f"MaxNumBoundingBoxes '{self.name}': `bounding_boxes` should be a dict of 'boxes' (batch, "
                           f"n, 4) and 'labels' (batch, n); received {boxes if extra is None else sorted(boxes)}")
        box_shape, label_shape = tuple(boxes["boxes"].shape), tuple(boxes["labels"].shape)
        if len(box_shape) != 3 or box_shape[-1] != 4 or label_shape != box_shape[:2]:
            raise ValueError(f"MaxNumBoundingBoxes '{self.name}' expects boxes of shape (batch, n, 4) and labels of "
                             f"shape (batch, n); received boxes of shape {box_shape} and labels of shape "
                             f"{label_shape}")
        return dict(inputs, bounding_boxes={"boxes": self._cut_or_pad(boxes["boxes"]),
                                            "labels": self._cut_or_pad(boxes["labels"])})

    def _cut_or_pad(self, values):
        count = values.shape[1]
        if count > self.max_number:
            return slice_along(values, 1, 0, self.max_number)
        paddings = [[0, 0], [0, self.max_number - count]] + [[0, 0]] * (values.ndim - 2)
        return pad(values, paddings, constant_values=self.fill_value)

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, dict) and "bounding_boxes" in input_shape:
            boxes = input_shape["bounding_boxes"]
            boxes = {"boxes": (boxes["boxes"][0], self.max_number) + tuple(boxes["boxes"][2:]),
                     "labels": (boxes["labels"][0], self.max_number)}
            return dict(input_shape, bounding_boxes=boxes)
        return input_shape

    def get_config(self):
        return {**super().get_config(), "max_number": self.max_number, "fill_value": self.fill_value}
