"""Polynomial regression with a GradientTape: fit y = a·x² + b·x + c.

The tutorial's second program: three Variables, mean squared error, plain gradient
descent with ``assign_sub``, 10,000 epochs over the whole data, compiled with
``mk.function``. Prints the fitted polynomial next to the true one.

    python examples/polynomial_regression.py
    python examples/polynomial_regression.py --epochs 1000
"""
import argparse
import time

import numpy as np

import minikeras as mk

TRUE_COEFFICIENTS = (3.0, -2.0, 1.0)  # y = 3x² - 2x + 1


def make_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n).astype(np.float32)
    a, b, c = TRUE_COEFFICIENTS
    y = (a * x ** 2 + b * x + c + rng.normal(0.0, 0.5, n)).astype(np.float32)
    return x, y


class Polynomial(mk.Module):
    """a·x² + b·x + c with trainable coefficients."""

    def __init__(self):
        super().__init__()
        self.a = mk.Variable(0.0, name="a")
        self.b = mk.Variable(0.0, name="b")
        self.c = mk.Variable(0.0, name="c")

    def __call__(self, x):
        return self.a * x * x + self.b * x + self.c


def fit(x, y, epochs, learning_rate=0.01):
    """Trains a Polynomial on (x, y); returns it and the loss of every epoch."""
    model = Polynomial()
    variables = [model.a, model.b, model.c]

    @mk.function
    def train_epoch(x, y):
        with mk.GradientTape() as tape:
            loss = mk.reduce_mean(mk.square(model(x) - y))
        for variable, gradient in zip(variables, tape.gradient(loss, variables)):
            variable.assign_sub(gradient * learning_rate)
        return loss

    x, y = mk.constant(x), mk.constant(y)
    losses = [float(train_epoch(x, y)) for _ in range(epochs)]
    return model, losses


def format_polynomial(a, b, c, digits):
    """'3.0x² - 2.0x + 1.0' (signs written as the operator)."""
    sign = lambda v: "-" if v < 0 else "+"  # noqa: E731
    return f"{a:.{digits}f}x² {sign(b)} {abs(b):.{digits}f}x {sign(c)} {abs(c):.{digits}f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10_000)
    args = parser.parse_args(argv)
    x, y = make_data()
    start = time.perf_counter()
    model, losses = fit(x, y, args.epochs)
    seconds = time.perf_counter() - start
    a, b, c = (float(v.numpy()) for v in (model.a, model.b, model.c))
    print(f"{args.epochs} epochs in {seconds:.2f} s, final loss {losses[-1]:.4f}")
    print(f"fitted: y ≈ {format_polynomial(a, b, c, 4)}")
    print(f"true:   y = {format_polynomial(*TRUE_COEFFICIENTS, 1)}")
    return (a, b, c), losses


if __name__ == "__main__":
    main()
