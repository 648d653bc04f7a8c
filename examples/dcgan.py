"""TensorFlow's DCGAN tutorial on MNIST: two models, two optimizers, two tapes in one compiled step.

Generator: Dense(7*7*4w) -> BatchNorm -> LeakyReLU -> Reshape(7, 7, 4w) -> Conv2DTranspose(2w,
5, stride 1) -> BatchNorm -> LeakyReLU -> Conv2DTranspose(w, 5, stride 2) -> BatchNorm ->
LeakyReLU -> Conv2DTranspose(1, 5, stride 2, tanh); discriminator: Conv2D(w, 5, stride 2) ->
LeakyReLU -> Dropout(0.3) -> Conv2D(2w, 5, stride 2) -> LeakyReLU -> Dropout(0.3) -> Flatten ->
Dense(1). The tutorial has w = 64 (Dense(7*7*256)) and 50 epochs; the default here is w = 16
and 4 epochs of the 60,000 images (936 steps of 256), so that the default run, judging CNN
included, ends within 10 minutes on a 2-core CPU.
Both models learn on the tutorial's losses (binary cross-entropy from logits) with Adam at the
DCGAN paper's settings (Radford et al., 2016: learning rate 2e-4, beta_1 = 0.5); the tutorial's
Adam(1e-4) needs several times more steps for digit-like samples (measured: after 936 steps of
1e-4, 22% of samples judged confident, 4 classes), too many for the 10-minute budget.

Sample quality is measured, not eyeballed: 1,000 generated digits are classified by the MNIST
CNN of ``mnist_cnn.py`` (``cnn_classifier.py``: trained, or loaded with ``--cnn-weights``);
printed are the share it classifies with confidence > 0.9 and how many of the 10 classes
appear among those. ``--figures DIR`` writes a grid of samples after each epoch.

    python examples/dcgan.py [--epochs 4] [--subset 0] [--width 16] [--cnn-weights PATH]
    MINIKERAS_QUICK=1 python examples/dcgan.py
"""
import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import minikeras as mk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cnn_classifier import classifier

NOISE_DIM = 100
BATCH_SIZE = 256


def make_generator(width=16):
    return mk.Sequential([
        mk.Input((NOISE_DIM,)),
        mk.layers.Dense(7 * 7 * 4 * width, use_bias=False),
        mk.layers.BatchNormalization(),
        mk.layers.LeakyReLU(),
        mk.layers.Reshape((7, 7, 4 * width)),
        mk.layers.Conv2DTranspose(2 * width, (5, 5), strides=(1, 1), padding="same", use_bias=False),
        mk.layers.BatchNormalization(),
        mk.layers.LeakyReLU(),
        mk.layers.Conv2DTranspose(width, (5, 5), strides=(2, 2), padding="same", use_bias=False),
        mk.layers.BatchNormalization(),
        mk.layers.LeakyReLU(),
        mk.layers.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding="same", use_bias=False, activation="tanh"),
    ], name="generator")


def make_discriminator(width=16):
    return mk.Sequential([
        mk.Input((28, 28, 1)),
        mk.layers.Conv2D(width, (5, 5), strides=(2, 2), padding="same"),
        mk.layers.LeakyReLU(),
        mk.layers.Dropout(0.3),
        mk.layers.Conv2D(2 * width, (5, 5), strides=(2, 2), padding="same"),
        mk.layers.LeakyReLU(),
        mk.layers.Dropout(0.3),
        mk.layers.Flatten(),
        mk.layers.Dense(1),
    ], name="discriminator")


class DCGAN:
    """The two models, their optimizers and the compiled training step of the tutorial."""

    def __init__(self, width=16, learning_rate=2e-4, beta_1=0.5):
        self.generator = make_generator(width)
        self.discriminator = make_discriminator(width)
        self.generator_optimizer = mk.optimizers.Adam(learning_rate, beta_1=beta_1)
        self.discriminator_optimizer = mk.optimizers.Adam(learning_rate, beta_1=beta_1)
        self.cross_entropy = mk.losses.BinaryCrossentropy(from_logits=True)
        self.train_step = mk.function(self._train_step)

    def _train_step(self, images):
        """One step of both models on a batch of real images; returns (gen_loss, disc_loss)."""
        noise = mk.random.normal([images.shape[0], NOISE_DIM])
        with mk.GradientTape() as gen_tape, mk.GradientTape() as disc_tape:
            generated = self.generator(noise, training=True)
            real_output = self.discriminator(images, training=True)
            fake_output = self.discriminator(generated, training=True)
            gen_loss = self.cross_entropy(mk.ones_like(fake_output), fake_output)
            disc_loss = (self.cross_entropy(mk.ones_like(real_output), real_output)
                         + self.cross_entropy(mk.zeros_like(fake_output), fake_output))
        gen_grads = gen_tape.gradient(gen_loss, self.generator.trainable_variables)
        disc_grads = disc_tape.gradient(disc_loss, self.discriminator.trainable_variables)
        self.generator_optimizer.apply_gradients(zip(gen_grads, self.generator.trainable_variables))
        self.discriminator_optimizer.apply_gradients(zip(disc_grads, self.discriminator.trainable_variables))
        return gen_loss, disc_loss

    def sample(self, n, seed=None):
        """``n`` generated images in [0, 1], shape (n, 28, 28, 1), from fixed noise if ``seed``."""
        noise = (np.random.default_rng(seed).normal(size=(n, NOISE_DIM)).astype(np.float32) if seed is not None
                 else mk.random.normal([n, NOISE_DIM]))
        images = np.concatenate([np.asarray(self.generator(noise[i:i + 500], training=False))
                                 for i in range(0, n, 500)])
        return (images + 1.0) / 2.0


def mnist_images(subset=None):
    """MNIST training images scaled to [-1, 1] as the tutorial does, shape (n, 28, 28, 1)."""
    (x_train, _), _ = mk.datasets.mnist.load_data()
    x = x_train[:subset].astype(np.float32)[..., None]
    return (x - 127.5) / 127.5


def sample_quality(cnn, images, confidence=0.9):
    """(share of ``images`` the CNN classifies with probability > ``confidence``, number of
    classes among those, class counts)."""
    probabilities = np.concatenate([np.asarray(cnn(images[i:i + 500], training=False))
                                    for i in range(0, len(images), 500)])
    confident = probabilities.max(axis=1) > confidence
    labels = probabilities.argmax(axis=1)[confident]
    counts = np.bincount(labels, minlength=10)
    return float(confident.mean()), int(np.sum(counts > 0)), counts


def plot_samples(images, title, path=None, columns=8):
    import matplotlib.pyplot as plt

    rows = -(-len(images) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(columns * 0.8, rows * 0.8 + 0.3))
    for ax in np.ravel(axes):
        ax.axis("off")
    for ax, image in zip(np.ravel(axes), images):
        ax.imshow(image[..., 0], cmap="gray_r", vmin=0, vmax=1)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    if path:
        fig.savefig(path, dpi=60)
    return fig


def train(gan, images, epochs, log=print, on_epoch=None, seed=0):
    """Trains for ``epochs`` over shuffled batches of 256 (a last partial batch is dropped, so
    one program serves every step); returns [(epoch, gen loss, disc loss, seconds)]."""
    dataset = (mk.data.Dataset.from_tensor_slices(images).shuffle(len(images), seed=seed)
               .batch(BATCH_SIZE, drop_remainder=True))
    history = []
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        gen_losses, disc_losses = [], []
        for batch in dataset:
            gen_loss, disc_loss = gan.train_step(batch)
            gen_losses.append(gen_loss)
            disc_losses.append(disc_loss)
        history.append((epoch, float(np.mean([float(v) for v in gen_losses])),
                        float(np.mean([float(v) for v in disc_losses])), time.perf_counter() - start))
        log(f"epoch {epoch}/{epochs}: generator loss {history[-1][1]:.3f}, discriminator loss {history[-1][2]:.3f}, "
            f"{history[-1][3]:.1f} s")
        if on_epoch is not None:
            on_epoch(epoch)
    return history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--subset", type=int, default=0, help="train on the first N MNIST images (0: all)")
    parser.add_argument("--width", type=int, default=16, help="filters of the first conv (the tutorial: 64)")
    parser.add_argument("--cnn-weights", default=None, help="the judging CNN's weights: loaded if present, else saved")
    parser.add_argument("--cnn-epochs", type=float, default=1.0)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--figures", default=None, help="a folder for dcgan_epoch_N.png and dcgan_samples.png")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    quick = os.environ.get("MINIKERAS_QUICK") == "1"
    if quick:
        args.epochs, args.subset, args.samples = 1, 1024, 200
    start = time.perf_counter()
    mk.random.set_seed(args.seed)
    images = mnist_images(args.subset or None)
    gan = DCGAN(args.width)
    figures = args.figures
    if figures:
        os.makedirs(figures, exist_ok=True)

    def on_epoch(epoch):
        if figures:
            plot_samples(gan.sample(16, seed=1), f"epoch {epoch}", os.path.join(figures, f"dcgan_epoch_{epoch}.png"))

    history = train(gan, images, args.epochs, on_epoch=on_epoch, seed=args.seed)
    steps = args.epochs * (len(images) // BATCH_SIZE)
    print(f"GAN: {steps} steps in {history[-1][3]:.1f} s ({steps * BATCH_SIZE / history[-1][3]:.0f} images/s, "
          "compiling included)")
    cnn, _ = classifier(args.cnn_weights, args.cnn_epochs, subset=2048 if quick else None)
    samples = gan.sample(args.samples, seed=2)
    share, classes, counts = sample_quality(cnn, samples)
    print(f"sample quality: {share:.1%} of {args.samples} generated digits classified with confidence > 0.9; "
          f"{classes}/10 classes among them (counts {counts.tolist()})")
    if figures:
        plot_samples(samples[:32], f"DCGAN samples after {args.epochs} epochs",
                     os.path.join(figures, "dcgan_samples.png"))
    print(f"wall time {time.perf_counter() - start:.1f} s")
    return history, share, classes


if __name__ == "__main__":
    main()
