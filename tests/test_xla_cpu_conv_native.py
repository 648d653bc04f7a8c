"""The native conv2d kernels (minikeras/xla_cpu/conv_native.cc) against lax and jax.vjp.

Shapes are chosen to reach every code path of the kernels: 16, 32 and 64-channel chunks, channel
tiles with remainders, pixel tiles of every width up to 12 (6 without AVX-512) and rows wider
than one tile, zero padding on either side, filters from 1x1 to 5x5, one thread and several.
"""
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from xla_cpu_reference import close, rand

from minikeras.xla_cpu import compiler, conv, conv_native, native_build, tuning

DN = conv.DIMENSION_NUMBERS

# Skipped where the kernels are off or cannot be built here (no compiler, another platform);
# a build that fails is a failure.
_UNAVAILABLE = "" if conv_native.available() else conv_native.unavailable_reason()
pytestmark = pytest.mark.skipif(bool(_UNAVAILABLE) and not _UNAVAILABLE.startswith("building"), reason=_UNAVAILABLE)


@pytest.fixture(autouse=True)
def _direct_convolutions(monkeypatch):
    """These tests are about the direct kernels: Winograd's formulation, which takes 3x3 layers of
    enough channels by default (tests/test_xla_cpu_winograd.py), is switched off."""
    monkeypatch.setattr(tuning, "CONV_WINOGRAD", False)


def _reference_grads(x, w, pads, dy):
    _, vjp = jax.vjp(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), pads, dimension_numbers=DN), x, w)
    return vjp(dy)


def _case(n, h, w_, c, o, kh, kw, pads, seed):
    x, w = rand((n, h, w_, c), seed), rand((kh, kw, c, o), seed + 1)
    ho, wo = conv.output_hw((h, w_), (kh, kw), (1, 1), pads, (1, 1))
    return x, w, rand((n, ho, wo, o), seed + 2)


def test_the_kernels_build_where_a_compiler_is():
    assert conv_native.available(), conv_native.unavailable_reason()


CASES = [  # n, h, w, c, o, kh, kw, pads
    (3, 9, 7, 16, 5, 3, 3, ((1, 1), (1, 1))),       # 16 channels, SAME, an odd output-channel tile
    (2, 6, 14, 5, 112, 3, 3, ((1, 1), (1, 1))),     # forward: 112 = 64 + 32 + 16 output channels
    (2, 8, 30, 48, 24, 3, 2, ((2, 0), (0, 1))),     # 32 + 16 channels, rows of 3 tiles, uneven pads
    (1, 5, 5, 64, 3, 5, 5, ((2, 2), (2, 2))),       # 5x5 SAME on a 5x5 input
    (5, 6, 13, 32, 17, 1, 1, ((0, 0), (0, 0))),     # 1x1: a matmul; 17 = 2 tiles of 8 + 1
    (2, 4, 1, 32, 8, 1, 1, ((0, 0), (0, 0))),       # one pixel wide
    (4, 12, 25, 32, 64, 3, 3, ((0, 0), (0, 0))),    # VALID, as the MNIST CNN's second layer
    (2, 7, 12, 96, 40, 3, 3, ((1, 1), (1, 1))),     # 3 channel chunks, a row of exactly 12
    (2, 5, 3, 16, 48, 2, 3, ((1, 0), (2, 2))),      # rows narrower than a tile, wide left pad
    # the filter gradient of 16 input channels and 3 filter columns (AVX-512: a filter row's 3 taps at once):
    (2, 5, 35, 16, 16, 3, 3, ((1, 1), (1, 1))),     # SAME, two output-channel tiles of 8
    (2, 6, 21, 48, 20, 3, 3, ((0, 0), (0, 0))),     # VALID; 48 = 32 + 16 channels, 20 = 8 + 8 + 4
    (2, 7, 19, 16, 80, 3, 3, ((2, 0), (0, 2))),     # uneven pads
    # the filter gradient of few input channels, vectorized over output channels (kw * C <= 6; 9 with AVX-512):
    (4, 28, 28, 1, 32, 3, 3, ((0, 0), (0, 0))),     # the MNIST CNN's first layer
    (3, 9, 11, 3, 16, 3, 2, ((1, 1), (0, 1))),      # kw * C = 6, uneven pads
    (2, 7, 9, 2, 48, 2, 3, ((1, 0), (2, 0))),       # 48 = a pair of output vectors and one more
    (2, 6, 6, 1, 16, 5, 5, ((2, 2), (2, 2))),       # 5x5 SAME
    (3, 10, 12, 3, 16, 3, 3, ((1, 1), (1, 1))),     # an RGB image's 3x3 SAME layer: kw * C = 9 (AVX-512 only)
    (2, 9, 8, 3, 48, 3, 3, ((0, 0), (0, 0))),       # the same, VALID, three output vectors
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c[:7])))
def test_native_gradients_match_lax(case):
    *shape, pads = case
    x, w, dy = _case(*shape, pads, seed=sum(shape))
    dx_ref, dw_ref = _reference_grads(x, w, pads, dy)
    if conv_native.supported("filter_grad", x.shape, w.shape, (1, 1), pads, (1, 1), x.dtype):
        dw = jax.jit(lambda x, dy: conv_native.filter_grad(x, dy, w.shape, pads))(x, dy)
        close(dw, dw_ref, "filter gradient")
    if x.shape[3] % 16 == 0:
        dx = jax.jit(lambda dy, w: conv_native.input_grad(dy, w, x.shape, pads))(dy, w)
        close(dx, dx_ref, "input gradient")
    if w.shape[3] % 16 == 0:
        y = jax.jit(lambda x, w: conv_native.forward(x, w, pads))(x, w)
        close(y, lax.conv_general_dilated(x, w, (1, 1), pads, dimension_numbers=DN), "forward")


@pytest.mark.parametrize("case", [c for c in CASES if c[4] % 16 == 0], ids=lambda c: "x".join(map(str, c[:7])))
def test_bias_and_relu_epilogue_is_the_unfused_result_to_the_bit(case):
    *shape, pads = case
    x, w, _ = _case(*shape, pads, seed=sum(shape) + 1)
    b = rand((w.shape[3],), 5) * 0.5
    fused = jax.jit(lambda x, w, b: conv_native.forward_bias_relu(x, w, b, pads))(x, w, b)
    unfused = jax.jit(lambda x, w, b: jnp.maximum(conv_native.forward(x, w, pads) + b, 0))(x, w, b)
    np.testing.assert_array_equal(fused, unfused)
    assert 0.2 < float(jnp.mean(fused > 0)) < 0.8  # the ReLU cut, and the bias moved, a real share of outputs


def test_bias_and_relu_epilogue_keeps_nan_as_xla_maximum_does():
    x, w, _ = _case(1, 4, 12, 16, 16, 1, 1, ((0, 0), (0, 0)), seed=40)
    x = x.at[0, 1, 2, 3].set(jnp.nan)
    fused = jax.jit(lambda x, w, b: conv_native.forward_bias_relu(x, w, b, ((0, 0), (0, 0))))(x, w, jnp.zeros(16))
    assert bool(jnp.all(jnp.isnan(fused[0, 1, 2]))) and int(jnp.sum(jnp.isnan(fused))) == 16


def test_conv2d_bias_relu_forward_and_its_derivatives_match_lax():
    x, w, b = rand((3, 9, 11, 32), 41), rand((3, 3, 32, 48), 42), rand((48,), 43)

    def reference(x, w, b):
        return jnp.maximum(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN) + b, 0)

    def ours(x, w, b):
        return conv.conv2d_bias_relu_forward(x, w, b, 1, "SAME")

    assert conv.formulation("forward", x.shape, w.shape, 1, "SAME") == "native"
    close(jax.jit(ours)(x, w, b), reference(x, w, b), "conv + bias + relu")
    loss = lambda f: lambda x, w, b: jnp.sum(jnp.sin(f(x, w, b)))  # noqa: E731
    got = jax.jit(jax.grad(loss(ours), (0, 1, 2)))(x, w, b)
    for a, r, what in zip(got, jax.grad(loss(reference), (0, 1, 2))(x, w, b), ("dx", "dw", "db")):
        close(a, r, what)
    t = (rand(x.shape, 44), rand(w.shape, 45), rand(b.shape, 46))

    def hvp(f):  # reverse over reverse
        g = jax.grad(loss(f), (0, 1, 2))
        return jax.jit(jax.grad(lambda x, w, b: sum(jnp.vdot(a, v) for a, v in zip(g(x, w, b), t)), (0, 1, 2)))(x, w, b)
    for a, r in zip(hvp(ours), hvp(reference)):
        close(a, r, "Hessian-vector product", tol=1e-4)


@pytest.mark.parametrize("channels", [32, 16])  # 16: the filter gradient's tiles of a filter row's 3 taps
def test_threads_split_the_batch_with_the_same_result(monkeypatch, channels):
    x, w, dy = _case(13, 10, 10, channels, 16, 3, 3, ((1, 1), (1, 1)), seed=7)
    results = []
    for threshold in (float("inf"), 0):  # one thread, then every CPU this process may use
        monkeypatch.setattr(tuning, "CONV_NATIVE_THREAD_FLOPS", threshold)
        results.append((conv_native.filter_grad(x, dy, w.shape, ((1, 1), (1, 1))),
                        conv_native.input_grad(dy, w, x.shape, ((1, 1), (1, 1))),
                        conv_native.forward(x, w, ((1, 1), (1, 1)))))
    # the filter gradient sums fixed parts of the batch in a fixed order; each image's dx and y
    # is computed whole: so the results are the same to the bit, however the work was shared
    np.testing.assert_array_equal(results[1][0], results[0][0])
    np.testing.assert_array_equal(results[1][1], results[0][1])
    np.testing.assert_array_equal(results[1][2], results[0][2])  # and each image's y
    few = []
    x, w, dy = _case(13, 12, 12, 1, 32, 3, 3, ((0, 0), (0, 0)), seed=8)
    for threshold in (float("inf"), 0):  # the few-channel filter gradient too
        monkeypatch.setattr(tuning, "CONV_NATIVE_THREAD_FLOPS", threshold)
        few.append(conv_native.filter_grad(x, dy, w.shape, ((0, 0), (0, 0))))
    np.testing.assert_array_equal(few[1], few[0])


def test_repeated_calls_agree_to_the_bit():
    x, w, dy = _case(128, 26, 26, 32, 64, 3, 3, ((0, 0), (0, 0)), seed=11)
    dw = jax.jit(lambda x, dy: conv_native.filter_grad(x, dy, w.shape, ((0, 0), (0, 0))))
    first = np.asarray(dw(x, dy))
    for _ in range(4):
        np.testing.assert_array_equal(dw(x, dy), first)


@pytest.mark.parametrize("jit", [jax.jit, compiler.jit], ids=["jax-jit", "minikeras-jit"])
def test_conv_picks_the_native_gradients_and_matches_lax(jit):
    x, w, dy = _case(2, 9, 9, 32, 8, 3, 3, ((1, 1), (1, 1)), seed=3)
    assert conv.formulation("input_grad", x.shape, w.shape, 1, "SAME", eigen=jit is compiler.jit) == "native"
    assert conv.formulation("filter_grad", x.shape, w.shape, 1, "SAME", eigen=jit is compiler.jit) == "native"
    assert conv.formulation("filter_grad", x.shape, w.shape, 2, "SAME") != "native"      # strided
    assert conv.formulation("filter_grad", x.shape, w.shape, 1, "SAME", dtype=jnp.bfloat16) != "native"
    assert conv.formulation("input_grad", (2, 9, 9, 24), (3, 3, 24, 8)) != "native"        # 24 % 16
    assert conv.formulation("forward", (2, 14, 14, 32), (3, 3, 32, 48), 1, "SAME") == "native"
    assert conv.formulation("forward", (2, 14, 14, 32), (3, 3, 32, 40), 1, "SAME") != "native"  # 40 % 16
    assert conv.formulation("forward", (2, 7, 7, 32), (3, 3, 32, 48), 1, "SAME") != "native"    # 7 wide
    assert conv.formulation("forward", (2, 14, 14, 1), (3, 3, 1, 48), 1, "SAME") == "taps"
    dx_ref, dw_ref = _reference_grads(x, w, ((1, 1), (1, 1)), dy)
    dx, dw = jit(lambda x, w, dy: (conv.conv2d_input_grad(dy, w, x.shape, 1, "SAME"),
                                   conv.conv2d_filter_grad(x, dy, w.shape, 1, "SAME")))(x, w, dy)
    close(dx, dx_ref, "input gradient")
    close(dw, dw_ref, "filter gradient")
    x, w = rand((2, 14, 14, 32), 4), rand((3, 3, 32, 48), 5)
    close(jit(lambda x, w: conv.conv2d_forward(x, w, 1, "SAME"))(x, w),
          lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN), "forward")


def test_narrow_rows_take_the_native_forward_only_with_few_output_channels():
    def forward(x_shape, o):
        return conv.formulation("forward", x_shape, (3, 3, x_shape[3], o), 1, "SAME", eigen=True)
    assert forward((2, 8, 8, 64), 64) == "native"    # ResNet-20's 8x8 stage
    assert forward((2, 8, 8, 64), 128) == "xla"      # more output channels: XLA's convolution is faster
    assert forward((2, 7, 7, 64), 64) == "xla"       # narrower still
    assert forward((2, 10, 10, 64), 128) == "native"
    x, w = rand((3, 8, 8, 64), 50), rand((3, 3, 64, 64), 51)
    y = compiler.jit(lambda x, w: conv.conv2d_forward(x, w, 1, "SAME"))(x, w)
    close(y, lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=DN), "8x8 forward")


def test_second_order_through_the_native_gradients():
    """Reverse over reverse: a Hessian-vector product of a loss of a conv that is native throughout."""
    strides, padding = (1, 1), "SAME"

    @jax.custom_vjp
    def our_conv(x, w):
        return conv.conv2d_forward(x, w, strides, padding, method="native")

    def bwd(res, dy):
        x, w = res
        return (conv.conv2d_input_grad(dy, w, x.shape, strides, padding, method="native"),
                conv.conv2d_filter_grad(x, dy, w.shape, strides, padding, method="native"))
    our_conv.defvjp(lambda x, w: (our_conv(x, w), (x, w)), bwd)

    x, w = rand((2, 6, 6, 16), 20), rand((3, 3, 16, 16), 21)
    tx, tw = rand(x.shape, 22), rand(w.shape, 23)
    ref = lambda x, w: lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=DN)  # noqa: E731

    def hvp(conv_fn):
        loss = lambda x, w: jnp.sum(jnp.tanh(conv_fn(x, w)) ** 2)  # noqa: E731
        g = jax.grad(loss, argnums=(0, 1))
        return jax.jit(jax.grad(lambda x, w, tx, tw: sum(jnp.vdot(a, t) for a, t in zip(g(x, w), (tx, tw))),
                                argnums=(0, 1)))(x, w, tx, tw)
    for a, b in zip(hvp(our_conv), hvp(ref)):
        close(a, b, "Hessian-vector product", tol=1e-4)


def test_native_gradients_under_vmap():
    xs, w, dys = rand((3, 2, 6, 6, 16), 30), rand((3, 3, 16, 4), 31), rand((3, 2, 4, 4, 4), 32)
    pads = ((0, 0), (0, 0))
    dws = jax.vmap(lambda x, dy: conv.conv2d_filter_grad(x, dy, w.shape, method="native"))(xs, dys)
    for x, dy, dw in zip(xs, dys, dws):
        close(dw, _reference_grads(x, w, pads, dy)[1], "filter gradient under vmap")


def test_method_native_names_what_it_cannot_take():
    x, w, dy = _case(1, 8, 8, 8, 4, 3, 3, ((0, 0), (0, 0)), seed=0)
    with pytest.raises(ValueError, match=r"multiple of 16 input channels \(or of 16 output.*\(3, 3, 8, 4\)"):
        conv.conv2d_filter_grad(x, dy, w.shape, method="native")
    with pytest.raises(ValueError, match=r"multiple of 16 output channels.*\(3, 3, 8, 4\)"):
        conv.conv2d_forward(x, w, method="native")
    x = rand((1, 8, 8, 16), 1)
    with pytest.raises(ValueError, match=r"strides \(2, 2\)"):
        conv.conv2d_input_grad(rand((1, 4, 4, 4), 2), rand((3, 3, 16, 4), 3), x.shape, 2, "SAME", method="native")


def _python(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def test_turned_off_by_the_environment_and_xla_used_instead():
    done = _python("from minikeras.xla_cpu import conv, conv_native\n"
                   "print(conv_native.available(), conv_native.unavailable_reason(), '|',"
                   " conv.formulation('filter_grad', (8, 26, 26, 32), (3, 3, 32, 64), eigen=True))",
                   MINIKERAS_NATIVE="0", JAX_PLATFORMS="cpu")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False MINIKERAS_NATIVE=0 turns native kernels off | xla"


def test_a_failed_build_says_why_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIKERAS_HOME", str(tmp_path))
    monkeypatch.setenv("CXX", sys.executable)  # not a compiler: the build fails
    source = tmp_path / "broken.cc"
    source.write_text("this is not C++\n")
    monkeypatch.setattr(native_build, "_source_path", lambda name: str(source))
    native_build.load_library.cache_clear()
    try:
        assert native_build.load_library("broken.cc") is None
        assert native_build.why_unavailable("broken.cc").startswith("building broken.cc failed:")
        assert [f.name for f in tmp_path.joinpath("native").iterdir()] == [".build.lock"]  # no library
    finally:
        native_build.load_library.cache_clear()


def test_processes_started_at_once_build_once_into_the_home_directory_and_later_ones_load(tmp_path):
    code = ("from minikeras.xla_cpu import native_build as b\n"
            "print(b.load_library('conv_native.cc') is not None, b.why_unavailable('conv_native.cc'))")
    env = {**os.environ, "MINIKERAS_HOME": str(tmp_path)}
    runs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env) for _ in range(3)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert all(run.returncode == 0 and out.strip() == "True" for run, (out, _) in zip(runs, outputs)), outputs
    count = len(native_build.SOURCES)
    announced = [err for _, err in outputs if f"compiling {count} native CPU kernel libraries" in err]
    assert len(announced) == 1, outputs  # one process built, the others waited and loaded its libraries
    progress = [line for line in announced[0].splitlines() if line.startswith("minikeras: built ")]
    steps = [line.split("(")[1].split(",")[0] for line in progress]
    assert steps == [f"{k}/{count}" for k in range(1, count + 1)], announced
    assert progress[-1].endswith("native kernels ready"), announced
    files = sorted(f for f in tmp_path.joinpath("native").iterdir() if f.name != ".build.lock")
    # every kernel library, built together; nothing half-written left
    assert [f.name.split("-")[0] for f in files] == sorted(s[:-3] for s in native_build.SOURCES), files
    assert all(f.suffix == ".so" for f in files)
    built = [f.stat().st_mtime_ns for f in files]
    later = _python(code, MINIKERAS_HOME=str(tmp_path))
    assert later.returncode == 0 and later.stdout.strip() == "True", later.stdout + later.stderr
    assert "building" not in later.stderr
    assert sorted(f for f in tmp_path.joinpath("native").iterdir() if f.name != ".build.lock") == files
    assert [f.stat().st_mtime_ns for f in files] == built  # loaded, not built again


def test_falling_back_to_xla_warns_once_with_the_reason_and_status_says_why():
    done = _python("import warnings\n"
                   "warnings.simplefilter('always')\n"
                   "import minikeras as mk\n"
                   "print(mk.config.native_kernels())\n"
                   "print(mk.config.reusing_freed_host_memory(), mk.config.native_kernels().on)",
                   CXX="", PATH=os.path.dirname(sys.executable), MINIKERAS_HOME="/nonexistent-minikeras-home")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("RuntimeWarning: minikeras runs XLA's CPU kernels instead of its native ones") == 1
    assert "no C++ compiler found" in done.stderr and "no C++ compiler found" in done.stdout
    assert done.stdout.strip().endswith("inf False")  # the host-memory setting is made at import (all kept)
    off = _python("import minikeras as mk; "
                  "print(mk.config.native_kernels().reason, mk.config.reusing_freed_host_memory())",
                  MINIKERAS_NATIVE="0", MINIKERAS_REUSE_HOST_MEMORY="0")
    assert off.returncode == 0 and "Warning" not in off.stderr, off.stderr
    assert off.stdout.strip() == "MINIKERAS_NATIVE=0 turns native kernels off None"


STRIDED_CASES = [  # n, h, w, c, o, kh, kw, strides, pads
    (2, 13, 13, 3, 64, 7, 7, (2, 2), ((0, 0), (0, 0))),     # a ResNet stem (3 channels, 4 vectors), VALID
    (2, 11, 12, 16, 32, 3, 3, (2, 2), ((0, 1), (0, 1))),    # 'SAME' at stride 2: padding below and right
    (2, 10, 9, 16, 16, 3, 3, (2, 3), ((0, 0), (0, 0))),     # VALID: x's last row and columns unread
    (1, 9, 29, 5, 48, 3, 2, (3, 2), ((2, 1), (1, 0))),      # pads on every side, rows of 2 tiles
    (3, 8, 8, 32, 16, 1, 1, (2, 2), ((0, 0), (0, 0))),      # 1x1
]


@pytest.mark.parametrize("case", STRIDED_CASES,
                         ids=lambda c: "x".join(map(str, c[:7])) + "s" + "x".join(map(str, c[7])))
def test_strided_forward_matches_lax_and_its_epilogue_is_the_unfused_result(case):
    n, h, w_, c, o, kh, kw, strides, pads = case
    x, w, b = rand((n, h, w_, c), sum(case[:7])), rand((kh, kw, c, o), 1), rand((o,), 2) * 0.5
    assert conv_native.supported("forward", x.shape, w.shape, strides, pads, (1, 1), x.dtype)
    y = jax.jit(lambda x, w: conv_native.forward(x, w, pads, strides))(x, w)
    close(y, lax.conv_general_dilated(x, w, strides, pads, dimension_numbers=DN), "strided forward")
    fused = jax.jit(lambda x, w, b: conv_native.forward_bias_relu(x, w, b, pads, strides))(x, w, b)
    np.testing.assert_array_equal(fused, jnp.maximum(y + b, 0))


def test_strided_forward_is_native_where_rows_are_wide_and_its_derivatives_match_lax(monkeypatch):
    x, w, b = rand((2, 21, 21, 16), 60), rand((3, 3, 16, 32), 61), rand((32,), 62)
    assert conv.formulation("forward", x.shape, w.shape, 2, "SAME", eigen=True) == "native"    # 11 wide
    assert conv.formulation("forward", (2, 16, 16, 32), (3, 3, 32, 64), 2, "SAME", eigen=True) == "xla"  # 8 wide
    assert not conv_native.supported("input_grad", x.shape, w.shape, (2, 2), ((0, 1), (0, 1)), (1, 1), x.dtype)
    calls = []
    monkeypatch.setattr(conv_native, "forward", lambda *a: calls.append(a[3]) or _native_forward(*a))
    monkeypatch.setattr(conv_native, "forward_bias_relu", lambda *a: calls.append(a[4]) or _native_bias_relu(*a))

    def reference(x, w, b):
        return jnp.maximum(lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=DN) + b, 0)

    def ours(x, w, b):
        return conv.conv2d_bias_relu_forward(x, w, b, 2, "SAME") + conv.conv2d_forward(x, w, 2, "SAME")

    def both_reference(x, w, b):
        return reference(x, w, b) + lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=DN)

    loss = lambda f: lambda x, w, b: jnp.sum(jnp.sin(f(x, w, b)))  # noqa: E731
    close(compiler.jit(ours)(x, w, b), both_reference(x, w, b), "strided conv (+ bias + relu)")
    for a, r, what in zip(compiler.jit(jax.grad(loss(ours), (0, 1, 2)))(x, w, b),
                          jax.grad(loss(both_reference), (0, 1, 2))(x, w, b), ("dx", "dw", "db")):
        close(a, r, what)
    assert calls and set(calls) == {(2, 2)}  # both forwards ran strided on the kernel
    t = (rand(x.shape, 63), rand(w.shape, 64), rand(b.shape, 65))

    def hvp(f, jit):  # reverse over reverse
        g = jax.grad(loss(f), (0, 1, 2))
        return jit(jax.grad(lambda x, w, b: sum(jnp.vdot(a, v) for a, v in zip(g(x, w, b), t)), (0, 1, 2)))(x, w, b)
    for a, r in zip(hvp(ours, compiler.jit), hvp(both_reference, jax.jit)):
        close(a, r, "Hessian-vector product", tol=1e-4)
    monkeypatch.setattr(tuning, "CONV_NATIVE_STRIDED_FORWARD", False)
    assert conv.formulation("forward", x.shape, w.shape, 2, "SAME", eigen=True) == "xla"
    with pytest.raises(ValueError, match=r"\(stride 1\).*strides \(2, 2\)"):
        conv.conv2d_forward(x, w, 2, "SAME", method="native")


_native_forward, _native_bias_relu = conv_native.forward, conv_native.forward_bias_relu


def test_strided_forward_kernel_refuses_an_output_its_strides_cannot_make():
    x, w = rand((1, 9, 9, 16), 70), rand((3, 3, 16, 16), 71)
    # 6 rows at stride 2 read 13 rows: 4 zero rows below x, more than a 3x3 filter's 2
    call = jax.ffi.ffi_call("minikeras_conv2d_forward", jax.ShapeDtypeStruct((1, 6, 4, 16), jnp.float32))
    with pytest.raises(Exception, match=r"conv2d: shapes x \(1, 9, 9, 16\), y \(1, 6, 4, 16\).*strides \(2, 2\)"):
        call(x, w, pad_top=np.int64(0), pad_left=np.int64(0), stride_h=np.int64(2), stride_w=np.int64(2),
             threads=np.int64(1))
