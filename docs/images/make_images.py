"""Makes the README's pictures in this folder from real runs of the example scripts.

    python docs/images/make_images.py mnist_cnn   # examples/mnist_cnn.py, default run -> mnist_cnn_accuracy.png
    python docs/images/make_images.py fgsm        # examples/fgsm.py -> fgsm_grid.png, fgsm_accuracy.png
    python docs/images/make_images.py dcgan       # examples/dcgan.py, default run -> dcgan_samples.png

``--cnn-weights PATH`` (fgsm, dcgan): the classifier's weights, trained once and reused.
Each picture is written to a temporary name and renamed, so a failed run leaves the old one.
"""
import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))


def replace(source, name):
    """Moves ``source`` to ``HERE/name`` atomically."""
    temporary = HERE / f".{name}.tmp"
    shutil.copyfile(source, temporary)
    os.replace(temporary, HERE / name)
    print(f"wrote {HERE / name}")


def mnist_cnn():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import mnist_cnn as example

    curve = example.main([])
    _, seconds, accuracy = zip(*curve)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(seconds, accuracy, "o-")
    for e, s, a in curve:
        ax.annotate(f"epoch {e:g}: {a:.4f}", (s, a), textcoords="offset points", xytext=(-60, -14), fontsize=8)
    ax.axhline(0.99, color="gray", linestyle="--", linewidth=0.8)
    ax.set(xlabel="seconds (loading, building and compiling included)", ylabel="test accuracy",
           title="MNIST CNN, GradientTape step in mk.function, 2-core CPU")
    ax.title.set_fontsize(9)
    fig.tight_layout()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "curve.png")
        fig.savefig(path, dpi=80)
        replace(path, "mnist_cnn_accuracy.png")


def fgsm(cnn_weights):
    import fgsm as example

    with tempfile.TemporaryDirectory() as folder:
        example.main((["--weights", cnn_weights] if cnn_weights else []) + ["--figures", folder])
        for name in ("fgsm_grid.png", "fgsm_accuracy.png"):
            replace(os.path.join(folder, name), name)


def dcgan(cnn_weights):
    import dcgan as example

    with tempfile.TemporaryDirectory() as folder:
        example.main((["--cnn-weights", cnn_weights] if cnn_weights else []) + ["--figures", folder])
        replace(os.path.join(folder, "dcgan_samples.png"), "dcgan_samples.png")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("picture", choices=["mnist_cnn", "fgsm", "dcgan"])
    parser.add_argument("--cnn-weights", default=None)
    args = parser.parse_args(argv)
    if args.picture == "mnist_cnn":
        mnist_cnn()
    elif args.picture == "fgsm":
        fgsm(args.cnn_weights)
    else:
        dcgan(args.cnn_weights)


if __name__ == "__main__":
    main()
