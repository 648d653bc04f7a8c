"""``ProgramCache``: the traced programs of one ``mk.function``, found by call signature.

A call's signature (``function._signature``; ``programs.signatures`` for the general ones)
finds its program here. Two kinds are kept, as ``tf.function``'s ``FunctionCache`` keeps its
concrete functions:

- *exact* programs, traced for a signature's own shapes, which run calls of that signature;
- *general* programs, traced once for a signature with named (symbolic) sizes, which run any
  call that fits those sizes (``signatures.accepts``); XLA compiles one for each concrete shape
  without a new trace.

``lookup`` finds the program that runs a call: the exact one, else the most specific general
one that accepts it (the answer is remembered per signature). When none does, ``mk.function``
traces and ``store``s the result; ``target`` says first which general signature to trace
instead of the call's own shapes (from the input signature's None dimensions, or
``reduce_retracing``'s generalisation over the signatures traced before), and a general trace
that fails (the body needs a concrete size) is remembered by ``failed`` and never tried again.
Under ``mk.distribute`` a program is written for its global batch's shapes: no general
program runs a call there and none is traced for it.
"""
from minikeras import _context
from minikeras.programs.signatures import accepts, common, is_general, named, relax_to_specs, unknown_sizes


class ProgramCache:
    """The programs of one ``mk.function`` (see the module docstring).

    Args:
      spec_shapes: the shapes of its input signature's TensorSpecs, in order, or None.
      reduce_retracing: whether a call that needs a trace is traced with the signature
        that also covers the signatures traced before (``tf.function(reduce_retracing=True)``).
    """

    def __init__(self, spec_shapes, reduce_retracing):
        self._spec_shapes = spec_shapes
        self._reduce_retracing = reduce_retracing
        self._programs = {}       # (treedef, signature) -> Program, exact and general, in tracing order
        self._general = []        # (treedef, general signature, Program), in tracing order
        self._served = {}         # (treedef, signature) -> the general Program that runs it
        self._failed = {}         # (treedef, general signature) -> why it could not be traced

    def __len__(self):
        return len(self._programs)

    def programs(self):
        """The ``Program`` of each signature traced so far, in tracing order."""
        return list(self._programs.values())

    def lookup(self, treedef, signature):
        """The Program that runs a call of ``signature`` (arguments of structure ``treedef``):
        the one traced for it, or the most specific general one that accepts it; None if none
        does."""
        key = (treedef, signature)
        program = self._programs.get(key)
        if program is None and self._general and _context.distribution() is None:
            program = self._served.get(key)
            if program is None:
                program = self._most_specific_general(treedef, signature)
                if program is not None:
                    self._served[key] = program
        return program

    def _most_specific_general(self, treedef, signature):
        best = None
        for general_treedef, general, candidate in self._general:
            if general_treedef == treedef and accepts(general, signature) and (
                    best is None or unknown_sizes(general) < unknown_sizes(best[0])):
                best = (general, candidate)
        return None if best is None else best[1]

    def target(self, treedef, signature):
        """The general signature (named sizes) to trace a call of ``signature`` with, when no
        program runs it, or None to trace its own shapes. A signature that is general already
        (``get_concrete_function`` of TensorSpecs with None sizes) is its own target."""
        if is_general(signature):
            return named(signature, signature)
        if _context.distribution() is not None:
            return None
        if self._spec_shapes is not None:
            relaxed = relax_to_specs(signature, self._spec_shapes)
        elif self._reduce_retracing:  # as TensorFlow's FunctionCache, over every signature traced so far
            relaxed = signature
            for other_treedef, other in self._programs:
                if other_treedef == treedef:
                    relaxed = common(relaxed, other) or relaxed
        else:
            return None
        if not is_general(relaxed):
            return None
        target = named(relaxed, signature)
        key = (treedef, target)
        if key in self._programs or key in self._failed or not accepts(target, signature):
            return None  # traced already (and it does not run this call), failed before, or a size 0
        return target

    def store(self, treedef, signature, program, serves=None):
        """Keeps ``program``, traced for ``signature`` (general if it has named sizes); a
        general program also runs the call of signature ``serves`` that caused its trace
        (unless that is general itself, from ``get_concrete_function``: ``lookup`` picks the
        most specific program for it when it is asked)."""
        self._programs[(treedef, signature)] = program
        if is_general(signature):
            self._general.append((treedef, signature, program))
            if serves is not None and not is_general(serves):
                self._served[(treedef, serves)] = program

    def failed(self, treedef, general, error):
        """Remembers that ``general`` could not be traced (``error``): it is not tried again."""
        self._failed[(treedef, general)] = error
