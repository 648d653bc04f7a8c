"""One contender of ``applications.py`` in a process of its own: ``--framework minikeras`` (``from
minikeras import keras``) or ``--framework keras`` (Keras 3 on the backend ``KERAS_BACKEND`` names:
``jax``, or ``tensorflow`` for TensorFlow's row; imported without minikeras, so that it keeps its
default allocator).

It builds ``<model>`` from ``mk.applications`` or ``keras.applications`` (``weights=None``, 1000
classes, ``--size`` square RGB input), makes ``--steps`` batches of random images (and labels),
prints ``ready <description>``, then answers one line per command with ``done <minor page faults during it>``:

  * ``--phase predict``: ``first`` is ``predict_on_batch`` on the first batch (the first call,
    compile included), ``run`` one ``predict_on_batch`` per batch;
  * ``--phase train``: the model compiled with SGD(momentum=0.9) and sparse categorical
    crossentropy, ``first`` one ``train_on_batch`` (compile included), ``run`` one per batch.

``quit`` or the end of input ends it; ``unavailable <reason>`` when the framework cannot be imported.

    KERAS_BACKEND=jax python benchmarks/applications_worker.py --framework keras --model ResNet50 \\
        --phase predict --batch-size 32 --size 224 --steps 5
"""
import argparse
import importlib
import resource
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["minikeras", "keras"], required=True)
    parser.add_argument("--model", choices=["MobileNetV2", "ResNet50"], required=True)
    parser.add_argument("--phase", choices=["predict", "train"], required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--steps", type=int, required=True)
    args = parser.parse_args(argv)
    try:
        if args.framework == "minikeras":
            keras = importlib.import_module("minikeras").keras
            applications = importlib.import_module("minikeras.applications")
            description = "minikeras"
        else:
            keras = importlib.import_module("keras")
            applications = keras.applications
            description = f"Keras {keras.__version__} on {keras.backend.backend()}"
        import numpy as np
    except ImportError as error:
        print(f"unavailable {error}", flush=True)
        return
    model = getattr(applications, args.model)(weights=None, input_shape=(args.size, args.size, 3))
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, (args.batch_size, args.size, args.size, 3)).astype("float32")
          for _ in range(args.steps)]
    ys = [rng.integers(0, 1000, (args.batch_size,)).astype("int32") for _ in range(args.steps)]
    if args.phase == "train":
        model.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9), loss="sparse_categorical_crossentropy")

        def step(i):
            return model.train_on_batch(xs[i], ys[i])
    else:
        def step(i):
            return np.asarray(model.predict_on_batch(xs[i]))  # read back: the work is done when it returns
    print(f"ready {description}, a process of its own", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        if command == "first":
            step(0)
        elif command == "run":
            for i in range(args.steps):
                step(i)
        else:
            print(f"error unknown command {command!r}", flush=True)
            continue
        print(f"done {resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before}", flush=True)


if __name__ == "__main__":
    main()
