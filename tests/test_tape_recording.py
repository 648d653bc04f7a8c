"""The tape protocol (minikeras.tape): what ops tell the objects in _context.call_state.tapes."""
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import minikeras as mk
from minikeras import _context
from minikeras.tape.recording import READ_VARIABLE, Recording


class Spy:
    """Follows the tape protocol and remembers every call."""

    def __init__(self):
        self.calls = []

    def record(self, op, params, inputs, outs):
        self.calls.append(("record", op.name, len(inputs), len(outs)))

    def read_variable(self, variable, out):
        self.calls.append(("read_variable", variable.name, out.shape))

    def watch_accessed(self, variables):
        self.calls.append(("watch_accessed", [v.name for v in variables]))


def test_ops_and_variable_reads_go_through_the_protocol():
    spy = Spy()
    v = mk.Variable([1.0, 2.0], name="v")
    with _context.recording_with([spy]):
        y = mk.sin(v) * 2.0
    assert spy.calls == [("read_variable", "v", (2,)), ("record", "sin", 1, 1), ("record", "multiply", 2, 1)]
    np.testing.assert_allclose(y.numpy(), 2.0 * np.sin([1.0, 2.0]), rtol=1e-6)


def test_custom_gradient_announces_the_variables_it_reads():
    spy = Spy()
    w = mk.Variable(3.0, name="w")

    @mk.custom_gradient
    def scaled(x):
        def grad(upstream, variables):
            return upstream * w, [upstream * x]
        return x * w, grad

    with _context.recording_with([spy]):
        scaled(mk.constant(2.0))
    assert ("watch_accessed", ["w"]) in spy.calls
    assert spy.calls[-1] == ("record", "scaled", 2, 1)  # the input and the Variable


def test_recording_with_restores_the_tapes_after_an_error():
    with mk.GradientTape() as tape:
        before = list(_context.call_state.tapes)
        with pytest.raises(RuntimeError):
            with _context.recording_with([]):
                assert _context.call_state.tapes == []
                raise RuntimeError("inside")
        assert _context.call_state.tapes == before
    assert tape is not None and _context.call_state.tapes == []


def test_recording_keeps_only_what_depends_on_watched_values():
    recording = Recording()
    x, c = mk.constant(1.0), mk.constant(2.0)
    recording.watch(x)
    with _context.recording_with([recording]):
        y = x * c
        z = c * c          # not computed from x: not recorded
        n = mk.round(y)    # not differentiable: kept aside for the diagnosis
    assert [r.op.name for r in recording.records] == ["multiply"]
    assert id(y) in recording.tracked and id(z) not in recording.tracked
    assert [name for name, _, _ in recording.blocked] == ["round"] and n is not None


def test_a_read_of_an_untrainable_variable_is_not_watched():
    recording = Recording()
    frozen, trained = mk.Variable(1.0, trainable=False), mk.Variable(2.0)
    with _context.recording_with([recording]):
        frozen.value()
        trained.value()
    assert recording.watched_variables() == [trained]
    assert [r.op for r in recording.records] == [READ_VARIABLE]



def _gradient_in_a_trace(x):
    """d mean(3 x^2) / dx, by a backward pass run rule by rule inside mk.function (a recorded
    custom_gradient op keeps it off the compiled replay), and the step's program."""
    @mk.custom_gradient
    def square(x):
        return x * x, lambda upstream: 2.0 * x * upstream

    @mk.function
    def step(x):
        with mk.GradientTape() as tape:
            tape.watch(x)
            loss = mk.reduce_mean(square(x) * 3.0)
        return tape.gradient(loss, x)

    gradient = step(mk.constant(x))
    (program,) = step.programs()
    return gradient.numpy(), {eqn.primitive.name for eqn in program.jaxpr.jaxpr.eqns}


def test_a_backward_pass_in_a_trace_without_jax_private_constant_folding_switch(monkeypatch):
    # The loss's seed is staged in the program with jax's private switch (no public one); a jax
    # without it keeps the seed as a constant of the program instead: the same gradient.
    x = np.array([0.5, -1.0, 2.0, 3.0], np.float32)
    want = jax.grad(lambda x: jnp.mean(3.0 * x * x))(x)
    staged, primitives = _gradient_in_a_trace(x)
    assert "optimization_barrier" in primitives
    np.testing.assert_allclose(staged, want, rtol=1e-6)
    monkeypatch.setitem(sys.modules, "jax._src.config", None)  # its import now fails
    folded, primitives = _gradient_in_a_trace(x)
    assert "optimization_barrier" not in primitives
    np.testing.assert_allclose(folded, want, rtol=1e-6)
