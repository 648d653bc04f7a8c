"""Training throughput of the Transformer example (examples/transformer.py) against the same
model hand-written in jax.

Contenders, timed in turn in one run (so machine load hits all alike), on the same batches of the
example's reversal task:
  * jax:     a hand-written ``jax.jit`` step: the example's model in ``jnp`` (einsum projections,
             masked softmax attention, post-LayerNorm residuals, ReLU feed-forward, dropout with
             ``jax.random.bernoulli``), the masked cross-entropy, optax Adam(0.9, 0.98, 1e-9) on the
             tutorial's warm-up schedule; it starts from the minikeras model's initial weights,
  * jax rbg: the same with ``jax.random.key(0, impl="rbg")`` (XLA's RngBitGenerator for the dropout
             masks instead of threefry, which XLA:CPU compiles slowly and runs slowly),
  * mk tape: a ``mk.function`` GradientTape step with ``optimizer.apply_gradients``,
  * mk fit:  ``model.fit`` over the same batches (one epoch),
reported as samples/s in steady state, as ratios to jax (goal: >= 0.95x), and the first call's
compile time of each.

    python benchmarks/transformer_step.py                    # the example's sizes, batch 64
    python benchmarks/transformer_step.py --quick            # tiny sizes, a smoke run
    python benchmarks/transformer_step.py --layers 4 --d-model 128 --batch-size 128
"""
import argparse
import importlib.util
import math
import os
import sys
import time

import jax
import jax.numpy as jnp
import optax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import block, interleaved  # noqa: E402

import minikeras as mk  # noqa: E402

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "transformer.py")


def load_example():
    spec = importlib.util.spec_from_file_location("transformer_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the hand-written model ----------------------------------------------------------------
def _arrays(layer):
    return [w._value for w in layer.weights]


def params_of(model):
    """The minikeras model's weights as a pytree the jax forward below reads."""
    def mha(m):
        return {name: tuple(_arrays(getattr(m, name))) for name in ("query_dense", "key_dense", "value_dense",
                                                                     "output_dense")}

    def norm(n):
        return tuple(_arrays(n))

    def ffn(f):
        return {"dense1": tuple(_arrays(f.dense1)), "dense2": tuple(_arrays(f.dense2)), "norm": norm(f.layer_norm)}
    return {
        "source_embedding": model.source_embedding.embedding.embeddings._value,
        "target_embedding": model.target_embedding.embedding.embeddings._value,
        "encoder": [{"attention": mha(e.self_attention), "norm": norm(e.layer_norm), "ffn": ffn(e.ffn)}
                    for e in model.encoder_layers],
        "decoder": [{"self": mha(d.causal_self_attention), "norm1": norm(d.norm1), "cross": mha(d.cross_attention),
                     "norm2": norm(d.norm2), "ffn": ffn(d.ffn)} for d in model.decoder_layers],
        "final": tuple(_arrays(model.final_layer)),
    }


def _dropout(key, x, rate):
    if rate == 0:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def _layer_norm(x, gamma, beta, eps=1e-3):  # Keras's default epsilon
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * gamma + beta


def _attention(p, query, value, mask, key, rate):
    (wq, bq), (wk, bk), (wv, bv), (wo, bo) = p["query_dense"], p["key_dense"], p["value_dense"], p["output_dense"]
    q = jnp.einsum("abc,cde->abde", query, wq) + bq
    k = jnp.einsum("abc,cde->abde", value, wk) + bk
    v = jnp.einsum("abc,cde->abde", value, wv) + bv
    q = q / math.sqrt(wq.shape[-1])
    scores = jnp.einsum("aecd,abcd->acbe", k, q)
    scores = jnp.where(mask[:, None], scores, -1e9)
    probs = jax.nn.softmax(scores, axis=-1) * mask[:, None]
    probs = _dropout(key, probs, rate)
    out = jnp.einsum("acbe,aecd->abcd", probs, v)
    return jnp.einsum("abcd,cde->abe", out, wo) + bo


def _ffn(p, x, key, rate):
    (w1, b1), (w2, b2) = p["dense1"], p["dense2"]
    h = jnp.einsum("btd,df->btf", jax.nn.relu(jnp.einsum("btd,df->btf", x, w1) + b1), w2) + b2
    return _layer_norm(x + _dropout(key, h, rate), *p["norm"])


def jax_forward(params, source, target, key, rate, positions):
    d_model = params["source_embedding"].shape[1]
    source_mask = (source != 0)[:, None, :]
    target_mask = (target != 0)[:, None, :] & jnp.tril(jnp.ones((target.shape[1],) * 2, bool))[None]
    keys = iter(jax.random.split(key, 64))
    x = params["source_embedding"][source] * math.sqrt(d_model) + positions[None, :source.shape[1]]
    x = _dropout(next(keys), x, rate)
    for layer in params["encoder"]:
        x = _layer_norm(x + _attention(layer["attention"], x, x, source_mask, next(keys), rate), *layer["norm"])
        x = _ffn(layer["ffn"], x, next(keys), rate)
    context = x
    y = params["target_embedding"][target] * math.sqrt(d_model) + positions[None, :target.shape[1]]
    y = _dropout(next(keys), y, rate)
    for layer in params["decoder"]:
        y = _layer_norm(y + _attention(layer["self"], y, y, target_mask, next(keys), rate), *layer["norm1"])
        y = _layer_norm(y + _attention(layer["cross"], y, context, source_mask, next(keys), rate), *layer["norm2"])
        y = _ffn(layer["ffn"], y, next(keys), rate)
    w, b = params["final"]
    return jnp.einsum("btd,dv->btv", y, w) + b


def jax_step(model, example, rate, warmup, rng="threefry2x32"):
    params = jax.tree_util.tree_map(lambda a: jnp.array(a, copy=True), params_of(model))  # the step donates them
    d_model = params["source_embedding"].shape[1]
    positions = jnp.asarray(example.positional_encoding(64, d_model))

    def schedule(step):
        step = step.astype(jnp.float32) + 1.0
        return jax.lax.rsqrt(float(d_model)) * jnp.minimum(jax.lax.rsqrt(step), step * warmup ** -1.5)
    optimizer = optax.adam(schedule, b1=0.9, b2=0.98, eps=1e-9)

    def loss_fn(params, source, target, labels, key):
        logits = jax_forward(params, source, target, key, rate, positions)
        losses = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
        mask = (labels != 0).astype(losses.dtype)
        return jnp.sum(losses * mask) / jnp.sum(mask)

    def step(params, opt_state, source, target, labels, key):
        key, sub = jax.random.split(key)
        loss, grads = jax.value_and_grad(loss_fn)(params, source, target, labels, sub)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, key, loss

    return jax.jit(step, donate_argnums=(0, 1)), [params, optimizer.init(params), jax.random.key(0, impl=rng)]


def mk_tape_step(model, example, warmup):
    optimizer = mk.optimizers.Adam(example.CustomSchedule(model.final_layer.kernel.shape[0], warmup), beta_1=0.9,
                                   beta_2=0.98, epsilon=1e-9)

    @mk.function
    def tape_step(source, target, labels):
        with mk.GradientTape() as tape:
            loss = example.masked_loss(labels, model((source, target), training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return tape_step


def measure(args):
    example = load_example()
    sizes = dict(num_layers=args.layers, d_model=args.d_model, num_heads=args.heads, dff=args.dff,
                 dropout_rate=args.dropout)
    n = args.steps * args.batch_size
    source, target, labels = example.make_data(n, seed=0)
    batches = [tuple(jnp.asarray(a[i * args.batch_size:(i + 1) * args.batch_size]) for a in (source, target, labels))
               for i in range(args.steps)]

    def model():
        built = example.build(args.warmup, seed=0, **sizes)
        built((source[:1], target[:1]))  # the weights
        return built

    reference = model()

    def jax_contender(rng):
        step, state = jax_step(reference, example, args.dropout, args.warmup, rng)

        def first():
            state[0], state[1], state[2], loss = step(state[0], state[1], *batches[0], state[2])
            return loss

        def run():
            for s, t, y in batches:
                state[0], state[1], state[2], loss = step(state[0], state[1], s, t, y, state[2])
            block(loss)
        return first, run
    first_jax, run_jax = jax_contender("threefry2x32")
    first_rbg, run_rbg = jax_contender("rbg")

    tape_step = mk_tape_step(model(), example, args.warmup)

    def run_tape():
        for s, t, y in batches:
            loss = tape_step(s, t, y)
        block(loss)

    fit_model = model()
    data = mk.data.Dataset.from_tensor_slices(((source, target), labels)).batch(args.batch_size)

    def run_fit():
        fit_model.fit(data, epochs=1, verbose=0)

    first_calls = {"jax": first_jax, "jax rbg": first_rbg, "mk tape": lambda: tape_step(*batches[0]),
                   "mk fit": lambda: fit_model.fit(data.take(1), epochs=1, verbose=0)}
    compile_seconds = {}
    for name, first in first_calls.items():
        start = time.perf_counter()
        block(first())
        compile_seconds[name] = time.perf_counter() - start
    seconds = interleaved({"jax": run_jax, "jax rbg": run_rbg, "mk tape": run_tape, "mk fit": run_fit}, args.repeats)
    return {name: n / s for name, s in seconds.items()}, compile_seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, few steps: a smoke run")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--dff", type=int, default=128)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50, help="batches per timed round")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1000, help="the schedule's warm-up steps")
    args = parser.parse_args(argv)
    if args.quick:
        args.layers, args.d_model, args.heads, args.dff, args.batch_size = 1, 16, 2, 32, 8
        args.steps, args.repeats = 3, 2
    rates, compile_seconds = measure(args)
    print(f"Transformer step: {args.layers} layers, d_model {args.d_model}, {args.heads} heads, dff {args.dff}, "
          f"dropout {args.dropout}, batch {args.batch_size}; jax {jax.__version__} on {jax.devices()[0].platform}")
    print(f"{'contender':<10}{'samples/s':>12}{'vs jax':>9}{'first call s':>14}")
    for name, rate in rates.items():
        print(f"{name:<10}{rate:>12.0f}{rate / rates['jax']:>8.2f}x{compile_seconds[name]:>14.2f}")
    return rates, compile_seconds


if __name__ == "__main__":
    main()
