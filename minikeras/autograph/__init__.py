"""AutoGraph: Python ``if``/``while``/``for`` on Tensors inside ``mk.function`` (``tf.autograph``).

``mk.function`` converts the Python function once, before tracing (``autograph=True``,
the default): the source is rewritten so that each ``if``, ``while`` and ``for`` decides
when it runs whether its condition (or iterable) is a traced Tensor. If it is, the
statement becomes ``mk.cond`` / ``mk.while_loop`` / a loop over the Tensor's first axis in
the compiled program; otherwise it runs as plain Python, exactly as written. ``break``,
``continue`` and ``return`` inside them are lowered to flags, as TensorFlow does.

- ``transformer``: the AST rewrite;
- ``operators``: the functions the rewritten code calls (``ag__.if_stmt``, ...);
- ``api``: ``convert(fn)`` and ``to_code(fn)``;
- ``experimental``: ``set_loop_options(maximum_iterations=..., shape_invariants=...)``.

>>> def f(x):
...     while mk.reduce_sum(x) > 1:
...         x = mk.tanh(x)
...     return x
>>> print(mk.autograph.to_code(f))   # doctest: +SKIP
"""
from minikeras.autograph import experimental
from minikeras.autograph.api import convert, to_code
from minikeras.autograph.transformer import ConversionError

__all__ = ["ConversionError", "convert", "experimental", "to_code"]
