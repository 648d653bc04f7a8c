"""Image ops that are linear (or affine) in the image: a pair of primitives, each the other's
gradient, so that gradients of any order flow back to the pixels.

``linear_image_op(name, forward)`` wraps ``forward(image, *aux, **static)``, where ``aux`` are
arrays that carry no gradient (a batch of transform matrices) and the keyword-only ``static``
parameters are hashable. The image's gradient is the transpose of the map ``image -> forward``
with its constant term (a fill value) set to zero; the transpose's gradient is that map again.
"""
import jax
import jax.numpy as jnp

from minikeras.ops.primitive import Primitive


def linear_image_op(name, forward, affine_param=None):
    """``forward`` as a differentiable op (a ``Primitive``), called ``op(image, *aux, **static)``.

    Args:
      name: the op's name (errors, "why is this gradient None").
      forward: ``forward(image, *aux, **static)`` on jax arrays, linear in ``image`` up to a
        constant term that vanishes when the static parameter ``affine_param`` is 0.
      affine_param: the name of that parameter (e.g. ``fill_value``), if any.
    """
    def linear_part(static):
        if affine_param is not None and static.get(affine_param):
            return dict(static, **{affine_param: 0.0})
        return static

    def transposed(g, *aux, image_shape, image_dtype, static):
        zeros = jnp.zeros(image_shape, image_dtype)
        _, pullback = jax.vjp(lambda x: forward(x, *aux, **linear_part(dict(static))), zeros)
        return pullback(g.astype(image_dtype))[0]

    forward_prim = Primitive(name, forward)
    transpose_prim = Primitive(f"{name}_transpose", transposed)

    @forward_prim.defgrad
    def _(g, out, image, *aux, **static):
        grad = transpose_prim(g, *aux, image_shape=tuple(image.shape), image_dtype=image.dtype.name,
                              static=tuple(sorted(static.items())))
        return (grad,) + (None,) * len(aux)

    @transpose_prim.defgrad
    def _(g, out, cotangent, *aux, image_shape, image_dtype, static):
        return (forward_prim(g, *aux, **linear_part(dict(static))),) + (None,) * len(aux)

    return forward_prim
