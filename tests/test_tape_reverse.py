"""The one reverse loop (minikeras.tape.reverse) on a hand-made graph, checked by hand."""
import numpy as np

from minikeras.tape.reverse import reverse_accumulate


def _run(steps, seeds, keep, tracked):
    """Steps are (name, inputs, outputs); each backward multiplies the cotangent by a
    per-input factor, so every result is a product of factors along the paths."""
    factors = {"double": (2.0,), "mul": (3.0, 5.0), "split": (7.0,)}
    calls = []

    def backward(step, cotangents):
        calls.append((step, tuple(cotangents)))
        total = sum(c for c in cotangents if c is not None)
        return [total * f for f in factors[step]]

    return reverse_accumulate(steps, seeds, keep, tracked, backward, lambda a, b: a + b), calls


def test_paths_are_summed_and_intermediates_dropped():
    # a -> double -> b ; (a, b) -> mul -> c
    steps = [("double", ["a"], ["b"]), ("mul", ["a", "b"], ["c"])]
    grads, _ = _run(steps, [("c", 1.0)], keep={"a"}, tracked={"a", "b", "c"})
    # dc/da = 3 (direct) + 5 * 2 (through b)
    assert grads == {"a": 13.0}


def test_a_seed_given_twice_is_summed_and_kept_keys_survive():
    steps = [("double", ["a"], ["b"])]
    grads, _ = _run(steps, [("b", 1.0), ("b", 2.0)], keep={"a", "b"}, tracked={"a", "b"})
    assert grads == {"b": 3.0, "a": 6.0}


def test_untracked_inputs_get_nothing_and_steps_without_cotangent_are_skipped():
    steps = [("double", ["x"], ["unused"]), ("mul", ["a", "const"], ["c"])]
    grads, calls = _run(steps, [("c", 1.0)], keep={"a", "const", "x"}, tracked={"a", "c", "x", "unused"})
    assert grads == {"a": 3.0}
    assert [step for step, _ in calls] == ["mul"]  # "double" had no cotangent


def test_multi_output_steps_see_none_for_outputs_without_cotangent():
    steps = [("split", ["a"], ["p", "q"])]
    grads, calls = _run(steps, [("q", np.float32(1.0))], keep={"a"}, tracked={"a", "p", "q"})
    assert calls == [("split", (None, np.float32(1.0)))]
    assert grads == {"a": 7.0}
