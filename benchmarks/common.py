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


def interleaved(runs, repeats=5, faults=None, samples=None):
    """Median seconds of each of ``runs`` {name: fn}, timed in turn so machine load hits all alike.

    ``faults``: a dict to fill with each run's median count of minor page faults (the process's,
    during that run; Unix only). A step that faults through thousands of fresh pages is slowed by
    its memory allocator, not by its arithmetic: glibc's per-thread heaps once made the same step
    take 29 to 46 ms from one process to the next. ``samples``: a dict to fill with each run's
    seconds, one per repeat in order (repeat r of every run ran in the same round).
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
    if samples is not None:
        samples.update(times)
    return {name: statistics.median(values) for name, values in times.items()}


def alternating_rounds(runs, rounds, steps=1, per_call=1):
    """Times each of ``runs`` {name: fn} in ``rounds`` rounds, in one process: in each round every
    ``fn`` is called ``steps`` times in a row (then ``block`` waits for its last result), in an
    order that rotates by one each round (two runs: A B, B A, A B, ...), so that a drift in the
    machine's load hits all alike and each round's timings ran back to back.

    Returns {name: {"wall": [...], "cpu": [...]}}: for each round in order, milliseconds per step of
    wall time (``time.perf_counter``) and of this process's CPU time (``time.process_time``), a
    call doing ``per_call`` steps (``fit`` over 10 batches: ``per_call=10``).

        times = alternating_rounds({False: step_off, True: step_on}, rounds=11, steps=4)
        print_off_on(times, "SWITCH")
    """
    names = list(runs)
    times = {name: {"wall": [], "cpu": []} for name in names}
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            run = runs[name]
            start, start_cpu = time.perf_counter(), time.process_time()
            for _ in range(steps):
                result = run()
            block(result)
            wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
            times[name]["wall"].append(wall / (steps * per_call) * 1e3)
            times[name]["cpu"].append(cpu / (steps * per_call) * 1e3)
    return times


def round_ratios(a, b):
    """Summary of ``a[r] / b[r]`` over rounds r, where ``a`` and ``b`` were timed in the same
    rounds (``alternating_rounds``, ``interleaved``'s ``samples``): round r's two timings ran back
    to back, so their ratio is steadier than the ratio of the medians when the load drifts.

    Returns a dict: ``of_medians`` (median(a) / median(b)), ``median``, ``low``, ``high``, ``q1``
    and ``q3`` (quartiles) of the per-round ratios, ``above`` (rounds whose ratio is above 1: b
    faster, when a and b are times) and ``rounds``.

        round_ratios([2, 4, 3], [1, 2, 4])  # median 2.0, low 0.75, high 2.0, above 2 of 3
    """
    if len(a) != len(b) or not a:
        raise ValueError(f"round_ratios expects two equally long, non-empty lists of timings, "
                         f"received {len(a)} and {len(b)} values")
    ratios = [x / y for x, y in zip(a, b)]
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else ratios * 3
    return {"of_medians": statistics.median(a) / statistics.median(b), "median": statistics.median(ratios),
            "low": min(ratios), "high": max(ratios), "q1": q1, "q3": q3,
            "above": sum(r > 1 for r in ratios), "rounds": len(ratios)}


def print_ratio_lines(times, a, b, name="off/on", faster="on", wins_by="cpu"):
    """Prints the ratio lines of ``a`` against ``b`` in ``times`` (``alternating_rounds``' result):
    the ratio of the medians of wall and CPU time and in how many rounds ``b`` (called ``faster``)
    won by ``wins_by`` ("cpu" or "wall") time; the median of the rounds' ratios; their range and
    quartiles. Above 1: ``b`` is faster."""
    wall, cpu = round_ratios(times[a]["wall"], times[b]["wall"]), round_ratios(times[a]["cpu"], times[b]["cpu"])
    won = cpu if wins_by == "cpu" else wall
    print(f"  {name}: wall {wall['of_medians']:.3f}x, CPU {cpu['of_medians']:.3f}x ({faster} faster in "
          f"{won['above']} of {won['rounds']} rounds by {'CPU' if wins_by == 'cpu' else 'wall'} time)")
    print(f"  median of the rounds' {name} ratios: wall {wall['median']:.3f}x, CPU {cpu['median']:.3f}x")
    print(f"  per round: CPU {cpu['low']:.3f}-{cpu['high']:.3f}x (quartiles {cpu['q1']:.3f}-{cpu['q3']:.3f}x), "
          f"wall {wall['low']:.3f}-{wall['high']:.3f}x (quartiles {wall['q1']:.3f}-{wall['q3']:.3f}x)")


def print_off_on(times, label, digits="7.2f", wins_by="cpu"):
    """Prints an A/B of one switch: ``times`` is ``alternating_rounds``' result for the runs
    ``False`` and ``True``; one line per value with its median wall and CPU ms per step
    (``label=False  wall ...  CPU ...``, formatted ``digits``), then ``print_ratio_lines`` off/on."""
    for value in (False, True):
        print(f"  {label}={value!s:5}  wall {statistics.median(times[value]['wall']):{digits}}  "
              f"CPU {statistics.median(times[value]['cpu']):{digits}}")
    print_ratio_lines(times, False, True, wins_by=wins_by)


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
    work; ``faults`` collects the child's minor page faults per ``run()`` and ``cpu_seconds`` its CPU
    time per ``run()`` (None where ``/proc`` is absent). ``start`` returns why not (a string) when the
    child's framework is not installed for ``python``."""

    def __init__(self, process, description, script):
        self.process, self.description, self.script, self.faults = process, description, script, []
        self.cpu_seconds = []

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
        before = process_cpu_seconds(self.process.pid)
        self.faults.append(self._call("run"))
        after = process_cpu_seconds(self.process.pid)
        self.cpu_seconds.append(None if before is None or after is None else after - before)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def process_cpu_seconds(pid):
    """The CPU time (user and system, all its threads) of process ``pid`` so far, from
    ``/proc/<pid>/stat``; None where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, ValueError, IndexError):
        return None


def time_workers(script, contenders, rounds, samples=None, busy=None):
    """Starts ``script`` for each of ``contenders`` [(row name, python, options, env)], times each
    one's first call, then ``rounds`` of ``run()`` in turn (``interleaved``); closes them all.

    Returns ``(first, medians, notes)``: {row: first call's seconds}, {row: median seconds of a
    run} and lines that say which rows run what, and why a row is missing. ``samples``: a dict to
    fill with {row: seconds of each round's run}; ``busy``: one to fill with {row: the child's CPU
    time over the wall time of each round's run} (how many CPUs it kept busy; rows without
    ``/proc`` left out)."""
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
        walls = {} if samples is None else samples
        medians = interleaved({name: worker.run for name, worker in workers.items()}, repeats=rounds,
                              samples=walls)
        if busy is not None:
            busy.update(workers_busy(workers, walls))
    finally:
        for worker in workers.values():
            worker.close()
    return first, medians, notes


def workers_busy(workers, walls):
    """{row: [CPUs busy in each round]} of ``workers`` {row: StepWorker}: each run's CPU time of the
    child over ``walls[row]``, its wall seconds per round (``interleaved``'s ``samples``); rows
    without ``/proc`` left out."""
    return {name: [cpu / wall for cpu, wall in zip(worker.cpu_seconds, walls[name])]
            for name, worker in workers.items() if worker.cpu_seconds and None not in worker.cpu_seconds}


def busy_line(busy):
    """The line ``print_busy`` prints ('' for no rows)."""
    if not busy:
        return ""
    rows = (f"{name} {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"
            for name, values in busy.items())
    return "CPUs busy (the process's CPU time / wall time), median and range over the rounds: " + "; ".join(rows)


def print_busy(busy):
    """Prints, per row of ``busy`` ({row: [CPUs busy in each round]}, ``time_workers``), the median
    and range of the CPUs its process kept busy: a framework that ran some rounds on fewer cores
    (Keras on TensorFlow's ViT: 1.0 or 1.9 of 2, whole rounds at a time) shows it here."""
    if busy:
        print("  " + busy_line(busy))


def print_rates(title, notes, rates, first, unit, width, round_rates=None):
    """Prints a table of ``rates`` {row: items/s} with each row's ratio to the first row and its
    first call's seconds (``first``), under ``title`` and ``notes``; ``width``: the row names' column.

    ``round_rates`` {row: [items/s in each round]} (rows timed in the same interleaved rounds) adds
    each row's slowest and fastest round, and one line per other row: the first row's rate over
    its rate, as the ratio of the medians and as the median and range of the rounds' ratios
    (round r's first row against round r's row)."""
    reference = next(iter(rates.values()), None)
    print(f"\n{title}")
    for note in notes:
        print(f"  {note}")
    spread = f" {'min..max':>17s}" if round_rates else ""
    print(f"  {'':{width}s} {unit:>10s}{spread} {'vs first row':>12s} {'first call s':>12s}")
    for name, rate in rates.items():
        if round_rates:
            spread = f" {min(round_rates[name]):8.1f}..{max(round_rates[name]):<7.1f}"
        print(f"  {name:{width}s} {rate:10.1f}{spread} {rate / reference:11.2f}x {first[name]:12.1f}")
    if round_rates and rates:
        first_row = next(iter(rates))
        for name in list(rates)[1:]:
            ratio = round_ratios(round_rates[first_row], round_rates[name])
            print(f"  {first_row} / {name}: {rates[first_row] / rates[name]:.2f}x (ratio of medians); per round "
                  f"{ratio['median']:.2f}x median, {ratio['low']:.2f}-{ratio['high']:.2f}x "
                  f"({ratio['above']} of {ratio['rounds']} rounds above 1)")
