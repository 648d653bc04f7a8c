"""Shared timing helpers for the benchmarks: warm up, then the median of repeated runs."""
import os
import platform
import statistics
import subprocess
import sys
import time

import jax

DEFAULT_MALLOC_FLAG = "--default-malloc"


def honour_default_malloc_flag(argv=None):
    """With ``--default-malloc`` among the arguments, sets MINIKERAS_REUSE_HOST_MEMORY=0 so that
    ``import minikeras`` leaves glibc's malloc as it is (to show what the setting is worth); it
    must run before minikeras is first imported. Returns whether the flag was given."""
    given = DEFAULT_MALLOC_FLAG in (sys.argv[1:] if argv is None else argv)
    if given:
        os.environ["MINIKERAS_REUSE_HOST_MEMORY"] = "0"
    return given


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


def interleaved(runs, repeats=5, faults=None):
    """Median seconds of each of ``runs`` {name: fn}, timed in turn so machine load hits all alike.

    ``faults``: a dict to fill with each run's median count of minor page faults (the process's,
    during that run; Unix only). A step that faults through thousands of fresh pages is slowed by
    its memory allocator, not by its arithmetic: glibc's per-thread heaps once made the same step
    take 29 to 46 ms from one process to the next.
    """
    times = {name: [] for name in runs}
    counts = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            before = minor_faults()
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
            if before is not None:
                counts[name].append(minor_faults() - before)
    if faults is not None:
        faults.update({name: statistics.median(values) for name, values in counts.items() if values})
    return {name: statistics.median(values) for name, values in times.items()}


def minor_faults():
    """The process's minor page faults so far (``getrusage``), or None where there is no ``resource``."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _cpu_jiffies():
    """(busy, steal) jiffies of all CPUs from Linux's /proc/stat, or None elsewhere."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return user + nice + system + irq + softirq, steal


class CpuSteal:
    """Measures the share of CPU time a hypervisor gave to other guests (Linux "steal") over a
    ``with`` block: ``share`` is steal / (busy + steal), None where /proc/stat is missing. On a
    shared VM this is what makes one run 1.5-2x slower than the next, so a benchmark prints it
    beside its figures."""

    def __enter__(self):
        self._start = _cpu_jiffies()
        self.share = None
        return self

    def __exit__(self, *exc):
        end = _cpu_jiffies() if self._start is not None else None
        if end is not None:
            busy, steal = end[0] - self._start[0], end[1] - self._start[1]
            self.share = steal / (busy + steal) if busy + steal > 0 else 0.0
        return False

    def describe(self):
        if self.share is None:
            return "hypervisor steal: not measured (no /proc/stat)"
        return (f"hypervisor steal during the run: {self.share:.0%} of CPU time"
                f"{' (high: absolute figures are unreliable, compare ratios)' if self.share > 0.05 else ''}")


def cpu_model():
    """The CPU's model name (Linux /proc/cpuinfo), else what ``platform`` says."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


class StepWorker:
    """A contender's step in a process of its own (``train_step_tf.py``, ``train_step_torch.py``,
    ``keras_io_worker.py``): ``first()`` and ``run()`` each return when the child has done the
    work; ``faults`` collects the child's minor page faults per ``run()``. ``start`` returns why not
    (a string) when the child's framework is not installed for ``python``."""

    def __init__(self, process, description, script):
        self.process, self.description, self.script, self.faults = process, description, script, []

    @classmethod
    def start(cls, script, python, options, env=None):
        """Starts ``python script *options`` (the script beside this file), with ``env`` added to
        this process's environment."""
        command = [python, os.path.join(os.path.dirname(os.path.abspath(__file__)), script), *options]
        try:
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                       env=None if env is None else {**os.environ, **env})
        except OSError as error:
            return f"{python}: {error}"
        answer = process.stdout.readline().strip()
        if not answer.startswith("ready "):
            process.wait()
            return answer or f"{python} exited with {process.returncode}"
        return cls(process, answer.removeprefix("ready "), script)

    def _call(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if not answer.startswith("done "):
            raise RuntimeError(f"{self.script} answered {answer!r} to {command!r}")
        return int(answer.removeprefix("done "))

    def first(self):
        self._call("first")

    def run(self):
        self.faults.append(self._call("run"))

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def time_workers(script, contenders, rounds):
    """Starts ``script`` for each of ``contenders`` [(row name, python, options, env)], times each
    one's first call, then ``rounds`` of ``run()`` in turn (``interleaved``); closes them all.

    Returns ``(first, medians, notes)``: {row: first call's seconds}, {row: median seconds of a
    run} and lines that say which rows run what, and why a row is missing."""
    workers, first, notes = {}, {}, []
    try:
        for name, python, options, env in contenders:
            worker = StepWorker.start(script, python, options, env)
            if isinstance(worker, str):
                notes.append(f"no {name} row: {worker}")
                continue
            workers[name] = worker
            notes.append(f"{name}: {worker.description}")
            start = time.perf_counter()
            worker.first()
            first[name] = time.perf_counter() - start
        medians = interleaved({name: worker.run for name, worker in workers.items()}, repeats=rounds)
    finally:
        for worker in workers.values():
            worker.close()
    return first, medians, notes


def print_rates(title, notes, rates, first, unit, width):
    """Prints a table of ``rates`` {row: items/s} with each row's ratio to the first row and its
    first call's seconds (``first``), under ``title`` and ``notes``; ``width``: the row names' column."""
    reference = next(iter(rates.values()), None)
    print(f"\n{title}")
    for note in notes:
        print(f"  {note}")
    print(f"  {'':{width}s} {unit:>10s} {'vs first row':>12s} {'first call s':>12s}")
    for name, rate in rates.items():
        print(f"  {name:{width}s} {rate:10.1f} {rate / reference:11.2f}x {first[name]:12.1f}")
