"""``mk.autograph.experimental``: options for converted loops (``tf.autograph.experimental``)."""


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None, shape_invariants=None):
    """Options for the converted ``while``/``for`` loop whose body starts with this call.

    ``maximum_iterations`` bounds a loop over a traced Tensor, which makes it differentiable
    under a recording GradientTape inside ``mk.function`` (reverse mode needs the bound).
    The conversion reads the call's arguments and removes it; called anywhere else it does
    nothing, as in TensorFlow. ``shape_invariants`` are not supported (loop variables keep
    their shapes); ``parallel_iterations`` and ``swap_memory`` are accepted and ignored.

    >>> @mk.function
    ... def f(x):
    ...     while mk.reduce_sum(x) > 1.0:
    ...         mk.autograph.experimental.set_loop_options(maximum_iterations=100)
    ...         x = mk.tanh(x)
    ...     return x
    """
