"""Local variables with no value on some path of converted code, and the checks on them.

Converted code starts every local as ``Undefined`` (so that the local functions of a
converted statement can declare it ``nonlocal``). A variable that is defined in only one
branch of an ``if`` on a traced Tensor, or only inside a loop over one, stays ``Undefined``
after it: using it raises TensorFlow's error for that case, naming the variable and line.
"""
import jax


class Undefined:
    """Stands for a local variable with no value on some path; any use is an error."""

    def __init__(self, name, reason=None):
        self._name = name
        self._reason = reason

    def _fail(self, *args, **kwargs):
        if self._reason is None:
            raise UnboundLocalError(f"cannot access local variable '{self._name}' where it is not associated with a "
                                    "value")
        raise ValueError(self._reason)

    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        self._fail()

    __bool__ = __call__ = __iter__ = __len__ = __index__ = __float__ = __int__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _fail
    __getitem__ = __lt__ = __le__ = __gt__ = __ge__ = __neg__ = __matmul__ = __pow__ = _fail

    def __repr__(self):
        return f"<undefined '{self._name}'>"


def defined_result(result, function_name):
    """``result``, checked for values with no definition (a variable set on only one path)."""
    for leaf in jax.tree_util.tree_leaves(result, is_leaf=lambda x: isinstance(x, Undefined)):
        if isinstance(leaf, Undefined):
            leaf._fail()
    return result


def retval(value):
    """The function's return value: None when no ``return`` ran (as in Python)."""
    if isinstance(value, Undefined) and value._reason is None:
        return None
    return value


def ld(getter, name):
    """The value of a local variable, or ``Undefined`` if it has none."""
    try:
        return getter()
    except NameError:
        return Undefined(name)
