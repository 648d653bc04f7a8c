"""The path lookup LayoutMap and DTypePolicyMap share: Keras 3's rule, and its error messages."""
import pytest

from minikeras import path_patterns


def lookup(mapping, path):
    return path_patterns.lookup(mapping, path, "layout", "tensor/variable path", "LayoutMap")


def test_an_exact_key_wins_over_patterns_that_also_match():
    assert lookup({"d.*": 1, "dense/kernel": 2, ".*kernel": 3}, "dense/kernel") == (True, 2)


def test_the_only_full_match_is_found_and_partial_matches_do_not_count():
    mapping = {"dense.*": 1, "kernel": 2}
    assert lookup(mapping, "dense_1/bias") == (True, 1)
    assert lookup(mapping, "conv/kernel") == (False, None)  # re.search would find "kernel"


def test_two_matching_patterns_are_an_error_worded_as_keras():
    with pytest.raises(ValueError, match=r"Path 'dense/kernel' matches multiple layout specification keys: "
                                         r"\['dense/.\*', '.\*kernel'\]\. Please make sure each tensor/variable path "
                                         r"only matches at most one layout specification key in the LayoutMap\."):
        lookup({"dense/.*": 1, ".*kernel": 2}, "dense/kernel")


def test_a_key_is_set_once():
    path_patterns.check_new_key({"a": 1}, "b", "DTypePolicyMap")
    with pytest.raises(ValueError, match="a already exist in the DTypePolicyMap with value 1"):
        path_patterns.check_new_key({"a": 1}, "a", "DTypePolicyMap")
