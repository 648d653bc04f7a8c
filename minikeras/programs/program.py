"""``Program``: one traced signature of an ``mk.function``, compiled, with its state.

The interface that ``mk.function``, ``fit``'s steps, ``steps_per_execution``'s scan and
``mk.distribute`` share:

- ``state()``: the current values of the Variables the program reads and writes
  (``variables``: the ``assigned`` ones first); ``call_state()``: the same to pass to a
  compiled call, which donates the assigned ones' buffers where ``donates`` (``donation``);
- ``pure(state, inputs) -> (outputs, new_assigned)``: the program as a pure function of
  arrays, to call inside another jax trace (a scan, a sharded jit);
- ``write_back(new_assigned)``: the one place where results become Variable values;
- ``structure(outputs)``: the function's return value (Tensors and static leaves) from the
  output arrays;
- ``__call__(inputs)``: all of the above, compiled (``xla_cpu.jit``), the compiled function
  returning the new assigned values first (``results_for_donation``);
- ``derived(key, build)``: a compiled function built from this program once and kept with it
  (a scan of it, a sharded jit of it).

A program traced for a general signature (None sizes, ``programs.signatures``) has symbolic
sizes in its jaxpr; it runs through ``jax.export``, whose StableHLO XLA compiles once for each
concrete shape (``general`` is True): the Python function is not traced again.
"""
import operator

import jax
from jax import export
from jax.extend.core import jaxpr_as_fun

from minikeras import _context
from minikeras.programs import donation
from minikeras.programs.signatures import accepts
from minikeras.tensor import Tensor
from minikeras.xla_cpu import jit, native_build

_value_of = operator.attrgetter("_value")  # a Variable's array, without a Python frame per call


class NewSignature(Exception):
    """``call_strict``'s inputs need another program: nothing ran."""


class Program:
    """A traced ``mk.function`` signature (see the module docstring).

    Attributes:
      variables: the lifted Variables in state order, the ``assigned`` ones first.
      assigned: the Variables the program writes.
      n_outputs: how many arrays the function returns (its other leaves are static).
      jaxpr: the ClosedJaxpr of ``(*state, *inputs) -> (*outputs, *new_assigned)``.
      general: whether the inputs have symbolic sizes (one program for many shapes).
      donates: whether its compiled calls (and those ``derived`` from it) donate the assigned
        Variables' buffers (``programs.donation``).
    """

    def __init__(self, traced):
        self.variables = traced.variables
        self.assigned = traced.variables[:traced.n_assigned]
        self.n_outputs = sum(traced.out_is_array)
        self.jaxpr = traced.jaxpr
        self._out_tree = traced.out_tree
        self._out_static = traced.out_static
        self._out_is_array = traced.out_is_array
        self._single = (len(traced.out_is_array) == 1 and traced.out_is_array[0]
                        and traced.out_tree == jax.tree_util.tree_structure(0))
        # a flat tuple of Tensors (``return next_id, states``): made without a pytree unflatten
        self._flat_tuple = (all(traced.out_is_array)
                            and traced.out_tree == jax.tree_util.tree_structure((0,) * len(traced.out_is_array)))
        self.general = _has_symbolic_sizes(traced.jaxpr)
        # a general program's inputs as a signature with named sizes: a call that fits compiles
        self._input_signature = _tensor_signature(traced.jaxpr.in_avals[len(self.variables):]) if self.general else None
        self._flat = _exported(traced.jaxpr).call if self.general else jaxpr_as_fun(traced.jaxpr)
        self._strict = False
        self._compiled = False
        self._derived = {}
        self.donates = donation.ENABLED
        # flat positional arrays in and out: the cheapest call jax.jit's dispatcher has
        self.jitted = jit(self._jit_body, donate_argnums=self.donated_arguments())

    def _jit_body(self, *flat):
        if self._strict and self._compiled and not self.accepts(flat[len(self.variables):]):
            raise NewSignature  # jax.jit missed its cache: the inputs have other avals
        self._compiled = True
        return results_for_donation(self, self._flat(*flat))

    def accepts(self, inputs):
        """Whether a general program runs ``inputs`` (arrays or avals) of shapes it has not
        compiled yet: they fit its symbolic sizes (each at least 1)."""
        return self.general and accepts(self._input_signature, _tensor_signature(inputs))

    def derived(self, key, build):
        """``build()``, made once per ``key`` and kept with this program."""
        value = self._derived.get(key)
        if value is None:
            value = self._derived[key] = build()
        return value

    @property
    def derived_functions(self):
        """{key: function} of what ``derived`` has built so far."""
        return dict(self._derived)

    @property
    def n_assigned(self):
        """How many Variables the program writes (the first ``n_assigned`` of ``variables``)."""
        return len(self.assigned)

    def state(self):
        """The current values of ``variables``, in order."""
        return list(map(_value_of, self.variables))

    def call_state(self):
        """``state()`` to pass to a compiled call of this program (or one ``derived`` from it
        that donates ``donated_arguments()``): the assigned values may be copies
        (``donation.assigned_arrays``)."""
        n = len(self.assigned)
        values = donation.assigned_arrays(self.assigned, self.donates)
        values.extend(map(_value_of, self.variables[n:]))
        return values

    def donated_arguments(self):
        """The ``donate_argnums`` of a jitted ``(*state, *inputs)`` function of this program."""
        return tuple(range(len(self.assigned))) if self.donates else ()

    def pure(self, state, inputs):
        """``(outputs, new values of assigned)`` as lists of arrays; traceable."""
        results = self._flat(*state, *inputs)
        return list(results[:self.n_outputs]), list(results[self.n_outputs:])

    def write_back(self, new_assigned):
        """Gives the ``assigned`` Variables their new values (arrays a compiled call returned)."""
        for variable, value in zip(self.assigned, new_assigned):
            variable._store_result(value)

    def structure(self, outputs, wrap=True):
        """The function's return value from its output arrays (put in as they are, not wrapped
        in Tensors, if not ``wrap``)."""
        make = Tensor if wrap else (lambda x: x)
        if self._single:
            return make(outputs[0])
        arrays = iter(outputs)
        leaves = [make(next(arrays)) if a else s for a, s in zip(self._out_is_array, self._out_static)]
        return jax.tree_util.tree_unflatten(self._out_tree, leaves)

    def __call__(self, inputs):
        """Runs the compiled program on ``inputs`` (arrays), writes the state back and returns
        the function's result. Under ``mk.distribute`` the state is replicated and the inputs
        split over its mesh."""
        jitted = self.jitted
        distribution = _context.distribution()
        if distribution is not None:
            jitted, inputs = distribution.prepare_call(self, inputs)
        return donation.call_keeping_results(jitted, (*self.call_state(), *inputs), self.finish, self._keep_state)

    def call_strict(self, inputs):
        """``self(inputs)`` if ``inputs`` have the avals the program was traced for; raises
        ``NewSignature`` (before anything runs) otherwise: jax.jit's dispatcher does the check.
        (Without mk.distribute only.)"""
        self._strict = True
        try:
            return donation.call_keeping_results(self.jitted, (*self.call_state(), *inputs), self._finish_strict,
                                                 self._keep_state)
        finally:
            self._strict = False

    def _finish_strict(self, results):
        self._strict = False  # finish's own calls (a Tensor's creation) are no strict calls
        return self.finish(results)

    def _keep_state(self, results):
        """``write_back`` of the new state at the start of a compiled call's ``results``."""
        if self.assigned:
            self.write_back(results[:len(self.assigned)])

    def finish(self, results):
        """Writes back the new state at the start of ``results`` (the flat results of the
        compiled program: new assigned values, then outputs; ``results_for_donation``) and
        returns the function's result."""
        n = len(self.assigned)
        if n:
            self.write_back(results[:n])
            results = results[n:]
        if self._single:  # the common cases, made short: they run on every call
            return Tensor(results[0])
        if self._flat_tuple:
            return tuple(map(Tensor, results))
        return self.structure(results)


def results_for_donation(program, results):
    """The flat results of ``program``'s jaxpr (outputs, new assigned values) reordered as its
    compiled functions return them: new assigned values first. jax gives each output, in order,
    the buffer of the first donated input of its shape and dtype not yet taken, so with the new
    state first each Variable's new value takes its own old buffer (an output of the same shape,
    such as a returned gradient, would take it otherwise)."""
    n = program.n_outputs
    return (*results[n:], *results[:n])


def _tensor_signature(avals):
    """Arrays or avals as signature entries (``programs.signatures``); a symbolic size by its name."""
    return tuple(("T", tuple(d if type(d) is int else str(d) for d in a.shape), a.dtype) for a in avals)


def _has_symbolic_sizes(closed):
    return any(type(d) is not int for aval in closed.in_avals for d in aval.shape)


def _exported(closed):
    """``closed`` (with symbolic sizes) exported once; its ``call`` is traceable, and each
    concrete shape it is traced for refines the sizes and compiles (no Python retrace)."""
    avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in closed.in_avals]
    # minikeras' own kernels are custom calls, which jax.export refuses unless told: the export
    # is only called in this process, never serialized, so their stability does not matter
    allowed = [export.DisabledSafetyCheck.custom_call(name) for name in native_build.registered_targets()]
    return export.export(jax.jit(jaxpr_as_fun(closed)), disabled_checks=allowed)(*avals)
