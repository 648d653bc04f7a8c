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
            seen["traces"] = len(_context.traces)
            seen["string"] = mk.constant("abc").numpy()
            seen["sum"] = (mk.constant([1.0, 2.0]) + 1.0).numpy()
            seen["variable"] = v.numpy()
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            seen["error"] = error
        finally:
            done.set()

    @mk.function(autograph=False)
    def step(x):
        seen["main traces"] = len(_context.traces)
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
