"""Keras 3's global switch off safe mode: ``keras.config.enable_unsafe_deserialization()``.

After it, loading rebuilds a Keras ``Lambda``'s Python bytecode even where ``load_model`` is
given ``safe_mode=True``, as in Keras 3 (its global setting wins over the argument).
"""
_state = {"unsafe": False}


def enable_unsafe_deserialization():
    """Turns safe mode off for every later load in this process (lambdas are rebuilt)."""
    _state["unsafe"] = True


def in_safe_mode(requested):
    """Whether a load asked for ``safe_mode=requested`` refuses bytecode."""
    return bool(requested) and not _state["unsafe"]
