"""mk.cond and mk.custom_gradient against tf.cond / tf.custom_gradient: values eagerly and
compiled, gradients through them (checked against closed forms), and the errors for misuse."""
import numpy as np
import pytest

import minikeras as mk


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


# -- cond ----------------------------------------------------------------------------------------------
def test_cond_eager_runs_only_the_chosen_branch():
    ran = []

    def yes():
        ran.append("true")
        return mk.constant(1.0)

    def no():
        ran.append("false")
        return mk.constant(0.0)

    assert float(mk.cond(mk.constant(2.0) > 1.0, yes, no)) == 1.0
    assert float(mk.cond(False, yes, no)) == 0.0
    assert ran == ["true", "false"]


def test_cond_eager_is_differentiable():
    x = mk.constant(3.0)
    for value, expected in ((3.0, 6.0), (1.0, 5.0)):
        x = mk.constant(value)
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = mk.cond(x > 2.0, lambda: x * x, lambda: x * 5.0)
        assert float(tape.gradient(y, x)) == expected


def test_cond_compiled_selects_by_the_runtime_value():
    @mk.function
    def f(x):
        return mk.cond(x > 2.0, lambda: x * x, lambda: x + 1.0)

    assert float(f(mk.constant(3.0))) == 9.0
    assert float(f(mk.constant(1.0))) == 2.0
    assert f.tracing_count == 1


def test_cond_compiled_is_differentiable():
    @mk.function
    def grad(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = mk.cond(x > 2.0, lambda: mk.sin(x) * x, lambda: x * 5.0)
        return tape.gradient(y, x)

    close(grad(mk.constant(3.0)), np.cos(3.0) * 3.0 + np.sin(3.0))
    assert float(grad(mk.constant(1.0))) == 5.0


def test_cond_compiled_assigns_only_in_the_chosen_branch():
    v = mk.Variable(0.0)

    @mk.function
    def bump(x):
        return mk.cond(x > 0.0, lambda: v.assign_add(1.0).read_value(), lambda: v.assign_sub(10.0).read_value())

    assert float(bump(mk.constant(1.0))) == 1.0
    assert float(bump(mk.constant(1.0))) == 2.0
    assert float(bump(mk.constant(-1.0))) == -8.0
    assert float(v) == -8.0


def test_cond_with_nested_outputs():
    @mk.function
    def f(x):
        return mk.cond(x > 0.0, lambda: {"a": x, "b": (x * 2.0,)}, lambda: {"a": -x, "b": (x * 3.0,)})

    out = f(mk.constant(-2.0))
    assert float(out["a"]) == 2.0 and float(out["b"][0]) == -6.0


def test_cond_branches_must_agree():
    @mk.function
    def structure(x):
        return mk.cond(x > 0.0, lambda: (x, x), lambda: x)

    @mk.function
    def shapes(x):
        return mk.cond(x[0] > 0.0, lambda: x, lambda: x[:1])

    with pytest.raises(ValueError, match="same structure"):
        structure(mk.constant(1.0))
    with pytest.raises(ValueError, match=r"\(2,\).*\(1,\)"):
        shapes(mk.constant([1.0, 2.0]))


def test_cond_compiled_runs_one_branch_in_the_program():
    @mk.function
    def f(x):
        return mk.cond(x > 2.0, lambda: mk.sin(x) * x, lambda: x + 1.0)

    assert float(f(mk.constant(1.0))) == 2.0
    close(f(mk.constant(3.0)), np.sin(3.0) * 3.0)
    jaxpr = str(f.programs()[0].jaxpr)
    assert "cond[" in jaxpr and "select_n" not in jaxpr  # lax.cond, not both branches selected


def test_cond_compiled_python_numbers_become_tensors():
    @mk.function
    def f(x):
        return mk.cond(x > 0.0, lambda: 1.0, lambda: 0.0)

    out = f(mk.constant(3.0))
    assert isinstance(out, mk.Tensor) and float(out) == 1.0
    # eagerly TF 2.21 returns the branch's value as it is: tf.cond(True, lambda: 1.0, ...) is 1.0
    assert mk.cond(True, lambda: 2, lambda: 3) == 2
    assert mk.switch_case(mk.constant(1), [lambda: 1.0, lambda: 2.0]) == 2.0


def test_cond_compiled_second_order_through_the_taken_branch():
    @mk.function
    def second(x):
        with mk.GradientTape() as outer:
            outer.watch(x)
            with mk.GradientTape() as inner:
                inner.watch(x)
                y = mk.cond(x > 0.0, lambda: x * x * x, lambda: mk.sin(x))
            g = inner.gradient(y, x)
        return g, outer.gradient(g, x)

    g, h = second(mk.constant(2.0))
    assert float(g) == 12.0 and float(h) == 12.0
    g, h = second(mk.constant(-1.0))
    close(g, np.cos(-1.0))
    close(h, -np.sin(-1.0))


def test_cond_argument_errors():
    with pytest.raises(TypeError, match="true_fn and false_fn"):
        mk.cond(True, lambda: 1.0)
    with pytest.raises(ValueError, match="scalar predicate"):
        mk.cond(mk.constant([True, False]), lambda: 1.0, lambda: 0.0)


# -- switch_case and case -----------------------------------------------------------------------------
def test_switch_case_eager_and_out_of_range_runs_default_or_last():
    branches = [lambda: mk.constant(17), lambda: mk.constant(31)]
    assert int(mk.switch_case(mk.constant(1), branches)) == 31  # the tf.switch_case docstring example
    assert int(mk.switch_case(mk.constant(5), branches)) == 31  # out of range, no default: the last branch
    assert int(mk.switch_case(mk.constant(-1), branches, default=lambda: mk.constant(-1))) == -1
    assert int(mk.switch_case(mk.constant(0), {0: branches[0], 1: branches[1]})) == 17


def test_switch_case_compiled_and_differentiable():
    @mk.function
    def f(i, x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = mk.switch_case(i, [lambda: x * x, lambda: x * 3.0, lambda: mk.sin(x)])
        return y, tape.gradient(y, x)

    @mk.function
    def value(i, x):
        return mk.switch_case(i, [lambda: x * x, lambda: x * 3.0, lambda: mk.sin(x)])

    x = mk.constant(2.0)
    for i, (y_ref, g_ref) in enumerate([(4.0, 4.0), (6.0, 3.0), (np.sin(2.0), np.cos(2.0))]):
        y, g = f(mk.constant(i), x)
        close(y, y_ref)
        close(g, g_ref)
        close(value(mk.constant(i), x), y_ref)
    assert "cond[" in str(value.programs()[0].jaxpr)


def test_case_first_true_predicate_wins():
    x, y = mk.constant(1), mk.constant(2)
    # tf.case's docstring: `if (x < y) return 17; else if (x > y) return 23; else return -1`
    out = mk.case([(mk.less(x, y), lambda: mk.constant(17)), (mk.greater(x, y), lambda: mk.constant(23))],
                  default=lambda: mk.constant(-1))
    assert int(out) == 17

    @mk.function
    def f(a, b):
        return mk.case([(a < b, lambda: a + 100), (a > b, lambda: b + 200)], default=lambda: a * 0 - 1)

    assert int(f(x, y)) == 101 and int(f(y, x)) == 201 and int(f(x, x)) == -1


def test_case_exclusive_and_argument_errors():
    t = mk.constant(True)
    with pytest.raises(ValueError, match="exclusive=True, but 2 predicates are True"):
        mk.case([(t, lambda: 1.0), (t, lambda: 2.0)], exclusive=True)
    with pytest.raises(TypeError, match=r"pred_fn_pairs\[0\]"):
        mk.case([t])
    with pytest.raises(TypeError, match="scalar int"):
        mk.switch_case(mk.constant(1.0), [lambda: 1.0])


# -- custom_gradient ---------------------------------------------------------------------------------
@mk.custom_gradient
def clip_gradient(x):
    def grad(upstream):
        return mk.clip_by_value(upstream, -1.0, 1.0)
    return mk.identity(x), grad


@mk.custom_gradient
def log1pexp(x):
    e = mk.exp(x)

    def grad(upstream):
        return upstream * (1.0 - 1.0 / (1.0 + e))
    return mk.math.log(1.0 + e), grad


def test_custom_gradient_replaces_the_gradient():
    x = mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = clip_gradient(x) * 5.0
    assert float(y) == 15.0 and float(tape.gradient(y, x)) == 1.0


def test_custom_gradient_numerically_stable_example_from_tf_docs():
    x = mk.constant(100.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert float(tape.gradient(y, x)) == 1.0  # the naive gradient is NaN


def test_custom_gradient_with_two_inputs_and_a_none_gradient():
    @mk.custom_gradient
    def scaled(x, scale):
        def grad(upstream):
            return upstream * scale, None
        return x * scale, grad

    x, s = mk.constant(2.0), mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch([x, s])
        y = scaled(x, s)
    gx, gs = tape.gradient(y, [x, s])
    assert float(gx) == 3.0 and gs is None


def test_custom_gradient_wrong_count_says_how_many_were_expected():
    @mk.custom_gradient
    def pair(x, y):
        return x * y, lambda upstream: upstream

    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = pair(x, x)
    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1"):
        tape.gradient(y, x)


def test_custom_gradient_with_variables():
    v = mk.Variable(2.0, name="scale")

    @mk.custom_gradient
    def times_v(x):
        def grad(upstream, variables=None):
            assert variables == [v]
            return upstream * v, [upstream * x * 10.0]
        return x * v, grad

    x = mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = times_v(x)
    gx, gv = tape.gradient(y, [x, v])
    assert float(y) == 6.0 and float(gx) == 2.0 and float(gv) == 30.0


def test_custom_gradient_with_variables_wrong_count():
    v = mk.Variable(2.0)

    @mk.custom_gradient
    def times_v(x):
        def grad(upstream, variables=None):
            return upstream * v, [upstream, upstream]
        return x * v, grad

    x = mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = times_v(x)
    with pytest.raises(ValueError, match="expected to return 1 variable gradients, but returned 2"):
        tape.gradient(y, x)


def test_custom_gradient_reading_variables_needs_a_variables_keyword():
    v = mk.Variable(2.0, name="scale")

    @mk.custom_gradient
    def times_v(x):
        return x * v, lambda upstream: upstream * v

    x = mk.constant(3.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(TypeError, match="variables="):
            times_v(x)


def test_custom_gradient_second_order():
    @mk.custom_gradient
    def cube(x):
        def grad(upstream):
            return upstream * 3.0 * x * x
        return x * x * x, grad

    x = mk.constant(1.5)
    with mk.GradientTape() as outer:
        outer.watch(x)
        with mk.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        g = inner.gradient(y, x)
    close(g, 3 * 1.5 ** 2)
    close(outer.gradient(g, x), 6 * 1.5)


def test_custom_gradient_returning_its_input():
    @mk.custom_gradient
    def passthrough(x):
        return x, lambda upstream: upstream * 2.0

    x = mk.constant(1.0)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = passthrough(x)
    assert float(tape.gradient(y, x)) == 2.0


def test_custom_gradient_inside_a_function_and_repeated():
    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = clip_gradient(x) * 5.0
        return tape.gradient(y, x)

    for _ in range(3):
        assert float(step(mk.constant(2.0))) == 1.0
        with mk.GradientTape() as tape:  # eager, the same structure every time
            x = mk.constant(2.0)
            tape.watch(x)
            y = clip_gradient(x) * 5.0
        assert float(tape.gradient(y, x)) == 1.0


def test_grad_pass_through():
    x = mk.constant(2.7)
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = mk.grad_pass_through(mk.round)(x) * 2.0
    assert float(y) == 6.0 and float(tape.gradient(y, x)) == 2.0
