"""Errors raised while a compiled step is traced, shown as the plain Python errors they are.

A shape error found by a loss or a layer while ``mk.function`` traces a train step passes
through ``jax.eval_shape``/``jax.jit``, which append a note (or, with
``JAX_TRACEBACK_FILTERING=remove_frames``, chain a whole ``UnfilteredStackTrace``) about
JAX's internal frames. Those frames say nothing about the user's mistake, so fit, evaluate
and predict remove JAX's additions and re-raise the original error, traceback and all.
"""
import contextlib

_JAX_NOTE = "JAX has removed its internal frames"


def strip_jax_additions(error):
    """Removes JAX's traceback note and chained ``UnfilteredStackTrace`` from ``error``, in place."""
    notes = getattr(error, "__notes__", None)
    if notes:
        kept = [note for note in notes if _JAX_NOTE not in note]
        if kept:
            error.__notes__ = kept
        else:
            del error.__notes__
    cause = error.__cause__
    if cause is not None and type(cause).__name__ == "UnfilteredStackTrace":
        error.__cause__ = cause.__cause__
        error.__context__ = cause.__context__
        error.__suppress_context__ = cause.__suppress_context__
    return error


@contextlib.contextmanager
def user_errors():
    """Re-raises errors from the block without JAX's additions (see the module docstring)."""
    try:
        yield
    except Exception as error:
        strip_jax_additions(error)
        raise
