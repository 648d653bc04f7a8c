"""``forward(x, u, pads, out_hw)``: Winograd's F(2x2, 3x3) convolution of ``x`` with a filter
already transformed (``winograd.filter_transform``: (16, C_in, C_out)), on a native CPU kernel
(``winograd_native.cc``) that transforms a block of tiles into a buffer the core's cache holds,
runs the 16 products from it in register tiles and adds each into its tiles' outputs, where the
jax formulation (``winograd.forward``) writes the transformed input and the products to memory and
reads them back. ``supported`` says where it applies (float32, channels in multiples of 16) and
``available()`` builds it on first use (``native_build``). ``filter_grad(x, dy, pads)`` is the
transposed form, the filter gradient's 16 products summed over the tiles. Not differentiable by
themselves: ``xla_cpu.conv`` gives them the convolutions' gradients as rules.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.native_build import register_targets, usable_cpus, why_unavailable

_SOURCE = "winograd_native.cc"
_TARGET = "minikeras_winograd_forward"
_FILTER_GRAD = "minikeras_winograd_filter_grad"


@functools.lru_cache(maxsize=None)
def available():
    """True when the kernel is built for this machine and registered with XLA:CPU."""
    return register_targets(_SOURCE, {_TARGET: "MinikerasWinogradForward",
                                      _FILTER_GRAD: "MinikerasWinogradFilterGrad"})


def unavailable_reason():
    """Why ``available()`` is False ('' when it is True or was not asked)."""
    return why_unavailable(_SOURCE)


def supported(x_shape, c_out, dtype):
    """Whether the kernel takes an input of ``x_shape`` (NHWC, concrete) and ``c_out`` output channels:
    float32, channels in multiples of 16 and at most ``tuning.WINOGRAD_NATIVE_MAX_CHANNELS`` (beyond,
    a block's share of the transformed filter outgrows the core's cache and the jax formulation's
    batched products win)."""
    return (tuning.NATIVE_KERNELS and jax.default_backend() == "cpu" and jnp.dtype(dtype) == jnp.float32
            and len(x_shape) == 4 and all(type(d) is int for d in x_shape)
            and x_shape[3] % 16 == 0 and c_out % 16 == 0
            and max(x_shape[3], c_out) <= tuning.WINOGRAD_NATIVE_MAX_CHANNELS)


def block_tiles(c_in):
    """Tiles per block: as many as keep the block's transformed input (16 x tiles x c_in floats)
    within ``tuning.WINOGRAD_BLOCK_BYTES``, in whole register tiles of 12, at most 96."""
    tiles = tuning.WINOGRAD_BLOCK_BYTES // (16 * 4 * c_in)
    return int(max(12, min(96, tiles // 12 * 12)))


def forward(x, u, pads, out_hw):
    """(N, out_h, out_w, C_out): the convolution of ``x`` (N, H, W, C_in) with the filter whose
    transform is ``u`` (16, C_in, C_out), stride 1, ``pads`` ((top, bottom), (left, right)) each 0 to 2
    (the bottom and right ones are implied by ``out_hw``)."""
    out = jax.ShapeDtypeStruct((x.shape[0], *out_hw, u.shape[2]), x.dtype)
    return jax.ffi.ffi_call(_TARGET, out, vmap_method="sequential")(
        x, u.astype(x.dtype), pad_top=np.int64(pads[0][0]), pad_left=np.int64(pads[1][0]),
        block_tiles=np.int64(block_tiles(x.shape[3])), threads=np.int64(usable_cpus()))


def filter_grad(x, dy, pads):
    """(16, C_in, C_out): the transformed filter gradient of the convolution of ``x`` (N, H, W, C_in)
    with ``pads`` for the output cotangent ``dy`` (N, out_h, out_w, C_out): the sum over the tiles
    of each frequency's transformed input times the transformed cotangent, ``V_p^T dM_p`` (the
    filter's gradient is ``winograd.filter_transform_transposed`` of it). Summed in parts of a fixed
    number of tiles added in order: the same bits whatever the threads."""
    c_in, c_out = x.shape[3], dy.shape[3]
    out = jax.ShapeDtypeStruct((16, c_in, c_out), x.dtype)
    return jax.ffi.ffi_call(_FILTER_GRAD, out, vmap_method="sequential")(
        x, dy.astype(x.dtype), pad_top=np.int64(pads[0][0]), pad_left=np.int64(pads[1][0]),
        threads=np.int64(usable_cpus()))
