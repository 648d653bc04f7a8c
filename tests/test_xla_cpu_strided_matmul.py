"""minikeras.xla_cpu.strided_matmul: batched-matmul einsums on the strided native kernel, against jnp.einsum."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from xla_cpu_reference import close, rand

import minikeras as mk
from minikeras.xla_cpu import strided_matmul, tuning

needs_build = pytest.mark.skipif(not strided_matmul.available(), reason="matmul_native.cc could not be built here")

# MultiHeadAttention's products and their gradients on [batch, seq, heads, dim] operands, and
# plain batched products: (equation, p shape, q shape)
TAKEN = [
    ("acbe,aecd->abcd", (2, 3, 5, 7), (2, 7, 3, 16)),   # probabilities times values
    ("abcd,acbe->aecd", (2, 5, 3, 32), (2, 3, 5, 7)),   # the values' gradient (A^T B)
    ("acbe,abcd->aecd", (2, 3, 5, 7), (2, 5, 3, 48)),   # the keys' gradient, cotangent first
    ("acbe,aecd->abcd", (3, 2, 13, 9), (3, 9, 2, 80)),  # rows in tiles and a remainder, 64 + 16 columns
    ("bij,bjk->bik", (4, 6, 5), (4, 5, 32)),
    ("bji,bjk->bik", (4, 5, 6), (4, 5, 96)),            # 64 + 32 columns
    ("bjk,bij->bik", (4, 5, 32), (4, 6, 5)),            # the output's last label from the first operand
    ("bjk,bij->bik", (1, 5, 16), (1, 6, 5)),            # one product
]
NOT_TAKEN = [
    ("aecd,abcd->acbe", (2, 16, 3, 8), (2, 16, 3, 8)),  # the output's last label not last in its operand
    ("bij,bjk->bik", (4, 6, 5), (4, 5, 24)),            # 24 columns: not a multiple of 16
    ("ij,jk->ik", (6, 5), (5, 16)),                     # no batch label
    ("abij,abjk,ab->abik", None, None),                 # three operands
    ("bij,bjk->bk", (4, 6, 5), (4, 5, 16)),             # a label summed away
    ("bijl,bjkl->bik", (4, 6, 5, 2), (4, 5, 16, 2)),    # two contracted labels
]


@pytest.fixture
def every_size(monkeypatch):
    monkeypatch.setattr(tuning, "STRIDED_MATMUL_FLOPS", 0)
    monkeypatch.setattr(tuning, "STRIDED_MATMUL_NEEDS_AVX512", False)


@needs_build
@pytest.mark.parametrize("equation,p_shape,q_shape", TAKEN)
def test_matches_jnp_einsum_eagerly_and_under_jit(every_size, equation, p_shape, q_shape):
    p, q = rand(p_shape, 1), rand(q_shape, 2)
    assert strided_matmul.applies(equation, p, q)
    expected = jnp.einsum(equation, p, q, precision="highest")
    close(strided_matmul.einsum(equation, p, q), expected, equation, tol=1e-5)
    close(jax.jit(lambda p, q: strided_matmul.einsum(equation, p, q))(p, q), expected, equation, tol=1e-5)


@pytest.mark.parametrize("equation,p_shape,q_shape", NOT_TAKEN)
def test_other_einsums_are_left_to_xla(every_size, equation, p_shape, q_shape):
    if p_shape is None:
        assert strided_matmul.plan(equation, (2, 2, 3, 4), (2, 2, 4, 16)) is None
        return
    p, q = rand(p_shape, 1), rand(q_shape, 2)
    assert not strided_matmul.applies(equation, p, q)
    assert strided_matmul.einsum(equation, p, q) is None


def test_other_dtypes_and_small_products_are_left_to_xla(monkeypatch):
    equation, p, q = "bij,bjk->bik", rand((4, 6, 5), 1), rand((4, 5, 32), 2)
    monkeypatch.setattr(tuning, "STRIDED_MATMUL_NEEDS_AVX512", False)
    assert not strided_matmul.applies(equation, p.astype(jnp.bfloat16), q.astype(jnp.bfloat16))
    assert not strided_matmul.applies(equation, p, q)  # 7,680 FLOPs: below tuning.STRIDED_MATMUL_FLOPS
    monkeypatch.setattr(tuning, "STRIDED_MATMUL_FLOPS", 0)
    monkeypatch.setattr(tuning, "STRIDED_MATMUL_NATIVE", False)
    assert not strided_matmul.applies(equation, p, q)


@needs_build
@pytest.mark.parametrize("equation,p_shape,q_shape", TAKEN[:3])
def test_derivatives_first_and_second_order(every_size, equation, p_shape, q_shape):
    p, q = rand(p_shape, 3), rand(q_shape, 4)
    weights = rand(jnp.einsum(equation, p, q).shape, 5)

    def loss(product, p, q):
        return jnp.sum(jnp.tanh(product(p, q)) * weights)

    ours = lambda p, q: loss(lambda p, q: strided_matmul.einsum(equation, p, q), p, q)  # noqa: E731
    reference = lambda p, q: loss(lambda p, q: jnp.einsum(equation, p, q, precision="highest"), p, q)  # noqa: E731
    for got, expected in zip(jax.grad(ours, (0, 1))(p, q), jax.grad(reference, (0, 1))(p, q)):
        close(got, expected, f"{equation} gradient", tol=1e-5)
    second = lambda f: jax.grad(lambda p, q: jnp.sum(jax.grad(f)(p, q) ** 2), (0, 1))  # noqa: E731
    for got, expected in zip(second(ours)(p, q), second(reference)(p, q)):
        close(got, expected, f"{equation} second order", tol=1e-4)


@needs_build
def test_under_vmap(every_size):
    equation, p, q = "bij,bjk->bik", rand((3, 4, 6, 5), 6), rand((3, 4, 5, 16), 7)
    got = jax.vmap(lambda p, q: strided_matmul.einsum(equation, p, q))(p, q)
    close(got, jnp.einsum("xbij,xbjk->xbik", p, q, precision="highest"), "vmap", tol=1e-5)


@needs_build
def test_mk_einsum_and_its_tape_gradients_take_the_kernel(every_size, monkeypatch):
    """mk.einsum runs a taken equation on the kernel, and the tape's gradients (einsums themselves)
    equal those of the XLA path with the switch off."""
    p, q = rand((2, 3, 5, 7), 8), rand((2, 7, 3, 16), 9)

    def gradients():
        jax.clear_caches()  # traced anew: eager ops keep their compiled forward per shape, the first switch's
        pv, qv = mk.Variable(p), mk.Variable(q)
        with mk.GradientTape() as tape:
            y = mk.einsum("acbe,aecd->abcd", pv, qv)
            loss = mk.reduce_sum(mk.tanh(y) * mk.constant(np.arange(y.size, dtype="float32").reshape(y.shape) / y.size))
        return [y.numpy(), *(g.numpy() for g in tape.gradient(loss, [pv, qv]))]

    calls = []
    original = strided_matmul._product
    monkeypatch.setattr(strided_matmul, "_product", lambda *args: calls.append(args[2]) or original(*args))
    on = gradients()
    assert "acbe,aecd->abcd" in calls and len(calls) >= 2  # the forward and a gradient product
    monkeypatch.setattr(tuning, "STRIDED_MATMUL_NATIVE", False)
    calls.clear()
    off = gradients()
    assert not calls  # the XLA path
    for got, expected in zip(on, off):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@needs_build
def test_multi_head_attention_gradients_match_the_xla_path(every_size, monkeypatch):
    """A MultiHeadAttention layer whose products the kernel takes (16-wide heads, 32 tokens):
    output and weight gradients with the kernel and without."""
    mk.random.set_seed(0)
    layer = mk.layers.MultiHeadAttention(num_heads=2, key_dim=16)
    x = mk.constant(np.random.default_rng(0).standard_normal((4, 32, 24)).astype("float32"))
    layer(x, x)

    def run():
        jax.clear_caches()  # traced anew: eager ops keep their compiled forward per shape, the first switch's
        with mk.GradientTape() as tape:
            y = layer(x, x)
            loss = mk.reduce_sum(y * y)
        return [y.numpy(), *(g.numpy() for g in tape.gradient(loss, layer.trainable_variables))]

    assert strided_matmul.plan("acbe,aecd->abcd", (4, 2, 32, 32), (4, 32, 2, 16)) is not None
    calls = []
    original = strided_matmul._product
    monkeypatch.setattr(strided_matmul, "_product", lambda *args: calls.append(args[2]) or original(*args))
    on = run()
    assert calls  # the kernel
    monkeypatch.setattr(tuning, "STRIDED_MATMUL_NATIVE", False)
    calls.clear()
    off = run()
    assert not calls  # the XLA path
    for got, expected in zip(on, off):
        np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)


@needs_build
def test_the_kernel_refuses_strides_that_leave_its_buffers():
    p, q = rand((2, 6, 5), 1), rand((2, 5, 16), 2)
    call = jax.ffi.ffi_call(strided_matmul._TARGET, jax.ShapeDtypeStruct((2, 6, 16), jnp.float32))
    good = dict(batch0=2, batch1=1, m=6, n=16, k=5, sa0=30, sa1=0, sam=5, sak=1, sb0=80, sb1=0, sbk=16,
                sc0=96, sc1=0, scm=16, threads=1)
    close(call(p, q, **{name: np.int64(v) for name, v in good.items()}), p @ q, "direct call", tol=1e-5)
    with pytest.raises(Exception, match="do not fit the buffers"):
        call(p, q, **{name: np.int64(v) for name, v in {**good, "sbk": 17}.items()}).block_until_ready()
    with pytest.raises(Exception, match="do not fit the buffers"):
        call(p, q, **{name: np.int64(v) for name, v in {**good, "sa0": -30}.items()}).block_until_ready()


@needs_build
@pytest.mark.parametrize("a_shape,b_shape,transpose_a", [((3, 6, 5), (3, 5, 16), False),
                                                         ((2, 3, 5, 6), (2, 3, 5, 32), True)])
def test_batched_matmul_and_its_tape_gradients_take_the_kernel(every_size, monkeypatch, a_shape, b_shape,
                                                                transpose_a):
    """mk.matmul of 3-D and 4-D operands (and keras.ops.matmul, which records it) on the kernel,
    gradients against jax.grad of jnp.matmul."""
    from minikeras import keras

    calls = []
    original = strided_matmul._product
    monkeypatch.setattr(strided_matmul, "_product", lambda *args: calls.append(args[2]) or original(*args))
    a, b = rand(a_shape, 10), rand(b_shape, 11)
    weights = rand((*a_shape[:-2], a_shape[-1] if transpose_a else a_shape[-2], b_shape[-1]), 12)

    def reference(a, b):
        return jnp.sum(jnp.tanh(jnp.matmul(jnp.swapaxes(a, -1, -2) if transpose_a else a, b,
                                           precision="highest")) * weights)

    av, bv = mk.Variable(a), mk.Variable(b)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(mk.tanh(mk.matmul(av, bv, transpose_a=transpose_a)) * weights)
    got = tape.gradient(loss, [av, bv])
    assert calls, "the product did not take the kernel"
    close(loss.numpy(), reference(a, b), "loss", tol=1e-5)
    for g, expected in zip(got, jax.grad(reference, (0, 1))(a, b)):
        close(g.numpy(), expected, "gradient", tol=1e-5)
    if not transpose_a:  # other shapes: ops keep their compiled forward per shape
        calls.clear()
        a, b = rand((a_shape[0] + 1, *a_shape[1:]), 13), rand((b_shape[0] + 1, *b_shape[1:]), 14)
        close(keras.ops.matmul(a, b).numpy(), jnp.matmul(a, b, precision="highest"), "keras.ops.matmul", tol=1e-5)
        assert calls
