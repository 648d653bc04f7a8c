"""``programs.ProgramCache``: which program runs a call, and which signature a new trace gets.

The tf.function retracing tests (tests/test_function_retracing.py, test_function_signatures.py)
check the same rules through ``mk.function``; these check the cache's own contract with
stand-in programs, without tracing.
"""
import jax

from minikeras.programs.program_cache import ProgramCache

TREE = jax.tree_util.tree_structure(((0,), {}))


def tensor(*shape, dtype="float32"):
    return (("T", shape, dtype),)


def test_an_exact_program_runs_its_own_signature_only():
    cache = ProgramCache(None, reduce_retracing=False)
    cache.store(TREE, tensor(2, 3), "exact")
    assert cache.lookup(TREE, tensor(2, 3)) == "exact"
    assert cache.lookup(TREE, tensor(4, 3)) is None
    assert cache.lookup(TREE, tensor(2, 3, dtype="int32")) is None
    assert cache.target(TREE, tensor(4, 3)) is None  # no input signature, no reduce_retracing
    assert len(cache) == 1 and cache.programs() == ["exact"]


def test_the_most_specific_general_program_runs_a_call():
    cache = ProgramCache(None, reduce_retracing=False)
    cache.store(TREE, tensor("d0", "d1"), "any")
    cache.store(TREE, tensor("d0", 3), "three columns")
    assert cache.lookup(TREE, tensor(5, 3)) == "three columns"
    assert cache.lookup(TREE, tensor(5, 4)) == "any"
    assert cache.lookup(TREE, tensor(0, 3)) is None  # a symbolic size is at least 1


def test_an_input_signature_targets_its_none_dimensions_once():
    cache = ProgramCache([(None, 3)], reduce_retracing=False)
    target = cache.target(TREE, tensor(2, 3))
    assert target == tensor("d0", 3)
    cache.store(TREE, target, "general", serves=tensor(2, 3))
    assert cache.lookup(TREE, tensor(7, 3)) == "general"
    assert cache.target(TREE, tensor(0, 3)) is None  # size 0: traced with its own shapes


def test_a_failed_general_trace_is_not_tried_again():
    cache = ProgramCache([(None, 3)], reduce_retracing=False)
    target = cache.target(TREE, tensor(2, 3))
    cache.failed(TREE, target, ValueError("needs a concrete size"))
    assert cache.target(TREE, tensor(4, 3)) is None


def test_reduce_retracing_generalises_over_the_signatures_stored():
    cache = ProgramCache(None, reduce_retracing=True)
    assert cache.target(TREE, tensor(2, 3)) is None  # nothing to generalise over yet
    cache.store(TREE, tensor(2, 3), "first")
    assert cache.target(TREE, tensor(4, 3)) == tensor("d0", 3)
    assert cache.target(TREE, tensor(2, 3, 1)) is None  # a new rank keeps its shapes


def test_a_general_signature_is_its_own_target_and_is_looked_up_by_specificity():
    # get_concrete_function(TensorSpec([None, 3])): its program runs it, found by lookup
    cache = ProgramCache(None, reduce_retracing=False)
    spec = tensor(None, 3)
    target = cache.target(TREE, spec)
    assert target == tensor("d0", 3)
    cache.store(TREE, target, "general", serves=spec)
    assert cache.lookup(TREE, spec) == "general"
    assert cache.lookup(TREE, tensor(9, 3)) == "general"
