"""The autograph rewrite itself: what to_code shows, what is left alone, how the converted
function keeps the original's closure, defaults, globals and line numbers, and the
constructs that cannot be converted (an error naming the line and what to do)."""
import inspect
import warnings

import pytest

import minikeras as mk
from minikeras import autograph

SCALE = 2.0


def while_tanh(x):
    while mk.reduce_sum(x) > 1:
        x = mk.tanh(x)
    return x


def test_to_code_shows_the_converted_source():
    code = mk.autograph.to_code(while_tanh)
    assert "ag__.while_stmt(loop_test_0, loop_body_0" in code
    assert "nonlocal x" in code and "return x" in code
    compiled = mk.function(while_tanh)
    assert mk.autograph.to_code(compiled) == code  # also given the mk.function


def test_to_code_of_returns_breaks_and_continues():
    def f(x):
        for v in x:
            if v > 3:
                break
            if v < 0:
                continue
            if v == 2:
                return v
        return x[0]

    code = mk.autograph.to_code(f)
    assert "break_" in code and "continue_" in code and "do_return = True" in code
    assert "ag__.for_stmt(x, extra_test_" in code and "return ag__.retval(retval_)" in code


def test_functions_without_control_flow_are_returned_unchanged():
    def plain(x):
        return x[0] * 2.0

    assert autograph.convert(plain) is plain
    square = lambda x: x * x
    assert autograph.convert(square) is square
    assert autograph.convert(len) is len


def test_python_semantics_on_python_values():
    def f(items, flag):
        total = 0
        for i in items:
            if i % 2 == 0 and flag:
                continue
            total += i
        result = "big" if total > 5 else "small"
        return total, result, not flag

    g = autograph.convert(f)
    assert g([1, 2, 3, 4, 5], True) == f([1, 2, 3, 4, 5], True) == (9, "big", False)
    assert g([1, 2], False) == f([1, 2], False)


def test_closure_defaults_and_globals_stay_live():
    offset = 1.0

    def f(x, times=2):
        for _ in range(times):
            x = x * SCALE + offset
        return x

    g = autograph.convert(f)
    assert g(1.0) == 7.0
    offset = 10.0  # the converted function sees the closure cell, as the original does
    assert g(1.0) == f(1.0) == 34.0
    assert g.__name__ == "f" and inspect.signature(g) == inspect.signature(f)


def test_methods_and_zero_argument_super():
    class Base:
        def value(self, x):
            return x + 1

    class Child(Base):
        def value(self, x):
            if x > 0:
                return super().value(x) * 10
            return 0

    child = Child()
    converted = autograph.convert(child.value)
    assert converted(1) == 20 and converted(-1) == 0


def test_error_lines_are_the_files_lines():
    def f(x):
        if x > 0:
            y = x
        return y

    g = mk.function(f)
    first_line = inspect.getsourcelines(f)[1]
    with pytest.raises(ValueError, match=f"the `if` at line {first_line + 1}"):
        g(mk.constant(1.0))


def test_return_in_try_cannot_be_converted():
    def f(x):
        for v in x:
            try:
                break
            finally:
                pass
        return x

    line = inspect.getsourcelines(f)[1] + 2  # the `try`
    with pytest.raises(autograph.ConversionError, match=f"line {line}: `break` inside a `try` statement"):
        mk.autograph.to_code(f)


def test_generators_cannot_be_converted():
    def gen(x):
        while x:
            yield x

    with pytest.raises(autograph.ConversionError, match="generator"):
        autograph.convert(gen)


def test_a_function_without_source_runs_as_written_with_a_warning():
    namespace = {"mk": mk}
    exec("def f(x):\n    if x > 0:\n        return x\n    return -x\n", namespace)  # noqa: S102 - a function with no source file
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = autograph.convert(namespace["f"])
    assert g is namespace["f"] and "could not convert" in str(caught[0].message)


COUNTER = 0


def test_globals_nested_functions_and_classes_keep_python_scoping():
    def f(n):
        global COUNTER
        total = 0

        def add(k):
            nonlocal total
            if k > 0:
                total += k

        class Box:
            size = 3 if n > 1 else 1

        for i in range(n):
            add(i)
            if i % 2:
                COUNTER += 1
        return total, Box.size

    g = autograph.convert(f)
    assert g(4) == (6, 3)
    assert COUNTER == 2
