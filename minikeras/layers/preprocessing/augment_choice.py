"""One of several augmentations, chosen by a drawn index, for RandAugment and AugMix."""
import jax

from minikeras.ops.math import where
from minikeras.tensor import Tensor


def apply_chosen(index, layers, images):
    """``layers[index].transform(images, True)`` for a drawn scalar ``index`` (a jax array);
    an index of ``len(layers)`` or more keeps the images. A known index runs one layer; a
    traced one (inside ``mk.function``) runs them all and keeps the chosen result, so the choice
    is drawn anew at every call of the compiled function."""
    if not isinstance(index, jax.core.Tracer):
        chosen = int(index)
        return layers[chosen].transform(images, True) if chosen < len(layers) else images
    for position, layer in enumerate(layers):
        images = where(Tensor(index == position), layer.transform(images, True), images)
    return images
