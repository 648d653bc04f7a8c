"""Shared timing helpers for the benchmarks: warm up, then the median of repeated runs."""
import statistics
import time

import jax


def block(value):
    """Waits for every array in ``value`` (JAX dispatches asynchronously)."""
    for leaf in jax.tree_util.tree_leaves(value):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
        elif hasattr(leaf, "_value"):
            leaf._value.block_until_ready()
    return value


def median_seconds(run, repeats=5, warmup=1):
    """Median wall time of ``run()`` (which must block until its work is done)."""
    for _ in range(warmup):
        run()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def interleaved(runs, repeats=5):
    """Median seconds of each of ``runs`` {name: fn}, timed in turn so machine load hits all alike."""
    times = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}
