"""TensorFlow's side of ``train_step.py``, run in a process of its own (TensorFlow only: no
minikeras, no jax, no PyTorch; minikeras's import changes a process's malloc setting, which slows
TensorFlow), so that TensorFlow runs with its default allocator and threads.

The TF 2 tutorial's ``@tf.function`` GradientTape step on Keras layers (``tf_reference.py``), as
a worker driven over its standard input with ``train_step_torch.py``'s protocol: it loads the
batches from ``--data`` (an ``.npz`` with ``x`` (n, 28, 28, 1) float32 and ``y`` (n,) int32),
builds the model (under ``--policy`` if given), prints ``ready <description>``, then answers one
line per command: ``first`` (one step on the first batch, the first call) and ``run`` (one step
per batch) each print ``done <minor page faults during it>``; ``quit`` or the end of input ends
it. When TensorFlow cannot be imported it prints ``unavailable <reason>`` and exits.

    python benchmarks/train_step_tf.py --kind classic --batch-size 128 --data batches.npz
"""
import argparse
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["classic", "simple"], required=True)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--data", required=True, help=".npz with x (n, 28, 28, 1) float32 and y (n,) int32")
    parser.add_argument("--policy", default=None, help="a dtype policy (mixed_bfloat16) for TensorFlow's model")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from worker_protocol import serve
    try:
        import numpy as np
        import tf_reference
    except ImportError as error:
        print(f"unavailable {error}", flush=True)
        return
    data = np.load(args.data)
    x, y = data["x"], data["y"]
    batches = tf_reference.as_tensors([(x[i:i + args.batch_size], y[i:i + args.batch_size])
                                       for i in range(0, len(x), args.batch_size)])
    step = tf_reference.tape_step(args.kind, args.policy)
    def run():
        for images, labels in batches:
            loss = step(images, labels)
        loss.numpy()

    serve(f"TensorFlow {tf_reference.tf.__version__}, @tf.function step, its default allocator",
          lambda: step(*batches[0]).numpy(), run)

if __name__ == "__main__":
    main()
