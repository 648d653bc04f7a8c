"""benchmarks/common.py's round helpers (``alternating_rounds``, ``round_ratios``, the ratio lines
that ``tuning_ab.py``, ``rnn_two_threads.py``, ``vit_attention_ab.py`` and ``keras_io_step.py``
print), checked with fake runs on a fake clock: the order of the calls and the arithmetic, no
real timings."""
import importlib.util
import statistics
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "common.py"
_spec = importlib.util.spec_from_file_location("benchmarks_common", _PATH)
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)


class FakeClock:
    """Stands in for the ``time`` module: a run advances wall and CPU time by what it is told."""

    def __init__(self):
        self.wall = self.cpu = 0.0

    def perf_counter(self):
        return self.wall

    def process_time(self):
        return self.cpu

    def spend(self, wall, cpu):
        self.wall += wall
        self.cpu += cpu


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(common, "time", fake)
    return fake


def test_two_runs_alternate_and_three_rotate(clock):
    calls = []
    runs = {name: (lambda name=name: calls.append(name)) for name in "ab"}
    common.alternating_rounds(runs, rounds=4, steps=2)
    assert calls == list("aabb" "bbaa" "aabb" "bbaa")
    calls.clear()
    runs = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    times = common.alternating_rounds(runs, rounds=4)
    assert calls == list("abc" "bca" "cab" "abc")
    assert {name: len(t["wall"]) for name, t in times.items()} == {"a": 4, "b": 4, "c": 4}


def test_milliseconds_per_step_of_each_round(clock):
    costs = {False: iter([0.010, 0.030]), True: iter([0.020, 0.040])}  # seconds of wall time per call

    def run(value):
        wall = next(costs[value])
        clock.spend(wall, wall / 2)

    runs = {value: (lambda value=value: run(value)) for value in (False, True)}
    times = common.alternating_rounds(runs, rounds=1, steps=1, per_call=2)  # a call does 2 steps
    assert times[False]["wall"] == pytest.approx([5.0])
    assert times[True]["wall"] == pytest.approx([10.0])
    assert times[True]["cpu"] == pytest.approx([5.0])
    # steps=1 each round took one value from each iterator; a second round takes the next ones
    times = common.alternating_rounds(runs, rounds=1, steps=1, per_call=1)
    assert times[False]["wall"] == pytest.approx([30.0]) and times[True]["cpu"] == pytest.approx([20.0])


def test_alternating_rounds_waits_for_the_last_result(clock):
    class Pending:
        waited = 0

        def block_until_ready(self):
            Pending.waited += 1

    common.alternating_rounds({"a": Pending, "b": Pending}, rounds=3, steps=5)
    assert Pending.waited == 6  # once per run and round, not once per call


def test_round_ratios():
    a, b = [2.0, 4.0, 3.0, 6.0, 1.0], [1.0, 2.0, 4.0, 3.0, 1.0]
    ratios = [x / y for x, y in zip(a, b)]  # 2, 2, 0.75, 2, 1
    summary = common.round_ratios(a, b)
    assert summary["of_medians"] == pytest.approx(statistics.median(a) / statistics.median(b))
    assert summary["median"] == pytest.approx(2.0)
    assert (summary["low"], summary["high"]) == (0.75, 2.0)
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    assert (summary["q1"], summary["q3"]) == pytest.approx((q1, q3)) == (1.0, 2.0)
    assert summary["above"] == 3 and summary["rounds"] == 5  # 1.0 is no win
    one = common.round_ratios([3.0], [2.0])
    assert one["median"] == one["q1"] == one["q3"] == one["low"] == one["high"] == 1.5
    with pytest.raises(ValueError, match="received 2 and 1"):
        common.round_ratios([1.0, 2.0], [1.0])


def test_print_off_on(capsys):
    times = {False: {"wall": [10.0, 12.0, 11.0], "cpu": [20.0, 21.0, 30.0]},
             True: {"wall": [5.0, 12.0, 10.0], "cpu": [10.0, 30.0, 15.0]}}
    common.print_off_on(times, "SWITCH")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "  SWITCH=False  wall   11.00  CPU   21.00"
    assert lines[1] == "  SWITCH=True   wall   10.00  CPU   15.00"
    # CPU ratios per round: 2.0, 0.7, 2.0 -> on faster in 2 of 3; wall: 2.0, 1.0, 1.1
    assert lines[2] == "  off/on: wall 1.100x, CPU 1.400x (on faster in 2 of 3 rounds by CPU time)"
    assert lines[3] == "  median of the rounds' off/on ratios: wall 1.100x, CPU 2.000x"
    assert lines[4].startswith("  per round: CPU 0.700-2.000x (quartiles 1.350-2.000x), wall 1.000-2.000x")
    common.print_off_on(times, "SWITCH", digits="8.1f", wins_by="wall")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "  SWITCH=False  wall     11.0  CPU     21.0"
    assert lines[2].endswith("(on faster in 2 of 3 rounds by wall time)")


def test_worker_rounds_kept_and_printed(capsys):
    samples = {}
    medians = common.interleaved({"a": lambda: None, "b": lambda: None}, repeats=3, samples=samples)
    assert set(samples) == {"a", "b"} and all(len(v) == 3 for v in samples.values())
    assert medians["a"] == statistics.median(samples["a"])
    rates = {"minikeras": 60.0, "keras-tf": 30.0}
    round_rates = {"minikeras": [58.0, 60.0, 66.0], "keras-tf": [20.0, 30.0, 60.0]}
    common.print_rates("vit", [], rates, {"minikeras": 5.0, "keras-tf": 9.0}, "samples/s", 10, round_rates)
    lines = capsys.readouterr().out.splitlines()
    assert lines[3].split() == ["minikeras", "60.0", "58.0..66.0", "1.00x", "5.0"]
    assert lines[4].split() == ["keras-tf", "30.0", "20.0..60.0", "0.50x", "9.0"]
    # round ratios 2.9, 2.0, 1.1
    assert lines[5] == ("  minikeras / keras-tf: 2.00x (ratio of medians); per round 2.00x median, 1.10-2.90x "
                        "(3 of 3 rounds above 1)")
    common.print_rates("vit", [], rates, {"minikeras": 5.0, "keras-tf": 9.0}, "samples/s", 10)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and lines[3].split() == ["minikeras", "60.0", "1.00x", "5.0"]


def test_a_child_process_cpu_time_and_the_busy_line(capsys):
    """``process_cpu_seconds`` reads a child's CPU time (a child that spins has spent some), and
    ``print_busy`` prints each row's median and range."""
    import subprocess
    import sys
    import time

    spin = "import time\nwhile time.process_time() < 0.3: pass\ninput()"  # 0.3 s of CPU, however loaded
    child = subprocess.Popen([sys.executable, "-c", spin], stdin=subprocess.PIPE, text=True)
    try:
        before = common.process_cpu_seconds(child.pid)
        if before is None:
            pytest.skip("no /proc here")
        deadline = time.time() + 60
        while common.process_cpu_seconds(child.pid) < 0.2 and time.time() < deadline:
            pass
        assert common.process_cpu_seconds(child.pid) >= 0.2
    finally:
        child.communicate("\n")
    common.print_busy({"minikeras": [1.6, 1.7, 1.65], "keras-tf": [1.0, 1.9, 1.92]})
    assert capsys.readouterr().out == ("  CPUs busy (the process's CPU time / wall time), median and range over the "
                                       "rounds: minikeras 1.65 (1.60-1.70); keras-tf 1.90 (1.00-1.92)\n")
    common.print_busy({})
    assert capsys.readouterr().out == ""


class _FakeWorker:
    def __init__(self, cpu_seconds):
        self.cpu_seconds = cpu_seconds


def test_workers_busy_divides_each_rounds_cpu_time_by_its_wall_time():
    workers = {"tf": _FakeWorker([2.0, 1.0, 1.8]), "no proc": _FakeWorker([None, 1.0, 1.0]),
               "not run": _FakeWorker([])}
    busy = common.workers_busy(workers, {"tf": [1.0, 1.0, 1.0], "no proc": [1.0] * 3, "not run": []})
    assert busy == {"tf": [2.0, 1.0, 1.8]}  # rows without /proc figures, or without runs, left out
    assert common.busy_line(busy) == ("CPUs busy (the process's CPU time / wall time), median and range over "
                                      "the rounds: tf 1.80 (1.00-2.00)")
    assert common.busy_line({}) == ""
