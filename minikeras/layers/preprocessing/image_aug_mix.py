"""Keras 3's ``AugMix``: chains of random augmentations mixed by Dirichlet weights, then
mixed with the original image by a Beta weight (Hendrycks et al., 2020)."""
import jax
import jax.numpy as jnp
import numpy as np

from minikeras.layers.preprocessing.augment_choice import apply_chosen
from minikeras.layers.preprocessing.image_augment_base import AugmentationLayer, probability_factor
from minikeras.layers.preprocessing.image_color_ops import checked_value_range
from minikeras.layers.preprocessing.image_rand_augment import augmentation_layers
from minikeras.ops.math import maximum, minimum
from minikeras.ops.random import next_key, numpy_seed
from minikeras.tensor import Tensor

AUG_MIX_OPS = ("random_shear", "random_translation", "random_rotation", "random_posterization", "solarization",
               "auto_contrast", "equalization")
AUG_MIX_ALL_OPS = AUG_MIX_OPS + ("random_brightness", "random_color_degeneration", "random_contrast",
                                 "random_sharpness")


class AugMix(AugmentationLayer):
    """Mixes ``num_chains`` augmented copies of the batch, then mixes the result with it.

    Each chain applies up to ``chain_depth`` augmentations in turn: at each step one of the
    operations or none is drawn on the host (each equally likely, for the whole batch), as
    Keras 3 draws them with Python's random; here from ``mk.random``'s host stream, so
    ``mk.random.set_seed`` repeats them. As in Keras 3 under ``jit``, a compiled function keeps
    the operations drawn when it was traced (their amounts and the mixing weights are drawn at
    every call); choosing inside the program would compile every operation at every step. The
    chains are summed with weights drawn from Dirichlet(alpha, ...), and the
    output is ``w * images + (1 - w) * chains`` with w drawn from Beta(alpha, alpha), clipped
    to ``value_range``.

    Args:
      value_range: the images' range, (0, 255) by default.
      num_chains: the number of chains, 3 by default.
      chain_depth: the number of steps of each chain, 3 by default.
      factor: the strength of every augmentation, a number f in [0, 1] (the range (0, f)) or a
        pair; 0.3 by default.
      alpha: the Dirichlet and Beta parameter, 1.0 by default.
      all_ops: True (default) to draw among ``AUG_MIX_ALL_OPS``, False among ``AUG_MIX_OPS``
        (without brightness, colour degeneration, contrast and sharpness).
      interpolation: the geometric augmentations' sampling, 'bilinear' (default) or 'nearest'.
      seed: folded into the draws from ``mk.random``'s generator.
      data_format: 'channels_last' (default) or 'channels_first'.

    Its transformation: ``chain_mixing_weights`` (num_chains,), ``weight_sample`` (a scalar)
    and ``layer_idxes`` (num_chains, chain_depth) indices into the operations, where the
    number of operations means no augmentation (Keras 3 lists the chosen layers instead).
    """

    keeps_boxes = True  # moves no pixel: bounding boxes pass unchanged, as in Keras 3

    def __init__(self, value_range=(0, 255), num_chains=3, chain_depth=3, factor=0.3, alpha=1.0, all_ops=True,
                 interpolation="bilinear", seed=None, data_format=None, **kwargs):
        super().__init__(data_format=data_format, **kwargs)
        self.value_range = checked_value_range(value_range, "AugMix", sort=False)
        for name, value in (("num_chains", num_chains), ("chain_depth", chain_depth)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AugMix: `{name}` should be a positive integer. Received: {name}={value}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0:
            raise ValueError(f"AugMix: `alpha` should be a positive number. Received: alpha={alpha}")
        self.num_chains = num_chains
        self.chain_depth = chain_depth
        self.factor = probability_factor(factor, "AugMix")
        self.alpha = alpha
        self.all_ops = all_ops
        self.interpolation = interpolation
        self.seed = seed
        layers = augmentation_layers(self.factor, value_range, interpolation, seed, self.dtype_policy)
        self.augmentations = [layers[name] for name in (AUG_MIX_ALL_OPS if all_ops else AUG_MIX_OPS)]

    def get_random_transformation(self, shape):
        gamma = jax.random.gamma(next_key(self.seed), self.alpha, (self.num_chains,))
        return {"chain_mixing_weights": gamma / jnp.sum(gamma),
                "weight_sample": jax.random.beta(next_key(self.seed), self.alpha, self.alpha),
                "layer_idxes": np.random.default_rng(numpy_seed()).integers(
                    0, len(self.augmentations) + 1, (self.num_chains, self.chain_depth))}

    def transform_images(self, images, transformation):
        dtype = images.dtype.name
        weights = jnp.asarray(transformation["chain_mixing_weights"], dtype)
        mixed = None
        for chain, indices in enumerate(transformation["layer_idxes"]):
            augmented = images
            for index in indices:
                augmented = apply_chosen(index, self.augmentations, augmented)
            term = augmented * Tensor(weights[chain])
            mixed = term if mixed is None else mixed + term
        weight = Tensor(jnp.asarray(transformation["weight_sample"], dtype))
        images = images * weight + mixed * (1.0 - weight)
        return minimum(maximum(images, float(self.value_range[0])), float(self.value_range[1]))

    def get_config(self):
        return {**super().get_config(), "value_range": self.value_range, "num_chains": self.num_chains,
                "chain_depth": self.chain_depth, "factor": self.factor, "alpha": self.alpha,
                "all_ops": self.all_ops, "interpolation": self.interpolation, "seed": self.seed}
