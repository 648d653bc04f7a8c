"""Speed of the eager tape against bare JAX dispatch, and of mk.function against jax.jit.

A chain of N small elementwise ops (sin, multiply by a constant, add a constant vector,
repeating) on a (16,) float32 vector, timed as:

  bare jax          the chain as jax.numpy calls, forward only (one op dispatch each)
  mk, no tape       the chain as minikeras ops with no tape active
  mk, tape fwd      the chain recorded on a GradientTape, forward only
  mk, tape f+b      recorded, then tape.gradient (forward + backward)
  jax.jit(grad)     hand-written jax.jit(jax.grad(sum(chain))) of the whole step
  mk.function       the same step (tape + gradient) under mk.function; both again on a
                    (--big,) vector, where the program's run time dominates the call overhead

Per-op figures divide a whole chain's time by N. The variants run in turn, round after
round (after warm-up, so compilation is excluded), so that load from other processes
falls on all alike; ratios compare the minima. Targets (DESIGN.md, "cheap when eager"):
tape f+b <= 3x bare jax per op; no tape ~= bare jax; mk.function <= 1.05x jax.jit.

    python benchmarks/eager_tape.py [--ops 200] [--repeats 30]
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import minikeras as mk  # noqa: E402


def chain_jax(x, c, n):
    for i in range(n):
        k = i % 3
        if k == 0:
            x = jnp.sin(x)
        elif k == 1:
            x = x * 0.5
        else:
            x = x + c
    return x


def chain_mk(x, c, n):
    for i in range(n):
        k = i % 3
        if k == 0:
            x = mk.sin(x)
        elif k == 1:
            x = x * 0.5
        else:
            x = x + c
    return x


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter


def interleaved(variants, rounds, inner):
    """{name: (min, median) seconds per call}, timing the variants in turn in every round so
    that load from other processes falls on all of them alike."""
    for fn in variants.values():  # warm up: compile, fill caches
        fn()
        fn()
        fn()
    times = {name: [] for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            start = clock()
            for _ in range(inner):
                fn()
            times[name].append((clock() - start) / inner)
    return {name: (min(t), statistics.median(t)) for name, t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200, help="ops in the chain")
    parser.add_argument("--repeats", type=int, default=30, help="interleaved rounds")
    parser.add_argument("--big", type=int, default=65536, help="vector length of the second step timing")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall time, or this process's CPU time (steadier on a loaded machine)")
    args = parser.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    n = args.ops

    x_jax = jnp.linspace(0.1, 1.0, 16, dtype=jnp.float32)
    c_jax = jnp.full((16,), 0.01, jnp.float32)
    x, c = mk.constant(x_jax), mk.constant(c_jax)

    def bare():
        chain_jax(x_jax, c_jax, n).block_until_ready()

    def no_tape():
        chain_mk(x, c, n)._value.block_until_ready()

    def tape_forward():
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = chain_mk(x, c, n)
        y._value.block_until_ready()

    def tape_forward_backward():
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = chain_mk(x, c, n)
        tape.gradient(y, x)._value.block_until_ready()

    jax_step = jax.jit(jax.grad(lambda x, c: jnp.sum(chain_jax(x, c, n))))

    @mk.function
    def mk_step(x, c):
        with mk.GradientTape() as tape:
            tape.watch(x)
            y = chain_mk(x, c, n)
        return tape.gradient(y, x)

    def jitted():
        jax_step(x_jax, c_jax).block_until_ready()

    def function():
        mk_step(x, c)._value.block_until_ready()

    # the same step on a vector large enough that the program's run time dominates the call
    big = args.big
    x_big, c_big = jnp.linspace(0.1, 1.0, big, dtype=jnp.float32), jnp.full((big,), 0.01, jnp.float32)
    x_big_mk, c_big_mk = mk.constant(x_big), mk.constant(c_big)

    def jitted_big():
        jax_step(x_big, c_big).block_until_ready()

    def function_big():
        mk_step(x_big_mk, c_big_mk)._value.block_until_ready()

    # the numbers must agree before the times mean anything
    expected = jax_step(x_jax, c_jax)
    for name, got in [("mk.function", mk_step(x, c)._value)]:
        if not jnp.allclose(got, expected, rtol=1e-5, atol=1e-6):
            raise SystemExit(f"{name} gradient differs from jax.grad: {got} vs {expected}")
    with mk.GradientTape() as tape:
        tape.watch(x)
        y = chain_mk(x, c, n)
    if not jnp.allclose(tape.gradient(y, x)._value, expected, rtol=1e-5, atol=1e-6):
        raise SystemExit("eager tape gradient differs from jax.grad")

    per_op = interleaved({
        "bare jax (jnp calls, fwd)": bare,
        "mk, no tape (fwd)": no_tape,
        "mk, tape (fwd only)": tape_forward,
        "mk, tape (fwd + bwd)": tape_forward_backward,
    }, args.repeats, inner=1)
    per_op = {name: (lo / n, mid / n) for name, (lo, mid) in per_op.items()}
    step = interleaved({"jax.jit(jax.grad(...))": jitted, "mk.function": function}, args.repeats, inner=20)
    step_big = interleaved({"jax.jit(jax.grad(...))": jitted_big, "mk.function": function_big}, args.repeats,
                           inner=2)
    print(f"jax {jax.__version__} on {jax.default_backend()}; chain of {n} elementwise ops on a (16,) float32 vector; "
          f"{args.clock} clock, min and median of {args.repeats} interleaved rounds; ratios of the minima")
    table(f"per op (chain time / {n})", per_op, "bare jax (jnp calls, fwd)", "x bare jax")
    table("whole step (fwd + bwd), per call", step, "jax.jit(jax.grad(...))", "x jax.jit")
    table(f"same step on a ({big},) vector", step_big, "jax.jit(jax.grad(...))", "x jax.jit")
    bare_op = per_op["bare jax (jnp calls, fwd)"][0]
    print(f"targets: tape f+b <= 3.00x bare jax (got {per_op['mk, tape (fwd + bwd)'][0] / bare_op:.2f}x); "
          f"no tape ~ 1x (got {per_op['mk, no tape (fwd)'][0] / bare_op:.2f}x); "
          f"mk.function <= 1.05x jax.jit (got {step['mk.function'][0] / step['jax.jit(jax.grad(...))'][0]:.2f}x)")


def table(title, results, reference, ratio_name):
    print(f"{title:36s} {'min us':>9s} {'median us':>10s} {ratio_name:>11s}")
    base = results[reference][0]
    for name, (lo, mid) in results.items():
        print(f"  {name:34s} {lo * 1e6:9.2f} {mid * 1e6:10.2f} {lo / base:11.2f}")

if __name__ == "__main__":
    main()
