"""The DCGAN training step (``examples/dcgan.py``): minikeras vs the same step hand-written in jax.

Both sides train the same generator and discriminator from the same initial weights, with
the tutorial's losses and two Adam(2e-4, beta_1=0.5) optimizers, on the same batches of 256 images:

  * mk:  ``DCGAN.train_step``: two GradientTapes in one ``mk.function``;
  * jax: one ``jax.jit`` step written by hand: ``lax.conv_general_dilated`` and
         ``lax.conv_transpose``, batch normalisation with moving statistics, dropout from
         ``jax.random.bernoulli``, ``jax.value_and_grad`` twice, two ``optax.adam`` (2e-4, b1=0.5).

Printed: images/s of each (steady state, rounds timed in turn so load hits both alike) and
the ratio mk / jax; compile times apart.

    python benchmarks/dcgan_step.py [--width 16] [--steps 10] [--repeats 5]
    python benchmarks/dcgan_step.py --quick
"""
import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax import lax

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CpuSteal, block, interleaved
from dcgan import BATCH_SIZE, DCGAN, NOISE_DIM

import minikeras as mk

DN = ("NHWC", "HWIO", "NHWC")


def leaky_relu(x):
    return jnp.where(x >= 0, x, 0.2 * x)  # Keras 3's LeakyReLU default negative_slope


def batch_norm(x, gamma, beta, mean, var, axes):
    """Training-mode batch normalisation; returns (y, new moving mean, new moving var)."""
    batch_mean, batch_var = jnp.mean(x, axes), jnp.var(x, axes)
    y = (x - batch_mean) * lax.rsqrt(batch_var + 1e-3) * gamma + beta
    return y, 0.99 * mean + 0.01 * batch_mean, 0.99 * var + 0.01 * batch_var


def generator(params, stats, z):
    (dense, g1, b1, t1, g2, b2, t2, g3, b3, t3) = params
    h = z @ dense
    h, m1, v1 = batch_norm(h, g1, b1, *stats[0], axes=(0,))
    h = leaky_relu(h).reshape(z.shape[0], 7, 7, -1)
    h = lax.conv_transpose(h, t1, (1, 1), "SAME", dimension_numbers=DN, transpose_kernel=True)
    h, m2, v2 = batch_norm(h, g2, b2, *stats[1], axes=(0, 1, 2))
    h = lax.conv_transpose(leaky_relu(h), t2, (2, 2), "SAME", dimension_numbers=DN,
                           transpose_kernel=True)
    h, m3, v3 = batch_norm(h, g3, b3, *stats[2], axes=(0, 1, 2))
    h = lax.conv_transpose(leaky_relu(h), t3, (2, 2), "SAME", dimension_numbers=DN,
                           transpose_kernel=True)
    return jnp.tanh(h), [(m1, v1), (m2, v2), (m3, v3)]


def discriminator(params, x, key):
    (k1, c1, k2, c2, kd, cd) = params
    key1, key2 = jax.random.split(key)
    h = leaky_relu(lax.conv_general_dilated(x, k1, (2, 2), "SAME", dimension_numbers=DN) + c1)
    h = jnp.where(jax.random.bernoulli(key1, 0.7, h.shape), h / 0.7, 0.0)
    h = leaky_relu(lax.conv_general_dilated(h, k2, (2, 2), "SAME", dimension_numbers=DN) + c2)
    h = jnp.where(jax.random.bernoulli(key2, 0.7, h.shape), h / 0.7, 0.0)
    return h.reshape(x.shape[0], -1) @ kd + cd


def bce_logits(labels, logits):
    return jnp.mean(jnp.maximum(logits, 0) - logits * labels + jnp.log1p(jnp.exp(-jnp.abs(logits))))


def jax_step(gan):
    """The hand-written step over ``gan``'s initial weights; returns (jitted step, state)."""
    gen_params = [v.numpy() for v in gan.generator.trainable_variables]
    disc_params = [v.numpy() for v in gan.discriminator.trainable_variables]
    stats = [(np.zeros(g.shape, np.float32), np.ones(g.shape, np.float32)) for g in gen_params[1::3]]
    gen_opt, disc_opt = (optax.adam(2e-4, b1=0.5, eps=1e-7) for _ in range(2))

    def step(gen_params, disc_params, stats, gen_state, disc_state, key, images):
        key, noise_key, real_key, fake_key = jax.random.split(key, 4)
        z = jax.random.normal(noise_key, (images.shape[0], NOISE_DIM))

        def losses(gen_params, disc_params):
            fake, new_stats = generator(gen_params, stats, z)
            real_out = discriminator(disc_params, images, real_key)
            fake_out = discriminator(disc_params, fake, fake_key)
            gen_loss = bce_logits(1.0, fake_out)
            disc_loss = bce_logits(1.0, real_out) + bce_logits(0.0, fake_out)
            return gen_loss, disc_loss, new_stats

        gen_loss, gen_grads, new_stats = _value_and_grad(lambda g: losses(g, disc_params), gen_params, 0)
        disc_loss, disc_grads, _ = _value_and_grad(lambda d: losses(gen_params, d), disc_params, 1)
        updates, gen_state = gen_opt.update(gen_grads, gen_state, gen_params)
        gen_params = optax.apply_updates(gen_params, updates)
        updates, disc_state = disc_opt.update(disc_grads, disc_state, disc_params)
        disc_params = optax.apply_updates(disc_params, updates)
        return gen_params, disc_params, new_stats, gen_state, disc_state, key, gen_loss, disc_loss

    state = [gen_params, disc_params, stats, gen_opt.init(gen_params), disc_opt.init(disc_params),
             jax.random.key(0)]
    return jax.jit(step), state


def _value_and_grad(f, params, which):
    def scalar(p):
        out = f(p)
        return out[which], out
    grads, out = jax.grad(scalar, has_aux=True)(params)
    return out[which], grads, out[2]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10, help="steps per timed round")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="width 8, 2 steps, 2 rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.width, args.steps, args.repeats = 8, 2, 2
    mk.random.set_seed(0)
    gan = DCGAN(args.width)
    rng = np.random.default_rng(0)
    batches = [jnp.asarray(rng.uniform(-1, 1, (BATCH_SIZE, 28, 28, 1)).astype(np.float32))
               for _ in range(args.steps)]
    step, state = jax_step(gan)  # before mk's first step: both start from the initial weights

    def run_jax():
        for images in batches:
            *state[:6], gen_loss, _ = step(*state, images)
        block(gen_loss)

    def run_mk():
        for images in batches:
            gen_loss, _ = gan.train_step(images)
        block(gen_loss)

    compile_seconds = {}
    for name, first in (("jax", lambda: block(step(*state, batches[0]))),
                        ("mk", lambda: block(gan.train_step(batches[0])))):
        start = time.perf_counter()
        first()
        compile_seconds[name] = time.perf_counter() - start
    with CpuSteal() as steal:
        seconds = interleaved({"mk": run_mk, "jax": run_jax}, args.repeats)
    rate = {name: args.steps * BATCH_SIZE / s for name, s in seconds.items()}
    print(f"DCGAN step, width {args.width}, batch {BATCH_SIZE}; jax {jax.__version__} on {jax.devices()[0].platform}")
    for name in ("mk", "jax"):
        print(f"{name:4s} {rate[name]:8.0f} images/s   first call (compile) {compile_seconds[name]:.1f} s")
    print(f"mk / jax: {rate['mk'] / rate['jax']:.2f}x")
    print(steal.describe())
    return rate


if __name__ == "__main__":
    main()
