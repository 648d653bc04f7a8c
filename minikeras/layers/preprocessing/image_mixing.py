"""Keras 3's ``MixUp`` and ``CutMix``: each image of a batch mixed with another image of the
same batch (a random permutation), and, given Keras's dict ``{"images", "labels"}``, its label
mixed with the same weight."""
import jax
import jax.numpy as jnp

from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, probability_factor
from minikeras.layers.preprocessing.image_base import uniform
from minikeras.layers.preprocessing.image_erasing import box_masks, crop_bounds
from minikeras.ops.array import concat, gather
from minikeras.ops.elementwise import cast
from minikeras.ops.math import where
from minikeras.ops.random import next_key
from minikeras.tensor import Tensor


def _per_example(weights, rank, dtype):
    """(batch,) weights shaped to broadcast over a rank-``rank`` batch."""
    return Tensor(jnp.reshape(jnp.asarray(weights, dtype), (-1,) + (1,) * (rank - 1)))


def mix_labels(labels, transformation, dtype):
    """``w * labels + (1 - w) * labels[permutation]``, per example (Keras 3's label mixing)."""
    labels = cast(labels, dtype) if labels.dtype != dtype else labels
    weight = _per_example(transformation["mix_weight"], labels.ndim, dtype)
    partner = gather(labels, Tensor(jnp.asarray(transformation["permutation_order"], jnp.int32)), axis=0)
    return weight * labels + (1.0 - weight) * partner


class MixUp(AugmentationLayer):
    """MixUp (Zhang et al., 2017): ``w * x + (1 - w) * x[permutation]``, w ~ Beta(alpha, alpha)
    per image; labels given in a dict are mixed with the same w.

    Args:
      alpha: the Beta distribution's parameters (0.2 by default).
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.

    >>> out = mk.layers.MixUp()({"images": np.zeros((4, 8, 8, 3)), "labels": np.eye(4)})
    >>> out["labels"].shape
    (4, 4)
    """

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0:
            raise ValueError(f"MixUp: the `alpha` argument should be a positive number. Received: alpha={alpha}")
        self.alpha = alpha
        self.seed = seed

    def get_random_transformation(self, shape):
        batch = shape[0]
        return {"mix_weight": jax.random.beta(next_key(self.seed), self.alpha, self.alpha, (batch,), jnp.float32),
                "permutation_order": jax.random.permutation(next_key(self.seed), batch)}

    def transform_images(self, images, transformation):
        weight = _per_example(transformation["mix_weight"], 4, images.dtype)
        partner = gather(images, Tensor(jnp.asarray(transformation["permutation_order"], jnp.int32)), axis=0)
        return weight * images + (1.0 - weight) * partner

    def transform_labels(self, labels, transformation):
        return mix_labels(labels, transformation, self.compute_dtype)

    def transform_bounding_boxes(self, bounding_boxes, transformation, training=True):
        """Each image keeps its boxes and gets its partner's after them: boxes (batch, 2n, 4)
        and labels (batch, 2n). (Keras 3.15 means this, but stacks the partners' labels on the
        batch axis, (2 batch, n), so that they no longer match the boxes.)"""
        if not training:
            return bounding_boxes
        order = Tensor(jnp.asarray(transformation["permutation_order"], jnp.int32))
        boxes, labels = bounding_boxes["boxes"], bounding_boxes["labels"]
        return dict(bounding_boxes, boxes=concat([boxes, gather(boxes, order, axis=0)], axis=1),
                    labels=concat([labels, gather(labels, order, axis=0)], axis=1))

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha, "seed": self.seed}


class CutMix(AugmentationLayer):
    """CutMix (Yun et al., 2019): a random box of each image replaced by the same box of another
    image; labels given in a dict are mixed by the share of the image each keeps.

    Args:
      factor: the Beta distribution's parameter a (Beta(a, a), a drawn once per batch in [0, f]
        for a number f in [0, 1], or in a pair's range) of the kept share; the box's sides are
        sqrt(1 - share) of the image's.
      data_format: 'channels_last' (default) or 'channels_first'.
      seed: folded into the draws from ``mk.random``'s generator.
    """

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.factor = probability_factor(factor, "CutMix")
        self.seed = seed

    def get_random_transformation(self, shape):
        batch, height, width = shape[:3]
        alpha = uniform(self.seed, (), *self.factor) + 1e-6
        ratio = jnp.sqrt(1.0 - jax.random.beta(next_key(self.seed), alpha, alpha, (batch,), jnp.float32))
        x0, x1 = crop_bounds(self.seed, batch, width, ratio)
        y0, y1 = crop_bounds(self.seed, batch, height, ratio)
        return {"permutation_order": jax.random.permutation(next_key(self.seed), batch),
                "batch_masks": box_masks(shape, x0, x1, y0, y1),
                "mix_weight": 1.0 - (x1 - x0) * (y1 - y0) / (width * height)}

    def transform_images(self, images, transformation):
        partner = gather(images, Tensor(jnp.asarray(transformation["permutation_order"], jnp.int32)), axis=0)
        return where(Tensor(jnp.asarray(transformation["batch_masks"])), partner, images)

    def transform_labels(self, labels, transformation):
        return mix_labels(labels, transformation, self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor, "seed": self.seed}
