"""``GeneralPrograms``: which signature with None sizes an ``mk.function`` traces, and which of
its general programs runs a call (see ``programs.signatures`` for the signatures).

``mk.function`` asks it, for a call that no program of its exact signature runs, for the
most specific general program that accepts the call (``find``); for a call that must be
traced, for the general signature to trace instead (``target``: from the input signature's
None dimensions, or ``reduce_retracing``'s generalisation over the signatures traced
before). A general trace that fails (the body needs a concrete size) is remembered
(``failed``), never tried again, and described for the warning (``describe_failure``).
"""
import os
import traceback

import jax
import numpy as np

from minikeras.programs.signatures import (
    accepts,
    common,
    is_general,
    named,
    relax_to_specs,
    shapes_as_specs,
    unknown_sizes,
)
from minikeras.tensor_spec import TensorSpec


class GeneralPrograms:
    """The general programs of one ``mk.function``.

    Args:
      spec_shapes: the shapes of its input signature's TensorSpecs, in order, or None.
      reduce_retracing: whether a call that needs a trace is traced with the signature
        that also covers the signatures traced before (``tf.function(reduce_retracing=True)``).
    """

    def __init__(self, spec_shapes, reduce_retracing):
        self._spec_shapes = spec_shapes
        self._reduce_retracing = reduce_retracing
        self._traced = []         # (treedef, general signature, Program), in tracing order
        self._served = {}         # (treedef, signature) -> the general Program that runs it
        self._failed = {}         # (treedef, general signature) -> why it could not be traced

    def __bool__(self):
        return bool(self._traced)

    def find(self, treedef, signature):
        """The general Program that runs a call of ``signature`` (the most specific one that
        accepts it), or None."""
        key = (treedef, signature)
        program = self._served.get(key)
        if program is not None:
            return program
        best = None
        for general_treedef, general, candidate in self._traced:
            if general_treedef == treedef and accepts(general, signature) and (
                    best is None or unknown_sizes(general) < unknown_sizes(best[0])):
                best = (general, candidate)
        if best is None:
            return None
        self._served[key] = best[1]
        return best[1]

    def target(self, treedef, signature, traced_keys):
        """The general signature (named sizes) to trace a call of ``signature`` with, or None
        to trace its own shapes. ``traced_keys``: the (treedef, signature) of every program
        traced so far, in order (``reduce_retracing`` generalises over them, as TensorFlow's
        ``FunctionCache`` does over its entries)."""
        if self._spec_shapes is not None:
            relaxed = relax_to_specs(signature, self._spec_shapes)
        elif self._reduce_retracing:
            relaxed = signature
            for other_treedef, other in traced_keys:
                if other_treedef == treedef:
                    relaxed = common(relaxed, other) or relaxed
        else:
            return None
        if not is_general(relaxed):
            return None
        target = named(relaxed, signature)
        key = (treedef, target)
        if key in traced_keys or key in self._failed or not accepts(target, signature):
            return None  # traced already (and it does not run this call), failed before, or a size 0
        return target

    def add(self, treedef, general, program, signature=None):
        """``program``, traced for ``general``; it runs the call of ``signature`` that caused it."""
        self._traced.append((treedef, general, program))
        if signature is not None:
            self._served[(treedef, signature)] = program

    def failed(self, treedef, general, error):
        """Remembers that ``general`` could not be traced (``error``): it is not tried again."""
        self._failed[(treedef, general)] = error


def specs_of(signature):
    """The TensorSpecs of ``signature``'s Tensors (None for unknown sizes), for messages."""
    return [TensorSpec(shape, dtype) for shape, dtype in shapes_as_specs(signature)]


_LIBRARIES = tuple(os.path.dirname(m.__file__) + os.sep for m in (jax, np))
_MINIKERAS = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def describe_failure(error):
    """``error`` and where it was raised: the innermost frame outside jax and NumPy (the op
    that needed a concrete size) and, when that is in minikeras, the user's line that called it."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith(_LIBRARIES)]
    where = ""
    if frames:
        where = f" in {_frame(frames[-1])}"
        if frames[-1].filename.startswith(_MINIKERAS):
            outside = [f for f in frames if not f.filename.startswith(_MINIKERAS)]
            if outside:
                where += f", called from {_frame(outside[-1])}"
    message = str(error).split("\n")[0]
    return f"{type(error).__name__}{where}: {message}"


def _frame(frame):
    return f"{frame.name} ({os.path.basename(frame.filename)}:{frame.lineno})"
