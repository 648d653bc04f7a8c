"""minikeras.xla_cpu.conv against plain jax.

Every formulation and the default choice against ``lax.conv_general_dilated`` and ``jax.vjp``
of it, on a grid and on hypothesis-drawn shapes, first and second order, with the tables for
convolutions on Eigen (inside ``xla_cpu.jit``) and on YNNPACK (plain ``jax.jit``).
"""
import jax
import jax.numpy as jnp
import pytest
from hypothesis import given, settings, strategies as st
from jax import lax
from xla_cpu_reference import close as _close, rand as _rand

from minikeras.xla_cpu import compiler, conv, conv_native, tuning, winograd

DN = conv.DIMENSION_NUMBERS


def _reference(x, w, strides, padding, dilations):
    return lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dilations, dimension_numbers=DN)


def _check_conv(n, h, w_, c, o, kh, kw, strides, padding, dilations, methods=False, seed=0, jit=jax.jit):
    """Forward, input and filter gradients: the default (and with ``methods`` every) formulation
    against lax and jax.vjp of it, all in one program compiled by ``jit`` (``compiler.jit``: the
    defaults for convolutions on Eigen, as in minikeras' programs; ``jax.jit``: for YNNPACK)."""
    x, w = _rand((n, h, w_, c), seed), _rand((kh, kw, c, o), seed + 1)
    y_shape = jax.eval_shape(lambda: _reference(x, w, strides, padding, dilations)).shape
    dy = _rand(y_shape, seed + 2)
    pads = conv.explicit_padding(padding, (h, w_), (kh, kw), strides, dilations)

    def usable(kind):  # 'native' and 'matmul' only where their kernels take the shapes
        def takes(m):
            if m == "matmul":
                return conv.matmul_filter_grad_applies(x.shape, w.shape, strides, pads, dilations, x.dtype)
            if m == "winograd":
                return winograd.applies(x.shape, w.shape, strides, pads, dilations)
            return m != "native" or (conv_native.supported(kind, x.shape, w.shape, strides, pads, dilations, x.dtype)
                                     and conv_native.available())
        return takes
    fwd = {"auto": None} | ({m: m for m in conv.FORWARD_METHODS if usable("forward")(m)} if methods else {})
    dgrad = {"auto": None} | ({m: m for m in conv.INPUT_GRAD_METHODS if usable("input_grad")(m)} if methods else {})
    wgrad = {"auto": None} | ({m: m for m in conv.FILTER_GRAD_METHODS if usable("filter_grad")(m)} if methods else {})

    @jit
    def run(x, w, dy):
        y, vjp = jax.vjp(lambda x, w: _reference(x, w, strides, padding, dilations), x, w)
        return (y, *vjp(dy),
                {k: conv.conv2d_forward(x, w, strides, padding, dilations, method=m) for k, m in fwd.items()},
                {k: conv.conv2d_input_grad(dy, w, x.shape, strides, padding, dilations, method=m)
                 for k, m in dgrad.items()},
                {k: conv.conv2d_filter_grad(x, dy, w.shape, strides, padding, dilations, method=m)
                 for k, m in wgrad.items()})
    y, dx, dw, ys, dxs, dws = run(x, w, dy)
    for k in ys:
        _close(ys[k], y, f"forward {k}")
    for k in dxs:
        _close(dxs[k], dx, f"input grad {k}")
    for k in dws:
        _close(dws[k], dw, f"filter grad {k}")


# -- convolution: grid ------------------------------------------------------------------------
GRID = [  # h, w, c_in, c_out, kh, kw, strides, padding, dilations
    (8, 8, 1, 4, 3, 3, (1, 1), "VALID", (1, 1)),
    (8, 7, 3, 4, 3, 3, (1, 1), "SAME", (1, 1)),
    (7, 8, 5, 3, 3, 3, (2, 2), "SAME", (1, 1)),
    (9, 8, 6, 4, 5, 5, (2, 1), "SAME", (1, 1)),
    (8, 8, 6, 4, 1, 1, (1, 1), "VALID", (1, 1)),
    (7, 7, 6, 4, 1, 1, (2, 2), "SAME", (1, 1)),
    (9, 9, 5, 4, 3, 3, (1, 1), "SAME", (2, 2)),
    (9, 8, 2, 4, 3, 2, (1, 1), "VALID", (2, 1)),
    (8, 9, 5, 3, 3, 3, (2, 2), ((2, 0), (1, 1)), (1, 1)),
    (11, 10, 5, 4, 3, 3, (2, 2), "SAME", (2, 1)),  # strided and dilated
    (10, 9, 6, 3, 3, 3, (2, 2), ((-1, 1), (1, -1)), (1, 1)),  # strided, cropping pads
]


def _conv_id(c):
    padding = c[7] if isinstance(c[7], str) else "explicit"
    return "x".join(map(str, c[:6])) + f"-s{c[6][0]}{c[6][1]}-{padding}-d{c[8][0]}{c[8][1]}"


@pytest.mark.parametrize("jit", [jax.jit, compiler.jit], ids=["jax-jit", "minikeras-jit"])
@pytest.mark.parametrize("case", GRID, ids=_conv_id)
def test_conv_default_matches_lax(case, jit):
    _check_conv(2, *case, jit=jit)


def test_minikeras_programs_pick_formulations_for_eigen_convolutions(monkeypatch):
    monkeypatch.setattr(tuning, "NATIVE_KERNELS", False)  # XLA formulations (native: test_xla_cpu_conv_native)
    seen = []

    def probe(x):
        seen.append((compiler.convolutions_on_eigen.get(),
                     conv.formulation("forward", (8, 26, 26, 32), (3, 3, 32, 64)),
                     conv.formulation("filter_grad", (8, 26, 26, 32), (3, 3, 32, 64)),
                     conv.formulation("input_grad", (8, 32, 32, 32), (3, 3, 32, 64), (2, 2), "SAME"),
                     conv.formulation("forward", (8, 28, 28, 1), (5, 5, 1, 32), padding="SAME")))
        return x + 1

    jax.jit(probe)(1.0)
    compiler.jit(probe)(1.0)
    assert seen[0] == (False, "padded", "chunked", "padded", "padded")
    if compiler.cpu_options() is None:
        pytest.skip("this jaxlib does not accept the XLA:CPU convolution setting")
    assert seen[1] == (True, "xla", "xla", "col2im", "taps")  # 8 samples: one chunk's worth
    assert conv.formulation("filter_grad", (128, 26, 26, 32), (3, 3, 32, 64), eigen=True) == "split"
    assert not compiler.convolutions_on_eigen.get()  # reset after tracing


def test_eigen_argument_overrides_the_context_value(monkeypatch):
    monkeypatch.setattr(tuning, "NATIVE_KERNELS", False)  # XLA formulations (native: test_xla_cpu_conv_native)
    if jax.default_backend() != "cpu":
        pytest.skip("off the CPU every formulation is 'xla'")
    seen = []
    x_shape, w_shape = (128, 26, 26, 32), (3, 3, 32, 64)

    def probe(x):
        seen.append(tuple(conv.formulation(kind, x_shape, w_shape, eigen=eigen)
                          for eigen in (False, True) for kind in ("forward", "filter_grad")))
        return x + 1

    jax.jit(probe)(1.0)
    compiler.jit(probe)(1.0)
    assert seen == [("prepadded", "chunked", "xla", "split")] * 2  # a 2.7 GFLOP layer

    # the YNNPACK table's formulations inside minikeras' programs, the Eigen table's under jax.jit
    x, w = _rand((4, 10, 10, 8), 40), _rand((3, 3, 8, 5), 41)
    y, vjp = jax.vjp(lambda x, w: _reference(x, w, (1, 1), "SAME", (1, 1)), x, w)
    dy = _rand(y.shape, 42)
    dx, dw = vjp(dy)
    for jit, eigen in ((compiler.jit, False), (jax.jit, True)):
        ours = jit(lambda x, w, dy: (conv.conv2d_forward(x, w, 1, "SAME", eigen=eigen),
                                     conv.conv2d_input_grad(dy, w, x.shape, 1, "SAME", eigen=eigen),
                                     conv.conv2d_filter_grad(x, dy, w.shape, 1, "SAME", eigen=eigen)))(x, w, dy)
        for a, b, what in zip(ours, (y, dx, dw), ("forward", "input grad", "filter grad")):
            _close(a, b, f"{what}, eigen={eigen}")


@pytest.mark.parametrize("case", [GRID[6], GRID[8]], ids=["dil2", "s2explicit"])
def test_conv_every_formulation_matches_lax(case):
    _check_conv(2, *case, methods=True)


def test_conv_mnist_like_layer_in_uneven_chunks(monkeypatch):
    # 32 -> 8 channels, 3x3 VALID, and a batch of 7 that the filter gradient splits as 2+2+2+1
    monkeypatch.setattr(tuning, "CONV_CHUNK_BYTES", 12 * 12 * 9 * 32 * 4 * 2)
    monkeypatch.setattr(tuning, "NATIVE_KERNELS", False)
    _check_conv(7, 14, 14, 32, 8, 3, 3, (1, 1), "VALID", (1, 1))


def test_conv_filter_gradient_split_unevenly_in_minikeras_programs(monkeypatch):
    # chunks of ~2 samples' x and dy: a batch of 7 splits as 1+2+2+2 (n * i // 4)
    monkeypatch.setattr(tuning, "CONV_SPLIT_BYTES", (14 * 14 * 32 + 12 * 12 * 8) * 4 * 2)
    monkeypatch.setattr(tuning, "NATIVE_KERNELS", False)
    assert conv.formulation("filter_grad", (7, 14, 14, 32), (3, 3, 32, 8), eigen=True) == "split"
    _check_conv(7, 14, 14, 32, 8, 3, 3, (1, 1), "VALID", (1, 1), jit=compiler.jit)


def test_pointwise_convolutions_run_as_products_in_minikeras_programs():
    # a 1x1 stride-1 layer (a ResNet50 bottleneck's): forward on XLA's convolution, filter gradient
    # x^T @ dy on the native matmul kernel where it is built; values against lax and its transposes
    x_shape, w_shape = (2, 16, 16, 32), (1, 1, 32, 48)
    assert conv.formulation("forward", x_shape, w_shape, eigen=True) == "xla"
    if conv.matmul_filter_grad_applies(x_shape, w_shape, (1, 1), ((0, 0), (0, 0)), (1, 1), jnp.float32):
        assert conv.formulation("filter_grad", x_shape, w_shape, eigen=True) == "matmul"
    _check_conv(2, 16, 16, 32, 48, 1, 1, (1, 1), "VALID", (1, 1), methods=True, jit=compiler.jit)
    # the strided 1x1 projection shortcut takes the same product on every second pixel
    _check_conv(2, 16, 16, 32, 48, 1, 1, (2, 2), "VALID", (1, 1), jit=compiler.jit)


def test_pointwise_filter_gradient_method_refuses_other_convolutions():
    x, dy = _rand((2, 8, 8, 16), 0), _rand((2, 8, 8, 16), 1)
    with pytest.raises(ValueError, match="method 'matmul' takes stride-1 1x1"):
        conv.conv2d_filter_grad(x, dy, (3, 3, 16, 16), (1, 1), "SAME", method="matmul")


def test_native_gradients_only_for_filters_that_fit_the_cache(monkeypatch):
    # ResNet50's last stage: a 9.4 MB filter; the gradients take Eigen's formulations there
    if not conv_native.available():
        pytest.skip(f"native kernels unavailable: {conv_native.unavailable_reason()}")
    x_shape, w_shape = (16, 7, 7, 512), (3, 3, 512, 512)
    monkeypatch.setattr(tuning, "CONV_WINOGRAD", False)  # which takes this input gradient by default
    assert conv.formulation("input_grad", x_shape, w_shape, padding="SAME", eigen=True) != "native"
    assert conv.formulation("filter_grad", x_shape, w_shape, padding="SAME", eigen=True) != "native"
    monkeypatch.setattr(tuning, "CONV_NATIVE_GRAD_MAX_FILTER_BYTES", 4 * 3 * 3 * 512 * 512)
    assert conv.formulation("input_grad", x_shape, w_shape, padding="SAME", eigen=True) == "native"
    assert conv.formulation("filter_grad", x_shape, w_shape, padding="SAME", eigen=True) == "native"


@settings(max_examples=3, deadline=None)
@given(h=st.integers(5, 10), w=st.integers(5, 10), c=st.sampled_from([1, 2, 3, 8]), o=st.integers(1, 5),
       k=st.sampled_from([1, 3, 5]), s=st.integers(1, 2), d=st.integers(1, 2), same=st.booleans(),
       n=st.integers(1, 3))
def test_conv_drawn_shapes(h, w, c, o, k, s, d, same, n):
    if not same and (k - 1) * d + 1 > min(h, w):
        return
    _check_conv(n, h, w, c, o, k, k, (s, s), "SAME" if same else "VALID", (d, d) if s == 1 else (1, 1), seed=h * w)


# -- convolution: second order ----------------------------------------------------------------
@pytest.mark.parametrize("strides,padding", [((1, 1), "VALID"), ((2, 2), "SAME")])
def test_conv_grads_differentiate_like_the_reference(strides, padding):
    """jax.jvp / jax.vjp through our gradient functions equal those through jax's transposes."""
    x, w = _rand((2, 8, 7, 3), 10), _rand((3, 3, 3, 4), 11)
    y = _reference(x, w, strides, padding, (1, 1))
    dy = _rand(y.shape, 12)
    tx, tw, tdy = _rand(x.shape, 13), _rand(w.shape, 14), _rand(y.shape, 15)

    def ref_dx(dy, w):
        return jax.vjp(lambda x: _reference(x, w, strides, padding, (1, 1)), x)[1](dy)[0]

    def ref_dw(x, dy):
        return jax.vjp(lambda w: _reference(x, w, strides, padding, (1, 1)), w)[1](dy)[0]

    def our_dx(dy, w):
        return conv.conv2d_input_grad(dy, w, x.shape, strides, padding)

    def our_dw(x, dy):
        return conv.conv2d_filter_grad(x, dy, w.shape, strides, padding)

    @jax.jit
    def second_order(x, w, dy, tx, tw, tdy):
        return [(jax.jvp(ours, args, tangents)[1], jax.jvp(ref, args, tangents)[1],
                 jax.vjp(ours, *args)[1](cot), jax.vjp(ref, *args)[1](cot))
                for ours, ref, args, tangents, cot in ((our_dx, ref_dx, (dy, w), (tdy, tw), tx),
                                                       (our_dw, ref_dw, (x, dy), (tx, tdy), tw))]
    for name, (jvp_ours, jvp_ref, vjp_ours, vjp_ref) in zip(("input grad", "filter grad"),
                                                            second_order(x, w, dy, tx, tw, tdy)):
        _close(jvp_ours, jvp_ref, f"jvp of {name}")
        for a, b in zip(vjp_ours, vjp_ref):
            _close(a, b, f"vjp of {name}")


def test_conv_as_custom_vjp_hessian_vector_product():
    """Wired as each other's gradient rules, the three give jax's second derivatives."""
    strides, padding = (1, 1), "SAME"

    @jax.custom_vjp
    def our_conv(x, w):
        return conv.conv2d_forward(x, w, strides, padding)

    def fwd(x, w):
        return our_conv(x, w), (x, w)

    def bwd(res, dy):
        x, w = res
        return (conv.conv2d_input_grad(dy, w, x.shape, strides, padding),
                conv.conv2d_filter_grad(x, dy, w.shape, strides, padding))
    our_conv.defvjp(fwd, bwd)

    x, w = _rand((2, 6, 6, 3), 20), _rand((3, 3, 3, 2), 21)
    tx, tw = _rand(x.shape, 22), _rand(w.shape, 23)

    def loss(conv_fn):
        return lambda x, w: jnp.sum(jnp.tanh(conv_fn(x, w)) ** 2)
    ref = lambda x, w: _reference(x, w, strides, padding, (1, 1))  # noqa: E731
    def hvp(f):  # reverse over reverse: custom_vjp functions have no forward mode
        g = jax.grad(f, argnums=(0, 1))
        return jax.jit(jax.grad(lambda x, w, tx, tw: sum(jnp.vdot(a, t) for a, t in zip(g(x, w), (tx, tw))),
                                argnums=(0, 1)))(x, w, tx, tw)
    for a, b in zip(hvp(loss(our_conv)), hvp(loss(ref))):
        _close(a, b, "Hessian-vector product", tol=1e-4)


def test_conv_padding_helpers():
    assert conv.explicit_padding("SAME", (5, 6), (3, 3), (2, 2)) == ((1, 1), (0, 1))
    assert conv.explicit_padding("VALID", (5, 6), (3, 3)) == ((0, 0), (0, 0))
    assert conv.explicit_padding("SAME", (4, 4), (1, 1), (2, 2)) == ((0, 0), (0, 0))
    assert conv.formulation("forward", (8, 28, 28, 1), (3, 3, 1, 32)) in conv.FORWARD_METHODS
