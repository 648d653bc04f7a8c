"""``mk.autograph.experimental``: options for converted loops (``tf.autograph.experimental``)."""


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None, shape_invariants=None):
    """Options for the converted ``while``/``for`` loop whose body starts with this call.

    ``maximum_iterations`` bounds a loop over a traced Tensor, which makes it differentiable
    under a recording GradientTape inside ``mk.function`` (reverse mode needs the bound).
    ``shape_invariants``, a list of ``(variable, shape)`` pairs (a shape such as ``(None,)``
    or an ``mk.TensorSpec``), lets those variables change shape within the shape, checked
    inside ``mk.function`` as TensorFlow does (``ops.shape_invariants``). A loop over a
    Tensor known while tracing then runs as Python while tracing, so shapes can grow; a loop
    whose condition is a traced Tensor is one XLA while loop, whose variables keep their
    shapes, and a change of shape there is an error that says so.
    The conversion reads the call's arguments and removes it; called anywhere else it does
    nothing, as in TensorFlow. ``parallel_iterations`` and ``swap_memory`` are accepted and
    ignored.

    >>> @mk.function
    ... def f(x):
    ...     while mk.reduce_sum(x) > 1.0:
    ...         mk.autograph.experimental.set_loop_options(maximum_iterations=100)
    ...         x = mk.tanh(x)
    ...     return x

    >>> @mk.function
    ... def squares():
    ...     out = mk.zeros([0])
    ...     for i in mk.range(3):
    ...         mk.autograph.experimental.set_loop_options(shape_invariants=[(out, (None,))])
    ...         out = mk.concat([out, [mk.cast(i * i, mk.float32)]], 0)
    ...     return out
    """
