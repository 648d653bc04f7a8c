"""PyTorch's side of ``train_step.py``, run in a process of its own (PyTorch only: no minikeras, no
jax, no TensorFlow; each changes a process's malloc and threads).

The classic and the simple MNIST CNN written in PyTorch, layer for layer as in ``train_step.py``
(NCHW, PyTorch's own layout; the softmax folded into ``F.cross_entropy`` on logits), Adam 1e-3
with Keras's epsilon 1e-7, an eager step (``zero_grad``, forward, ``backward``, ``step``) on
``torch.set_num_threads(--threads)``; ``--compile`` wraps the model in ``torch.compile``.

A worker driven over its standard input, so that ``train_step.py`` can time it in turn with the
other contenders: it loads the batches from ``--data`` (an ``.npz`` with ``x`` (n, 28, 28, 1)
float32 and ``y`` (n,) int32), builds the model, prints ``ready``, then answers one line per
command: ``first`` (one step on the first batch, the first call) and ``run`` (one step per batch)
each print ``done <minor page faults during it>``; ``quit`` or the end of input ends it. When
PyTorch cannot be imported it prints ``unavailable <reason>`` and exits.

    python benchmarks/train_step_torch.py --kind classic --batch-size 128 --data batches.npz
"""
import argparse
import os
import sys


def classic_cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(),
        nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
        nn.Linear(64 * 12 * 12, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10))


def simple_cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.5), nn.Linear(64 * 5 * 5, 10))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["classic", "simple"], required=True)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--data", required=True, help=".npz with x (n, 28, 28, 1) float32 and y (n,) int32")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (default: eager)")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from worker_protocol import serve
    try:
        import numpy as np
        import torch
        import torch.nn.functional as F
        from torch import nn
    except ImportError as error:
        print(f"unavailable {error}", flush=True)
        return
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    data = np.load(args.data)
    x = torch.from_numpy(np.ascontiguousarray(data["x"].transpose(0, 3, 1, 2)))  # NHWC -> NCHW, untimed
    y = torch.from_numpy(data["y"].astype(np.int64))
    batches = [(x[i:i + args.batch_size], y[i:i + args.batch_size]) for i in range(0, len(x), args.batch_size)]
    model = (classic_cnn if args.kind == "classic" else simple_cnn)(nn)
    model.train()  # dropout on
    forward = torch.compile(model) if args.compile else model
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)

    def step(images, labels):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(images), labels)
        loss.backward()
        optimizer.step()
        return loss

    def run():
        for images, labels in batches:
            loss = step(images, labels)
        loss.item()  # eager CPU PyTorch is synchronous; .item() makes that explicit

    serve(f"torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{'torch.compile' if args.compile else 'eager'}", lambda: step(*batches[0]).item(), run)

if __name__ == "__main__":
    main()
