"""minikeras.xla_cpu.compiler: ``jit`` is ``jax.jit`` with the XLA:CPU setting where it applies.

Its results equal ``jax.jit``'s; on the CPU its programs run convolutions outside YNNPACK and
are traced with ``convolutions_on_eigen`` True (False again afterwards, also after an error);
called inside another jax trace it compiles as part of the caller; where the setting does not
apply it is plain ``jax.jit``.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import minikeras as mk
from minikeras.xla_cpu import compiler, jit

needs_cpu_options = pytest.mark.skipif(compiler.cpu_options() is None,
                                       reason="not the CPU backend, or this jaxlib lacks the XLA:CPU setting")


def _rand(shape, seed):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape), jnp.float32)


def _conv(x, w, padding="VALID"):
    return lax.conv_general_dilated(x, w, (1, 1), padding, dimension_numbers=("NHWC", "HWIO", "NHWC"))


def test_jit_is_the_package_entry_point():
    import minikeras.xla_cpu
    assert minikeras.xla_cpu.jit is compiler.jit


def test_jit_computes_what_jax_jit_computes():
    x, w = _rand((2, 9, 9, 6), 0), _rand((3, 3, 6, 4), 1)

    def f(x, w):
        return jnp.tanh(_conv(x, w)).sum(axis=(1, 2)) @ jnp.ones((4, 3))

    np.testing.assert_allclose(np.asarray(jit(f)(x, w)), np.asarray(jax.jit(f)(x, w)), rtol=1e-5, atol=1e-5)


def test_jit_passes_jax_jit_arguments_through():
    f = jit(lambda x, n: x * n, static_argnums=1)
    assert float(f(jnp.float32(2.0), 3)) == 6.0
    donated = jit(lambda x: x + 1, donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(donated(jnp.zeros(4))), np.ones(4))


@needs_cpu_options
def test_cpu_programs_run_convolutions_outside_ynnpack():
    x, w = jnp.ones((2, 10, 10, 8)), jnp.ones((3, 3, 8, 4))
    text = jit(_conv).lower(x, w).compile().as_text()
    conv_lines = [line for line in text.splitlines() if "conv_general_dilated" in line and " = " in line]
    assert conv_lines and not any("ynn" in line for line in conv_lines), conv_lines


@needs_cpu_options
def test_cpu_programs_are_traced_with_convolutions_on_eigen():
    seen = []

    def probe(x):
        seen.append(compiler.convolutions_on_eigen.get())
        return x + 1

    assert compiler.convolutions_on_eigen.get() is False
    jit(probe)(1.0)
    jax.jit(probe)(2.0)
    assert seen == [True, False]
    assert compiler.convolutions_on_eigen.get() is False


def test_the_context_value_is_reset_when_tracing_fails():
    def broken(x):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        jit(broken)(1.0)
    assert not compiler.convolutions_on_eigen.get()


@needs_cpu_options
def test_inside_another_trace_it_compiles_as_part_of_the_caller():
    # jax takes compiler options on top-level jits only: nested, the program is traced as the
    # plain jax.jit of the function, with the caller's convolution setting (here: YNNPACK's)
    seen = []

    def f(x):
        seen.append(compiler.convolutions_on_eigen.get())
        return x * 2.0

    inner = jit(f)
    assert float(jax.jit(lambda x: inner(x) + 1.0)(jnp.float32(1.0))) == 3.0
    assert seen[-1] is False
    np.testing.assert_array_equal(np.asarray(jax.vmap(inner)(jnp.arange(3.0))), [0.0, 2.0, 4.0])
    assert float(jax.grad(lambda x: inner(x) ** 2)(jnp.float32(3.0))) == 24.0
    assert float(inner(jnp.float32(4.0))) == 8.0  # and at top level again


def test_mk_function_runs_inside_a_users_jax_jit():
    x, w = _rand((2, 9, 9, 6), 0), _rand((3, 3, 6, 4), 1)
    conv = mk.function(lambda x: mk.nn.conv2d(x, w, 1, "SAME"))
    expected = np.asarray(_conv(x, w, "SAME"))
    np.testing.assert_allclose(np.asarray(conv(x)._value), expected, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda x: conv(x)._value)(x)), expected, rtol=2e-5, atol=2e-5)


def test_trace_and_lower_are_the_top_level_programs():
    f = jit(lambda x: x * 3.0)
    assert f.trace(jnp.ones(2)).jaxpr.out_avals[0].shape == (2,)
    assert "multiply" in f.lower(jnp.ones(2)).as_text()


def test_without_the_setting_jit_is_plain_jax_jit(monkeypatch):
    monkeypatch.setattr(compiler, "cpu_options", lambda: None)  # as on a GPU, or an older jaxlib
    seen = []

    def probe(x):
        seen.append(compiler.convolutions_on_eigen.get())
        return x - 1.0

    f = jit(probe)
    assert type(f) is type(jax.jit(probe))
    assert float(f(jnp.float32(1.0))) == 0.0 and seen == [False]


def test_cpu_options_only_on_the_cpu_backend():
    options = compiler.cpu_options()
    if jax.default_backend() == "cpu":
        assert options in (None, compiler.CPU_OPTIONS)  # None: a jaxlib without the setting
    else:
        assert options is None
