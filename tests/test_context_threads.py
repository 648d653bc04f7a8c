"""The ``mk.function`` trace stack is per thread: while one thread traces, another (a dataset's
prefetch thread mapping batches) runs eagerly: it makes string Tensors, computes concrete
values and reads Variables without lifting them into the other thread's trace."""
import threading

import numpy as np

import minikeras as mk
from minikeras import _context


def test_another_thread_runs_eagerly_while_one_traces():
    v = mk.Variable([1.0, 2.0], name="shared")
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def other():
        inside.wait(timeout=60)
        try:
            seen["traces"] = len(_context.call_state.traces)
            seen["string"] = mk.constant("abc").numpy()
            seen["sum"] = (mk.constant([1.0, 2.0]) + 1.0).numpy()
            seen["variable"] = v.numpy()
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            seen["error"] = error
        finally:
            done.set()

    @mk.function(autograph=False)
    def step(x):
        seen["main traces"] = len(_context.call_state.traces)
        inside.set()
        done.wait(timeout=60)  # the other thread works while this one traces
        return x * 2.0

    thread = threading.Thread(target=other)
    thread.start()
    out = step(mk.constant(3.0))
    thread.join()
    assert "error" not in seen, seen.get("error")
    assert seen["main traces"] == 1 and seen["traces"] == 0
    assert seen["string"] == b"abc"
    np.testing.assert_array_equal(seen["sum"], [2.0, 3.0])
    np.testing.assert_array_equal(seen["variable"], [1.0, 2.0])
    assert float(out.numpy()) == 6.0
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_a_variable_the_trace_lifted_stays_concrete_and_writable_in_another_thread():
    """The trace's placeholder for a Variable is this thread's view only: another thread reading
    it meanwhile gets the concrete value (not a leaked tracer), and what it assigns is kept."""
    v = mk.Variable(1.0, name="counter")
    seen = {}

    def other():
        try:
            seen["read"] = float(v.numpy())
            v.assign(10.0)
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            seen["error"] = error

    @mk.function(autograph=False)
    def step(x):
        v.assign_add(x)
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        return v.read_value()

    out = step(mk.constant(2.0))
    assert "error" not in seen, seen.get("error")
    assert seen["read"] == 1.0
    assert float(out.numpy()) == 12.0 and float(v.numpy()) == 12.0  # the step ran on the other thread's 10.0
    assert _context.call_state.variable_values == {} and _context.threads_seeing_variable_values == 0


class _ScaleByTraining(mk.layers.Layer):
    """``x * w``, doubled when training; notes what its thread's call state holds during the
    call. The prefetch thread maps batch 2 while the main thread trains on batch 1: those two
    calls meet at ``barrier`` (twice), so that both are inside a layer call and a tape at once."""

    def __init__(self, barrier, notes):
        super().__init__()
        self.barrier, self.notes = barrier, notes

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1],), initializer="ones")

    def call(self, inputs, training=None):
        state = _context.call_state
        if not state.tapes:  # the model's build
            return inputs * self.w
        thread = threading.current_thread().name
        calls = sum(1 for note in self.notes if note[0] == thread)
        overlapping = calls == (1 if thread == "mk.data.prefetch" else 0)
        if overlapping:
            self.barrier.wait(timeout=60)
        self.notes.append((thread, training, len(state.training), len(state.tapes)))
        if overlapping:
            self.barrier.wait(timeout=60)
        return inputs * self.w * (2.0 if training else 1.0)


def test_a_prefetch_thread_calling_a_model_shares_no_call_state_with_the_training_thread():
    # the main thread trains with training=False while the prefetch thread maps each batch
    # through the same model with training=True, each under a GradientTape of its own
    barrier, notes = threading.Barrier(2), []
    model = mk.Sequential([mk.layers.Input(shape=(3,)), _ScaleByTraining(barrier, notes)])
    x = np.arange(24, dtype="float32").reshape(8, 3)
    mapped_grads = []

    def augment(batch):
        with mk.GradientTape() as tape:
            out = model(batch, training=True)
            loss = mk.reduce_sum(out)
        mapped_grads.append(tape.gradient(loss, model.trainable_weights)[0].numpy())
        return batch

    dataset = mk.data.Dataset.from_tensor_slices(x).batch(4).map(augment).prefetch(1)
    main_grads = []
    for batch in dataset:
        with mk.GradientTape() as tape:
            loss = mk.reduce_sum(model(batch, training=False))
        main_grads.append(tape.gradient(loss, model.trainable_weights)[0].numpy())

    main = threading.current_thread().name
    assert len(notes) == 4, notes
    for thread, training, depth, tapes in notes:
        # one layer call in progress (the model's: Sequential passes its flag down) and one tape
        assert training is (thread != main) and tapes == 1 and depth == 2, notes
    batches = x.reshape(2, 4, 3)
    for batch, grads in zip(batches, mapped_grads):  # d/dw sum(x * w * 2) = 2 * sum over rows
        np.testing.assert_allclose(grads, 2.0 * batch.sum(axis=0))
    for batch, grads in zip(batches, main_grads):
        np.testing.assert_allclose(grads, batch.sum(axis=0))
    assert _context.call_state.training == [] and _context.call_state.tapes == []
