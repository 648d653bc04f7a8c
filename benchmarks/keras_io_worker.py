"""One contender of ``keras_io_step.py`` in a process of its own: ``--framework minikeras`` (``from
minikeras import keras``) or ``--framework keras`` (Keras 3 on the backend ``KERAS_BACKEND`` names,
imported without minikeras, so that it keeps its default allocator).

It builds ``keras_io_models.build(kind, keras, ...)``, prints ``ready <description>``, then answers
one line per command with ``done <minor page faults during it>``: ``first`` (``fit`` on the first
batch: the first call, compile included) and ``run`` (``fit`` for one epoch over all ``--steps``
batches). ``quit`` or the end of input ends it; ``unavailable <reason>`` when the framework cannot
be imported.

    KERAS_BACKEND=jax python benchmarks/keras_io_worker.py --framework keras --kind vit --batch-size 64
"""
import argparse
import importlib
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["minikeras", "keras"], required=True)
    parser.add_argument("--kind", choices=["vit", "gpt", "mlp_dense", "mlp_ops"], required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        if args.framework == "minikeras":
            keras = importlib.import_module("minikeras").keras
            description = "minikeras"
        else:
            keras = importlib.import_module("keras")
            description = f"Keras {keras.__version__} on {keras.backend.backend()}"
    except ImportError as error:
        print(f"unavailable {error}", flush=True)
        return
    import keras_io_models
    from worker_protocol import serve
    model, x, y = keras_io_models.build(args.kind, keras, args.batch_size, args.steps)
    serve(f"{description}, a process of its own",
          lambda: model.fit(x[:args.batch_size], y[:args.batch_size], batch_size=args.batch_size, epochs=1,
                            verbose=0, shuffle=False),
          lambda: model.fit(x, y, batch_size=args.batch_size, epochs=1, verbose=0, shuffle=False))

if __name__ == "__main__":
    main()
