"""mk.function(reduce_retracing=True) generalises shapes as tf.function does: a call that no
trace runs is traced with the most specific signature that also covers the signatures traced
before (None where their sizes differ), once for all sizes. The tracing counts marked "TF 2.21"
came from running the same call sequences with tf.function in TensorFlow 2.21."""
import warnings

import numpy as np
import pytest

import minikeras as mk


def _traced_shapes(shapes):
    seen = []

    @mk.function(reduce_retracing=True)
    def f(x):
        seen.append(x.shape)
        return x * 2.0

    counts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the frequent-retracing warning, where a sequence asks for it
        for shape in shapes:
            np.testing.assert_allclose(f(mk.ones(shape)).numpy(), np.full(shape, 2.0))
            counts.append(f.experimental_get_tracing_count())
    return counts, seen


def test_sizes_that_differ_become_none():
    # TF 2.21: counts [1, 2, 2, 3, 3], traces (2, 3), (None, 3), (None, None)
    counts, seen = _traced_shapes([(2, 3), (4, 3), (5, 3), (4, 6), (7, 1)])
    assert counts == [1, 2, 2, 3, 3]
    assert seen == [(2, 3), (None, 3), (None, None)]


def test_the_same_shape_is_not_traced_again():
    # TF 2.21: counts [1, 1, 2], traces (2, 3), (None, 3)
    assert _traced_shapes([(2, 3), (2, 3), (3, 3)]) == ([1, 1, 2], [(2, 3), (None, 3)])


def test_a_new_rank_is_traced_with_its_own_shapes():
    # TF 2.21: counts [1, 2, 2, 2, 3, 3, 3, 3], traces (2,), (None,), <unknown rank>: TensorFlow
    # generalises (None,) and (2, 2) to an unknown rank. An XLA program has a fixed rank, so here
    # (2, 2) is traced for its shape and (3, 3) generalises it to (None, None): one trace more.
    counts, seen = _traced_shapes([(2,), (3,), (4,), (2,), (2, 2), (3, 3), (2, 3), (5,)])
    assert counts == [1, 2, 2, 2, 3, 4, 4, 4]
    assert seen == [(2,), (None,), (2, 2), (None, None)]


def test_each_argument_generalises_on_its_own():
    seen = []

    @mk.function(reduce_retracing=True)
    def h(x, y):
        seen.append((x.shape, y.shape))
        return x

    for a, b in [((2,), (3,)), ((4,), (3,)), ((5,), (6,)), ((5,), (6,))]:
        h(mk.ones(a), mk.ones(b))
    # TF 2.21: tracing count 3, traces ((2,), (3,)), ((None,), (3,)), ((None,), (None,))
    assert h.experimental_get_tracing_count() == 3
    assert seen == [((2,), (3,)), ((None,), (3,)), ((None,), (None,))]


def test_python_values_are_not_generalised():
    seen = []

    @mk.function(reduce_retracing=True)
    def k(x, n):
        seen.append((x.shape, n))
        return x * n

    with pytest.warns(UserWarning, match="triggered mk.function retracing"):
        for shape, n in [((2,), 1), ((3,), 1), ((3,), 2), ((4,), 2), ((4,), 3)]:
            np.testing.assert_allclose(k(mk.ones(shape), n).numpy(), np.full(shape, float(n)))
    # TF 2.21: tracing count 5, traces ((2,), 1), ((None,), 1), ((3,), 2), ((None,), 2), ((4,), 3)
    assert k.experimental_get_tracing_count() == 5
    assert seen == [((2,), 1), ((None,), 1), ((3,), 2), ((None,), 2), ((4,), 3)]


def test_a_body_that_needs_concrete_sizes_warns_once_and_traces_per_shape():
    @mk.function(reduce_retracing=True)
    def halves(x):
        a, b = mk.split(x, 2, axis=0)
        return a - b

    halves(mk.ones((4, 3)))
    with pytest.warns(UserWarning, match=r"halves\) could not be traced once for \[TensorSpec\(shape=\(None, 3\)"):
        np.testing.assert_allclose(halves(mk.reshape(mk.range(6.0), (2, 3))).numpy(), [[-3.0, -3.0, -3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (None, 3) is not tried again
        halves(mk.ones((6, 3)))
    # TF 2.21: [[-3. -3. -3.]], tracing count 2 (TensorFlow splits at run time); here the
    # (None, 3) trace fails, so each shape gets a trace of its own
    assert halves.experimental_get_tracing_count() == 3


def test_a_general_program_compiles_new_sizes_without_tracing():
    calls = []

    @mk.function(reduce_retracing=True)
    def total(x):
        calls.append(1)
        return mk.reduce_sum(x)

    for n in range(1, 7):
        assert float(total(mk.ones((n,)))) == float(n)
    # TF 2.21: tracing count 2 for sizes 1..6
    assert len(calls) == 2 and total.experimental_get_tracing_count() == 2
    assert [p.general for p in total.programs()] == [False, True]
