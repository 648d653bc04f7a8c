"""How minikeras compiles its programs: ``jit`` is ``jax.jit`` plus one XLA:CPU setting.

jax 0.10's XLA:CPU hands matmuls, reductions and convolutions to YNNPACK. For the convolutions
of small CNNs that is the slow choice: YNNPACK runs them on one thread, and XLA's own (Eigen)
convolution runs them on all cores: for the Keras MNIST CNN's layers Eigen's convolution and its
filter gradient beat the fastest formulation found for YNNPACK in wall time (benchmarks/conv.py;
figures in benchmarks/LOG.md), and so does the whole training step. So every
program minikeras compiles at run time (``mk.function``, ``fit``'s steps, the compiled
backward pass of eager tapes, ``mk.distribute``) goes through ``jit``: on the CPU backend it is
compiled with YNNPACK kept for matmuls and reductions and convolutions left to Eigen, and it is
traced with the context value ``convolutions_on_eigen`` True, so that ``xla_cpu.conv`` picks
the formulations that are fastest on Eigen. Elsewhere (GPU/TPU, or a jaxlib without the
setting) ``jit`` is plain ``jax.jit`` and ``convolutions_on_eigen`` stays False.

The setting is an absolute list (jax's compile options cannot remove one entry): the list
jax 0.10 uses by default minus convolutions, checked equal to XLA_FLAGS'
``--xla_cpu_experimental_ynn_fusion_type=-individual_convolution`` on the MNIST CNN's program.
"""
import contextlib
import contextvars
import functools
import itertools

import jax
import numpy as np

CPU_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type":
               "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_REDUCE"}

# Where XLA:CPU runs the convolutions of the program being traced now: True (Eigen) while
# ``jit`` traces a program it compiles with ``CPU_OPTIONS``; False (YNNPACK, jax's default)
# everywhere else -- eager ops, a user's own ``jax.jit``, ``jit`` off the CPU. The functions
# of ``xla_cpu.conv`` take it as their ``eigen`` argument and default to this value. A
# ContextVar, so each thread (jax traces in the calling thread) sees its own.
convolutions_on_eigen = contextvars.ContextVar("convolutions_on_eigen", default=False)


@functools.lru_cache(maxsize=None)
def cpu_options():
    """``CPU_OPTIONS`` when the default backend is the CPU and this jaxlib accepts them, else None."""
    if jax.default_backend() != "cpu":
        return None
    try:
        jax.jit(lambda x: x + 1, compiler_options=CPU_OPTIONS).lower(np.float32(0)).compile()
    except Exception:  # noqa: BLE001 - an older or newer jaxlib without this option: compile as jax does
        return None
    return CPU_OPTIONS


def jit(fun, **kwargs):
    """``jax.jit(fun, **kwargs)``, compiled with ``cpu_options()`` and traced with
    ``convolutions_on_eigen`` True where those options apply; otherwise plain ``jax.jit``.

    Called inside another jax trace (a user's ``jax.jit``, ``vmap``, ...), the result runs as
    plain ``jax.jit(fun)`` would: jax takes compiler options on top-level jits only, and the
    enclosing program decides where its convolutions run. Asks for the backend, so call it
    when a program is first needed, not at import.

    >>> double = jit(lambda x: 2 * x)
    >>> double(np.float32(3.0))
    Array(6., dtype=float32)
    """
    options = cpu_options()
    if options is None:
        return jax.jit(fun, **kwargs)

    @functools.wraps(fun)
    def traced(*args, **kw):
        with tracing_as_jit():
            return fun(*args, **kw)

    return _TopLevelOptions(jax.jit(traced, compiler_options=options, **kwargs), jax.jit(fun, **kwargs))


@contextlib.contextmanager
def tracing_as_jit():
    """Sets ``convolutions_on_eigen`` as ``jit`` does while it traces: for code that traces a
    function itself (``mk.function`` traces once into a jaxpr) and compiles it with ``jit`` later."""
    token = convolutions_on_eigen.set(cpu_options() is not None)
    try:
        yield
    finally:
        convolutions_on_eigen.reset(token)


def call_into(box, jitted, args):
    """Appends ``jitted(*args)`` (a function from ``jit``) to the list ``box`` from C: no Python
    bytecode runs between the call returning and the append, so a KeyboardInterrupt raised as
    the call returns cannot drop its results. For compiled calls that donate their inputs
    (``programs.donation``), whose results are then the only copy of the state."""
    top = jitted._top if isinstance(jitted, _TopLevelOptions) else jitted
    try:
        box.extend(itertools.starmap(top, (args,)))
    except ValueError as error:
        if top is jitted or _NESTED_OPTIONS_ERROR not in str(error):
            raise
        box.extend(itertools.starmap(jitted._nested, (args,)))  # inside another jax trace


class _TopLevelOptions:
    """A jitted function with compiler options, and the same without them for calls inside
    another jax trace (jax accepts compiler options on top-level jits only, and the enclosing
    program decides where its convolutions run). Attributes (``trace``, ``lower``, ...) are
    the top-level one's."""

    __slots__ = ("_top", "_nested")

    def __init__(self, top, nested):
        self._top = top
        self._nested = nested

    def __call__(self, *args, **kwargs):
        try:
            return self._top(*args, **kwargs)
        except ValueError as error:
            if _NESTED_OPTIONS_ERROR not in str(error):
                raise
        return self._nested(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._top, name)


_NESTED_OPTIONS_ERROR = "can only be passed to top-level"
