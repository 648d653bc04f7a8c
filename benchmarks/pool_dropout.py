"""Pooling and dropout masks: minikeras.xla_cpu.pool / dropout vs plain jax, on CPU.

Max pooling: ``lax.reduce_window`` max and its ``jax.vjp`` (select_and_scatter) vs
``max_pool2d_forward`` / ``max_pool2d_grad``; average pooling likewise. Dropout: the keep-mask
from ``jax.random.bernoulli`` with threefry (jax's default), 'rbg', 'unsafe_rbg' and 'philox4x32'
keys vs ``dropout_mask`` (the same bits as threefry's bernoulli), plus a murmur3-finalizer
hash of (index, seed) as a floor for what any counter-based mask can cost. Times are medians of
interleaved rounds, in ms per call; compare ratios within a run.

    python benchmarks/pool_dropout.py [--quick]
"""
import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from conv import race  # noqa: E402

from minikeras.xla_cpu import pool  # noqa: E402
from minikeras.xla_cpu.dropout import dropout_mask  # noqa: E402

# name, input shape, ksize, strides, padding
POOLS = [
    ("mnist 2x2", (128, 24, 24, 64), (2, 2), (2, 2), "VALID"),
    ("cifar 2x2", (128, 32, 32, 32), (2, 2), (2, 2), "VALID"),
    ("odd 2x2 SAME", (128, 15, 15, 64), (2, 2), (2, 2), "SAME"),
    ("3x3 s2 SAME", (128, 16, 16, 64), (3, 3), (2, 2), "SAME"),
]
MASKS = [("mnist pool out", (128, 12, 12, 64), 0.25), ("dense 128", (128, 128), 0.5),
         ("cifar act", (128, 16, 16, 64), 0.5)]


def _ref_max(ksize, strides, padding):
    return lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, *ksize, 1), (1, *strides, 1), padding)


def pool_rows(rounds, quick):
    print(f"{'pool':<14}{'pass':<10}{'ref ms':>9}{'ours ms':>9}{'speedup':>9}")
    for name, shape, ksize, strides, padding in POOLS[:2] if quick else POOLS:
        x = jax.random.normal(jax.random.key(0), shape, jnp.float32)
        ref_max = _ref_max(ksize, strides, padding)
        y = ref_max(x)
        dy = jax.random.normal(jax.random.key(1), y.shape, jnp.float32)
        # TF average pooling (SAME divides by the in-bounds count) written the plain way
        ones = jnp.ones((1, *shape[1:3], 1), jnp.float32)
        window, steps = (1, *ksize, 1), (1, *strides, 1)

        def ref_avg(x):
            return (lax.reduce_window(x, 0.0, lax.add, window, steps, padding)
                    / lax.reduce_window(ones, 0.0, lax.add, window, steps, padding))
        t = race({
            "max fwd ref": (ref_max, (x,)),
            "max fwd ours": (lambda x: pool.max_pool2d_forward(x, ksize, strides, padding), (x,)),
            "max grad ref": (lambda x, dy: jax.vjp(ref_max, x)[1](dy)[0], (x, dy)),
            "max grad ours": (lambda x, dy: pool.max_pool2d_grad(x, dy, ksize, strides, padding), (x, dy)),
            "avg fwd ref": (ref_avg, (x,)),
            "avg fwd ours": (lambda x: pool.avg_pool2d_forward(x, ksize, strides, padding), (x,)),
            "avg grad ref": (lambda x, dy: jax.vjp(ref_avg, x)[1](dy)[0], (x, dy)),
            "avg grad ours": (lambda x, dy: pool.avg_pool2d_grad(dy, x.shape, ksize, strides, padding), (x, dy)),
        }, rounds=rounds)
        for kind in ("max fwd", "max grad", "avg fwd", "avg grad"):
            ref, ours = t[kind + " ref"], t[kind + " ours"]
            print(f"{name:<14}{kind:<10}{ref * 1e3:>9.2f}{ours * 1e3:>9.2f}{ref / ours:>8.1f}x")
        sys.stdout.flush()


def _murmur_mask(seed, shape, rate):
    """A cheap counter hash (murmur3 fmix32 of index ^ seed words): a speed floor, not used."""
    k = jax.random.bits(seed, (2,), jnp.uint32)
    h = lax.iota(jnp.uint32, int(np.prod(shape))).reshape(shape) * np.uint32(0x9E3779B9) + k[0]
    for word in (k[1], None):
        h = (h ^ (h >> 16)) * np.uint32(0x85EBCA6B)
        h = (h ^ (h >> 13)) * np.uint32(0xC2B2AE35)
        h = h ^ (h >> 16)
        if word is not None:
            h = h ^ word
    return h >= np.uint32(int(rate * 2 ** 32))


def mask_rows(rounds, quick):
    print(f"\n{'mask':<16}{'elements':>10}  " + "  ".join(
        f"{n:>11}" for n in ("threefry", "rbg", "unsafe_rbg", "philox4x32", "murmur", "ours")) + "   ours vs threefry")
    for name, shape, rate in MASKS[:2] if quick else MASKS:
        cands = {}
        for impl in ("threefry2x32", "rbg", "unsafe_rbg", "philox4x32"):
            key = jax.random.key(0, impl=impl)
            cands[impl] = (lambda k: jax.random.bernoulli(k, 1.0 - rate, shape), (key,))
        key = jax.random.key(0)
        cands["murmur"] = (lambda k: _murmur_mask(k, shape, rate), (key,))
        cands["ours"] = (lambda k: dropout_mask(k, shape, rate), (key,))
        t = race(cands, rounds=rounds)
        same = bool((jax.jit(cands["ours"][0])(key) == jax.random.bernoulli(key, 1.0 - rate, shape)).all())
        print(f"{name:<16}{int(np.prod(shape)):>10}  " + "  ".join(f"{v * 1e3:>8.2f} ms" for v in t.values())
              + f"   {t['threefry2x32'] / t['ours']:.1f}x (identical mask: {same})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 5)
    print(f"backend {jax.default_backend()}, {os.cpu_count()} cpus; ms per call, medians of {rounds} rounds\n")
    pool_rows(rounds, args.quick)
    mask_rows(rounds, args.quick)


if __name__ == "__main__":
    main()
