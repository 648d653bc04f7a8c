"""Converting a Python function: its source, rewritten (``transformer``), compiled again.

The converted function keeps the original's globals (the live module dictionary), its
closure cells (so a closed-over name that changes later is seen), defaults and name. The
user's functions that it calls are converted when called (``converted_call``), as
TensorFlow does; functions of minikeras, jax, NumPy and the standard library run as written.
"""
import ast
import functools
import inspect
import linecache
import sys
import textwrap
import types
import warnings
import weakref

from minikeras.autograph import operators
from minikeras.autograph.transformer import ControlFlow, ConversionError, explicit_super

_CONVERTED = "__mk_autograph_converted__"


class SourceUnavailable(ConversionError):
    """The function's source cannot be read (defined in a REPL, ``exec`` or compiled code)."""


def _code_source(code):
    """The source of ``code`` (its own, never a ``__wrapped__`` one). Read from ``linecache``
    first: ``inspect.getsource`` looks for the code's module among all of ``sys.modules``,
    resolving each one's file path (~30 ms on the first call in a process)."""
    linecache.checkcache(code.co_filename)
    lines = linecache.getlines(code.co_filename)
    if len(lines) >= code.co_firstlineno:
        return "".join(inspect.getblock(lines[code.co_firstlineno - 1:]))
    return inspect.getsource(code)  # a loader's source (zip imports), or OSError


def _function_node(fn):
    try:
        source = textwrap.dedent(_code_source(fn.__code__))
    except (OSError, TypeError) as error:
        raise SourceUnavailable(f"mk.autograph cannot read the source of {fn!r} ({error}); define it in a file, or "
                              "use mk.function(autograph=False)") from None
    tree = ast.parse(source)
    ast.increment_lineno(tree, fn.__code__.co_firstlineno - 1)  # errors and messages name the file's lines
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ConversionError(f"mk.autograph converts functions defined with `def`; {fn.__name__!r} is a lambda "
                              "or was made otherwise: write it as a def, or use mk.function(autograph=False)")
    node.decorator_list = []
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom)):
            raise ConversionError(f"line {inner.lineno}: {fn.__qualname__} is a generator (`yield`), which "
                                  "mk.autograph cannot convert; return a Tensor or a list, or use "
                                  "mk.function(autograph=False)")
    return node


def converted_source(fn):
    """The converted source of ``fn`` (a string)."""
    node = _function_node(fn)
    ControlFlow().visit(node)
    return ast.unparse(ast.fix_missing_locations(node))


def convert(fn):
    """``fn`` with its control flow converted; returned unchanged if it needs no conversion
    (no ``if``, ``while``, ``for``, ``and``/``or``/``not``, conditional expression or call)."""
    if getattr(fn, _CONVERTED, False):
        return fn
    target = fn.__func__ if inspect.ismethod(fn) else fn
    if not isinstance(target, types.FunctionType):
        return fn  # a builtin, a class or a callable object: nothing to rewrite
    if target.__name__ == "<lambda>":
        return fn  # an expression: no statements to convert
    if "ag__" in target.__code__.co_freevars:
        return fn  # defined inside converted code: converted with it
    if not _is_user_function(target):
        return fn  # minikeras's own steps (fit's train_step, optimizer updates) are written for tracing
    try:
        node = _function_node(target)
    except SourceUnavailable as error:  # as TensorFlow: a warning, and the function runs as written
        warnings.warn(f"mk.autograph could not convert {target.__qualname__} and runs it as written: {error}",
                      stacklevel=3)
        return fn
    if not any(isinstance(n, (ast.If, ast.While, ast.For, ast.BoolOp, ast.IfExp, ast.Call)) or
               isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) for n in ast.walk(node)):
        return fn
    explicit_super(node)
    ControlFlow().visit(node)
    freevars = list(target.__code__.co_freevars)
    factory = ast.parse(f"def __mk_factory({', '.join(['ag__'] + freevars)}):\n    return {node.name}").body[0]
    factory.body.insert(0, node)
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    code = compile(module, target.__code__.co_filename, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    cells = dict(zip(freevars, target.__closure__ or ()))
    cells["ag__"] = types.CellType(_AG)
    closure = tuple(cells[name] if name in cells else types.CellType() for name in inner.co_freevars)
    new = types.FunctionType(inner, target.__globals__, target.__name__, target.__defaults__, closure)
    new.__kwdefaults__ = target.__kwdefaults__

    @functools.wraps(target)
    def converted(*args, **kwargs):
        return operators.defined_result(new(*args, **kwargs), target.__qualname__)

    setattr(converted, _CONVERTED, True)
    if inspect.ismethod(fn):
        return types.MethodType(converted, fn.__self__)
    return converted


def to_code(fn):
    """The source of ``fn`` as ``mk.function`` runs it after conversion (``tf.autograph.to_code``).

    >>> print(mk.autograph.to_code(f))   # doctest: +SKIP
    """
    fn = getattr(fn, "python_function", fn)
    fn = getattr(fn, "__func__", fn)
    return converted_source(fn) + "\n"


# Packages whose functions are never converted: ours, the array libraries, the test runner.
_LIBRARIES = frozenset(["minikeras", "jax", "jaxlib", "numpy", "scipy", "ml_dtypes", "pytest", "_pytest", "pluggy"])
_CONVERTED_CALLS = weakref.WeakKeyDictionary()  # the user's function -> its converted version


def _is_user_function(target):
    # the module whose globals the code runs in (``functools.wraps`` copies another ``__module__``)
    module = (target.__globals__.get("__name__") or "").split(".")[0]
    return module not in _LIBRARIES and module not in sys.stdlib_module_names


def converted_call(f, *args, **kwargs):
    """``f(*args, **kwargs)``, with ``f`` converted first when it is one of the user's functions."""
    target = f.__func__ if isinstance(f, types.MethodType) else f
    if isinstance(target, types.FunctionType) and not getattr(target, _CONVERTED, False):
        converted = _CONVERTED_CALLS.get(target)
        if converted is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a callee without source runs as written, silently
                converted = _CONVERTED_CALLS[target] = convert(target)
        if converted is not target:
            return converted(f.__self__, *args, **kwargs) if isinstance(f, types.MethodType) else converted(*args,
                                                                                                          **kwargs)
    return f(*args, **kwargs)


# What converted code sees as ``ag__``.
_AG = types.SimpleNamespace(**{name: getattr(operators, name) for name in dir(operators) if not name.startswith("_")},
                            converted_call=converted_call)
