"""minikeras' speed work for jax's CPU backend (XLA:CPU), in one place.

What makes minikeras train small CNNs faster than hand-written jax on the CPU (both with the
malloc setting ``import minikeras`` makes; benchmarks/train_step.py measures it) is specific to XLA:CPU and to the jax
version it was measured with, so it lives here, apart from the framework:

- ``compiler``: ``jit``, the entry point every program minikeras compiles goes through
  (``from minikeras.xla_cpu import jit``). On the CPU backend it compiles with convolutions
  on XLA's own Eigen code (jax 0.10 gives them to single-threaded YNNPACK) and traces with
  ``compiler.convolutions_on_eigen`` True; on other backends it is plain ``jax.jit``.
- ``conv``: conv2d and its two gradients: on the native kernels below where they apply,
  otherwise formulated by shape for the library that will run them (Eigen inside minikeras'
  programs, YNNPACK elsewhere); plain ``lax.conv_general_dilated`` off the CPU.
- ``depthwise``: depthwise convolutions (MobileNet's, Xception's) and both their gradients as
  sums of shifted slices that XLA fuses into elementwise loops and reductions, instead of XLA's
  grouped convolution, an order of magnitude slower on the CPU.
- ``pool``: max/avg pooling gradients without XLA's slow CPU ``select_and_scatter``.
- ``dropout``: keep-masks from an unrolled threefry (``jax.random.bernoulli``'s bits).
- ``conv_native``, ``matmul_native``, ``materialize``: minikeras' own CPU kernels, called from
  compiled programs through XLA's FFI: the convolutions (forward, input and filter gradients)
  and the Dense weight gradient ``x.T @ g`` closer to GEMM speed than XLA's own (benchmarks/conv.py),
  and an identity that keeps XLA from fusing a costly producer into each of its reads.
  ``native_build`` compiles their C++ sources (``*.cc``) for the machine on first use and keeps
  them in ``~/.minikeras/native``; without a C++ compiler, or with ``MINIKERAS_NATIVE=0``,
  everything runs on XLA's kernels instead, with the same results up to float32 rounding.
- ``host_memory``: glibc keeps XLA's large per-step buffers (made at ``import minikeras``;
  ``mk.config.reuse_freed_host_memory``, ``MINIKERAS_REUSE_HOST_MEMORY=0``).
- ``tuning``: every measured threshold of the above, with the jax version, machine and command; the
  table to re-measure (benchmarks/conv.py, benchmarks/pool_dropout.py) when jax changes.

Each formulation in ``conv``, ``depthwise``, ``pool`` and ``dropout`` computes what its plain jax counterpart
does (the tests check them against it), and off the CPU they are that counterpart; so where this
no longer pays (another backend, another jax), dropping it changes speed, not results.
"""
from minikeras.xla_cpu.compiler import jit  # noqa: F401  (the entry point other modules import)

__all__ = ["jit"]
