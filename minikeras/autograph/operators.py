"""What converted code calls, as ``ag__``: control flow that dispatches on its condition.

Each statement is decided when it runs, as TensorFlow's AutoGraph does: a condition or
iterable that is a traced Tensor (inside ``mk.function``, unknown until the program runs)
becomes ``mk.cond`` / ``mk.while_loop`` machinery; anything else (Python values, concrete
Tensors) runs as the plain Python statement. A converted statement passes its body as
functions, with ``get_state``/``set_state`` for the local variables it modifies.

- ``undefined``: variables with no value on some path;
- ``conditionals``: ``if``, ``x if c else y``, ``and``/``or``/``not``;
- ``loops``: ``while`` and ``for``.
"""
from minikeras.autograph.conditionals import and_, if_exp, if_stmt, not_, or_
from minikeras.autograph.loops import TensorRange, for_stmt, list_append, range_, while_stmt
from minikeras.autograph.undefined import Undefined, defined_result, ld, retval

__all__ = ["TensorRange", "Undefined", "and_", "defined_result", "for_stmt", "if_exp", "if_stmt", "ld", "list_append",
           "not_", "or_", "range_", "retval", "while_stmt"]
