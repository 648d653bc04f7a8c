"""Keras 3's rule for maps keyed by paths or regular expressions over them (``LayoutMap``,
``DTypePolicyMap``): an exact key wins, else the only key that ``re.fullmatch``-es the path;
two matching keys are an error, never "first match wins"; a key is set once."""
import re


def lookup(mapping, path, kind, subject, map_name):
    """``(True, value)`` for ``path``'s exact key in ``mapping``, else for the only key matching
    the whole path as a regular expression; ``(False, None)`` where no key matches.

    Raises:
      ValueError: two or more keys match, worded as Keras words it for the map ``map_name``, whose
        keys are ``kind`` specifications ("layout") for each ``subject`` ("tensor/variable path").
    """
    if path in mapping:
        return True, mapping[path]
    matching = [pattern for pattern in mapping if re.fullmatch(pattern, path)]
    if len(matching) > 1:
        raise ValueError(f"Path '{path}' matches multiple {kind} specification keys: {matching}. Please make sure "
                         f"each {subject} only matches at most one {kind} specification key in the {map_name}.")
    return (True, mapping[matching[0]]) if matching else (False, None)


def check_new_key(mapping, key, map_name):
    """Raises Keras's ValueError where ``key`` is already in ``mapping``, the map ``map_name``."""
    if key in mapping:
        raise ValueError(f"{key} already exist in the {map_name} with value {mapping[key]}. Please make sure to not "
                         "use duplicated keys.")
