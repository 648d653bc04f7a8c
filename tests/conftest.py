"""Shared helpers for the op tests: gradients of minikeras ops checked against JAX.

``check_grad(mk_fn, jnp_fn, *inputs)`` compares, for the same inputs,
  * the forward value of ``mk_fn`` (on mk Tensors) with ``jnp_fn`` (on arrays),
  * the first-order gradient from ``GradientTape`` (with a random output cotangent ``w``)
    with ``jax.vjp``,
  * the second order: the Hessian-vector product of ``sum(w * f)`` from two nested tapes
    with the JVP of JAX's VJP, for a random tangent ``v``.
The JAX side runs as one ``jax.jit`` call per check: compiling dominates these tests' time.
Floating inputs are differentiated unless ``wrt`` says which ones.
"""
import os
import shutil
import tempfile

import jax
import numpy as np
import pytest
from resume_reference import run_job, weights

import minikeras as mk
from minikeras.xla_cpu import native_build

RTOL = 2e-4
ATOL = 2e-4


# -- compiled programs shared by the processes of one test run ---------------------------------
# Most of the suite's time is XLA compiling, and some of it compiles what another test already
# did: the two pytest-xdist workers and the subprocess tests compile the same small programs,
# and a test that builds a fresh model compiles programs identical to an earlier test's.
# jax's persistent compilation cache finds those by the program's text: the first compile of a
# program writes it, every later one in any process of the run loads it (the same executable:
# results are bit-identical, native custom calls included, since a program is traced, registering
# its FFI targets, before it is looked up). The whole suite on two workers took about a fifth
# less time with it (benchmarks/LOG.md, seventeenth session). It lives in a temporary directory
# made for the run and removed at its end (never in a user's home), and reaches the workers,
# subprocesses and notebook kernels through jax's environment variables.
# MINIKERAS_TEST_COMPILATION_CACHE=0 turns it off (every program compiled by its own process).
_SHARED_CACHE_VARIABLE = "MINIKERAS_TEST_COMPILATION_CACHE_DIR"  # set by the process that made it
_made_cache_directory = []


def pytest_configure(config):
    if os.environ.get("MINIKERAS_TEST_COMPILATION_CACHE") == "0":
        return
    directory = os.environ.get(_SHARED_CACHE_VARIABLE)
    if directory is None:  # the main pytest process (the workers inherit its environment)
        directory = tempfile.mkdtemp(prefix="minikeras-test-compiled-")
        _made_cache_directory.append(directory)
        os.environ[_SHARED_CACHE_VARIABLE] = directory
    # read by jax at import in the workers, subprocesses and notebook kernels; every program,
    # however quickly it compiles; no size limit (jax's limit rescans the directory per entry)
    os.environ.update(JAX_COMPILATION_CACHE_DIR=directory, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                      JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0", JAX_COMPILATION_CACHE_MAX_SIZE="-1")
    mk.config.enable_compilation_cache(directory, max_bytes=-1)  # this process imported jax already


def pytest_unconfigure(config):
    for directory in _made_cache_directory:
        shutil.rmtree(directory, ignore_errors=True)


def rand(*shape, seed=0, low=None, high=None, dtype=np.float32):
    """Reproducible test data: standard normal, or uniform in [low, high) when given."""
    rng = np.random.default_rng(seed)
    if low is not None:
        return rng.uniform(low, high, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def assert_close(actual, expected, rtol=RTOL, atol=ATOL, what="value"):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != expected {expected.shape}"
    scale = max(1.0, float(np.max(np.abs(expected)))) if expected.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * scale, err_msg=what)


def check_grad(mk_fn, jnp_fn, *inputs, wrt=None, order=2, rtol=RTOL, atol=ATOL, seed=0):
    """Checks ``mk_fn`` against ``jnp_fn``: forward, gradient and (``order=2``) Hessian-vector product.

    Returns the mk forward output (a Tensor) for further checks.
    """
    arrays = [np.asarray(a) for a in inputs]
    if wrt is None:
        wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    rng = np.random.default_rng(seed + 1000)

    # forward and first order
    tensors = [mk.constant(a) for a in arrays]
    sources = [tensors[i] for i in wrt]
    with mk.GradientTape() as tape:
        tape.watch(sources)
        out = mk_fn(*tensors)
    w = rng.standard_normal(out.shape).astype(out.dtype)
    tangents = [rng.standard_normal(arrays[i].shape).astype(arrays[i].dtype) for i in wrt]
    expected_out, expected_grads, expected_hvp = _reference(jnp_fn, arrays, wrt, w, tangents, order)
    assert out.dtype == expected_out.dtype, f"forward dtype {out.dtype} != expected {expected_out.dtype}"
    assert_close(out, expected_out, rtol, atol, "forward")
    grads = tape.gradient(out, sources, output_gradients=mk.constant(w))
    for i, g, e in zip(wrt, grads, expected_grads):
        assert g is not None, f"gradient of input {i} is None"
        assert g.shape == e.shape and g.dtype == e.dtype, \
            f"input {i}: gradient {g.shape} {g.dtype} != expected {e.shape} {e.dtype}"
        assert_close(g, e, rtol, atol, f"gradient of input {i}")
    if order < 2:
        return out

    # second order: H v through nested tapes
    tensors = [mk.constant(a) for a in arrays]
    sources = [tensors[i] for i in wrt]
    with mk.GradientTape() as outer:
        outer.watch(sources)
        with mk.GradientTape() as inner:
            inner.watch(sources)
            out2 = mk_fn(*tensors)
        grads = inner.gradient(out2, sources, output_gradients=mk.constant(w))
        total = mk.reduce_sum(grads[0] * tangents[0])
        for g, v in zip(grads[1:], tangents[1:]):
            total = total + mk.reduce_sum(g * v)
    hvp = outer.gradient(total, sources, unconnected_gradients="zero")
    for i, h, e in zip(wrt, hvp, expected_hvp):
        assert_close(h, e, rtol * 5, atol * 5, f"Hessian-vector product, input {i}")
    return out


def _reference(jnp_fn, arrays, wrt, w, tangents, order):
    """JAX's forward, vjp with ``w`` and Hessian-vector product with ``tangents``, as one compiled call."""
    def reference(values, w, tangents):
        def fn(*diff_values):
            args = list(values)
            for i, v in zip(wrt, diff_values):
                args[i] = v
            return jnp_fn(*args)

        primals = tuple(values[i] for i in wrt)
        if order < 2:
            out, vjp = jax.vjp(fn, *primals)
            return out, vjp(w), None

        def value_and_vjp(*p):
            out, vjp = jax.vjp(fn, *p)
            return out, vjp(w)

        # the tangent of the vjp is the Hessian-vector product of sum(w * f)
        (out, grads), (_, hvp) = jax.jvp(value_and_vjp, primals, tuple(tangents))
        return out, grads, hvp

    return jax.jit(reference)(list(arrays), w, list(tangents))


def gradient_of(fn, *inputs):
    """The tape gradients of ``fn(*tensors)`` with respect to every input (None where there is none)."""
    tensors = [mk.constant(a) for a in inputs]
    with mk.GradientTape() as tape:
        tape.watch([t for t in tensors if t.dtype.kind == "f"])
        out = fn(*tensors)
    return tape.gradient(out, tensors)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The weights of ``tests/resume_job.py`` run to the end in one process (the resume and backup
    tests compare with them)."""
    folder = tmp_path_factory.mktemp("full")
    result = run_job("full", folder)
    assert result.returncode == 0, result.stderr
    return weights(folder / "full.npz")


@pytest.fixture
def minikeras_home(tmp_path, monkeypatch):
    """An empty ``MINIKERAS_HOME`` (caches of downloads) in ``tmp_path / 'home'``, whose ``native``
    folder is the real one: the compiled kernels are not built again for the test."""
    native = native_build.library_directory()
    os.makedirs(native, exist_ok=True)
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(native, home / "native")
    monkeypatch.setenv("MINIKERAS_HOME", str(home))
    return home
