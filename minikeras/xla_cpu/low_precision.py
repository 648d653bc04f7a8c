"""Products (matmuls, convolutions) of bfloat16 and float16 arrays on XLA:CPU.

A mixed-precision layer computes in bfloat16: its matmuls and convolutions take bfloat16
inputs and accumulate in float32, then round the result to bfloat16. Where that is fast
depends on the CPU and on the kernel (``tuning.BF16_DOT_ON_XLA``, ``tuning.BF16_CONV_NATIVE``,
``tuning.BF16_CONV_ON_XLA``):

- a matmul runs as XLA's bfloat16 dot with float32 accumulation on CPUs with AVX512_BF16 or
  AMX (twice the float32 GEMM rate there);
- a convolution runs on minikeras's bfloat16 kernels (``conv_bf16_native``, chosen in
  ``xla_cpu.conv``) on CPUs with AVX512_BF16, for the shapes they take;
- elsewhere, and for other convolutions (whose float32 native kernels beat XLA's bfloat16
  ones), the inputs are widened to float32, the float32 kernel runs, and the result is rounded
  back.

Both give the same values up to the order of the float32 sums (bfloat16 numbers are float32
numbers), so a program runs everywhere with the results it has where the hardware is fast. A
CPU without bfloat16 instructions gets one warning that names the missing feature. float16 is
always widened on the CPU (no CPU here has fast float16 arithmetic). Off the CPU, XLA's own
low-precision kernels run.
"""
import functools
import warnings

import jax
import jax.numpy as jnp
from jax import lax

from minikeras.xla_cpu import tuning
from minikeras.xla_cpu.materialize import materialize

BFLOAT16 = jnp.dtype(jnp.bfloat16)
FLOAT16 = jnp.dtype(jnp.float16)
BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # /proc/cpuinfo's names of the instructions that make it fast


def is_low(dtype):
    """Whether ``dtype`` is bfloat16 or float16."""
    return jnp.dtype(dtype) in (BFLOAT16, FLOAT16)


def with_widened(narrow, wide):
    """Returns ``narrow`` (a bfloat16 or float16 array) and remembers ``wide``, a float32 array of
    the same values, for ``astype``: a kernel that writes its rounded result widened (the gradient
    of a float32 weight read in bfloat16 is widened right after the product) spares XLA:CPU the
    pass that widens it, and the narrow array, converted from the wide one, is only computed where
    something else reads it. Only the last few are remembered (``astype`` follows at once, in the
    same trace: an eager op's jit sees arrays of its own, so there nothing is found)."""
    _widened[id(narrow)] = (narrow, wide)
    while len(_widened) > _WIDENED_KEPT:
        _widened.pop(next(iter(_widened)))
    return narrow


def astype(x, dtype):
    """``x.astype(dtype)``; for float32 of an array made by ``with_widened``, its remembered float32
    array (the same values: widening a bfloat16 or float16 number is exact)."""
    entry = _widened.get(id(x))
    if entry is not None and entry[0] is x and jnp.dtype(dtype) == jnp.float32:
        del _widened[id(x)]  # used once (a cast's gradient); not kept alive past it
        return entry[1]
    return x.astype(dtype)


_widened = {}  # id(narrow array) -> (narrow, wide), oldest first
_WIDENED_KEPT = 4


def keep_where(mask, value):
    """``jnp.where(mask, value, 0)``; for bfloat16 and float16 on the 16-bit patterns, which gives
    the same bits: XLA:CPU widens a low-precision select to float32 and rounds it back, a convert
    each way for every element, where a select of int16 moves the bits as they are. Differentiable
    in ``value`` as ``jnp.where`` is (jax's own rules would see no derivative through the int16
    bitcasts)."""
    if not is_low(value.dtype):
        return jnp.where(mask, value, jnp.zeros((), value.dtype))
    return _keep_where_bits(mask, value)


@jax.custom_jvp
def _keep_where_bits(mask, value):
    bits = lax.bitcast_convert_type(value, jnp.int16)
    return lax.bitcast_convert_type(jnp.where(mask, bits, jnp.zeros((), jnp.int16)), value.dtype)


@_keep_where_bits.defjvp
def _keep_where_bits_jvp(primals, tangents):
    mask, value = primals
    return _keep_where_bits(mask, value), jnp.where(mask, tangents[1], jnp.zeros((), value.dtype))


@functools.cache
def cpu_flags():
    """The CPU's feature flags (``/proc/cpuinfo``); empty where that file does not exist."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


@functools.cache
def cpu_vendor():
    """The CPU's vendor (``/proc/cpuinfo``'s vendor_id: 'AuthenticAMD', 'GenuineIntel'); '' where unknown."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def bf16_hardware():
    """Whether this CPU has bfloat16 dot-product instructions (AVX512_BF16 or AMX)."""
    return any(flag in cpu_flags() for flag in BF16_FLAGS)


def dot_path(dtype):
    """How a matmul of ``dtype`` inputs runs here: 'xla' (its own dtype, float32 accumulation)
    or 'float32' (widened). The answer for bfloat16 on the CPU is what the benchmark prints."""
    if jax.default_backend() != "cpu":
        return "xla"
    if jnp.dtype(dtype) == BFLOAT16 and tuning.BF16_DOT_ON_XLA and bf16_hardware():
        return "xla"
    return "float32"


def _swapped(x, for_bf16_dot):
    """``x`` with its last two axes swapped; for XLA:CPU's bfloat16 dot, in a buffer of its own
    (``materialize``): XLA:CPU widens a bfloat16 dot to float32 when an operand reaches it
    transposed (``g @ w.T``, ``x.T @ g``: a Dense layer's gradients), and runs the same product
    about 3x faster on a row-major copy made first."""
    swapped = jnp.swapaxes(x, -1, -2)
    return materialize(swapped) if for_bf16_dot and jax.default_backend() == "cpu" else swapped


def matmul(a, b, transpose_a=False, transpose_b=False):
    """``a @ b`` (each optionally transposed in its last two axes) of two bfloat16 (or float16)
    arrays: float32 accumulation, rounded to their dtype."""
    dtype = a.dtype
    on_xla = dot_path(dtype) == "xla"
    a = _swapped(a, on_xla) if transpose_a else a
    b = _swapped(b, on_xla) if transpose_b else b
    if on_xla:
        return jnp.matmul(a, b, preferred_element_type=jnp.float32).astype(dtype)
    _warn_widened(dtype)
    return jnp.matmul(a.astype(jnp.float32), b.astype(jnp.float32)).astype(dtype)


def einsum(equation, *arrays):
    """``jnp.einsum`` of bfloat16 (or float16) arrays, as ``matmul``: float32 accumulation, rounded."""
    dtype = arrays[0].dtype
    if dot_path(dtype) == "xla":
        return jnp.einsum(equation, *arrays, preferred_element_type=jnp.float32).astype(dtype)
    _warn_widened(dtype)
    return jnp.einsum(equation, *[a.astype(jnp.float32) for a in arrays]).astype(dtype)


def conv_in_float32(kernel, x, w, *rest):
    """``kernel(x, w, *rest)`` (a float32 convolution kernel) on widened arrays, rounded back to
    ``x``'s dtype: the convolutions of a bfloat16 layer, unless ``tuning.BF16_CONV_ON_XLA``."""
    dtype = x.dtype
    _warn_widened(dtype)
    widened = [v.astype(jnp.float32) if is_low(v.dtype) else v for v in (x, w) + rest]
    return kernel(*widened).astype(dtype)


def conv_widened(dtype):
    """Whether a convolution of ``dtype`` arrays runs widened to float32 here."""
    return is_low(dtype) and jax.default_backend() == "cpu" and not (
        jnp.dtype(dtype) == BFLOAT16 and tuning.BF16_CONV_ON_XLA and bf16_hardware())


_warned = []


def _warn_widened(dtype):
    if _warned or jnp.dtype(dtype) != BFLOAT16 or bf16_hardware():
        return
    _warned.append(True)
    warnings.warn("bfloat16 compute (a 'mixed_bfloat16' policy) runs in float32 on this CPU: it lacks AVX512_BF16 "
                  "and AMX (the 'avx512_bf16' / 'amx_bf16' CPU flags), so bfloat16 products are computed on "
                  "float32 kernels. The results are those of a CPU with them; the speed is float32's plus the casts.",
                  UserWarning, stacklevel=2)


def describe():
    """One line saying how bfloat16 products run here (``mk.config.bfloat16_products()``)."""
    if jax.default_backend() != "cpu":
        return f"XLA's bfloat16 kernels on {jax.default_backend()}"
    flags = [flag for flag in BF16_FLAGS if flag in cpu_flags()]
    dots = "XLA bfloat16 dot" if dot_path(BFLOAT16) == "xla" else "float32 fallback"
    if not conv_widened(BFLOAT16):
        convs = "XLA bfloat16"
    elif (tuning.BF16_CONV_NATIVE and "avx512_bf16" in cpu_flags()
          and cpu_vendor() in tuning.BF16_CONV_NATIVE_VENDORS):
        # the conditions of matmul_bf16_native.supported / supported_nt too (where the kernels built)
        dots += " (Dense weight and input gradients on minikeras's bfloat16 kernels)"
        convs = "minikeras's bfloat16 kernels for the shapes they take, others widened to the float32 kernels"
    else:
        convs = "widened to the float32 kernels"
    return (f"matmuls: {dots}; convolutions: {convs} "
            f"(CPU flags: {' '.join(flags) if flags else 'neither avx512_bf16 nor amx_bf16'})")
