"""Regression with a Normalization layer: the TensorFlow tutorial "Basic regression: Predict fuel
efficiency", renamed ``tf.keras -> mk``.

The tutorial downloads the Auto MPG table; this example makes an Auto-MPG-like table in the
script (no download, so the numbers differ from the tutorial's): 398 cars with cylinders,
displacement, horsepower, weight, acceleration, model year and origin, and a fuel efficiency
(MPG) that falls as 1 / weight and with horsepower and rises with the model year, plus noise.
As in the tutorial, the features are normalized by a ``layers.Normalization`` layer adapted to
the training set (its mean and variance become non-trainable weights of the model), and four
models are compared by their test mean absolute error: a linear model on horsepower, a linear
model on all features, and a DNN (two hidden layers of 64) on horsepower and on all features.

    python examples/regression_normalization.py
    python examples/regression_normalization.py --epochs 20
"""
import argparse

import numpy as np

import minikeras as mk
from minikeras import layers

COLUMNS = ["Cylinders", "Displacement", "Horsepower", "Weight", "Acceleration", "Model Year", "Europe", "Japan", "USA"]


def make_table(n=398, seed=0):
    """``(features, mpg)``: an Auto-MPG-like table (float32 columns named in ``COLUMNS``)."""
    rng = np.random.default_rng(seed)
    cylinders = rng.choice([4, 6, 8], size=n, p=[0.5, 0.25, 0.25])
    displacement = cylinders * rng.normal(35, 5, n) + rng.normal(0, 10, n)
    horsepower = 0.35 * displacement + rng.normal(20, 10, n)
    weight = 8.5 * displacement + rng.normal(1300, 200, n)
    acceleration = 22 - 0.04 * horsepower + rng.normal(0, 1.5, n)
    year = rng.integers(70, 83, n)
    origin = rng.choice(3, size=n, p=[0.18, 0.2, 0.62])  # Europe, Japan, USA
    mpg = (95_000 / weight - 0.04 * horsepower + 0.75 * (year - 70) + 1.5 * (origin < 2) - 9
           + rng.normal(0, 1.8, n))  # fuel use grows with weight: MPG falls as 1 / weight
    features = np.stack([cylinders, displacement, horsepower, weight, acceleration, year,
                         origin == 0, origin == 1, origin == 2], axis=1).astype("float32")
    return features, np.clip(mpg, 8, 48).astype("float32")


def split(features, mpg, seed=0):
    """80% training, 20% test, as the tutorial's ``sample(frac=0.8, random_state=0)``."""
    order = np.random.default_rng(seed).permutation(len(mpg))
    cut = int(0.8 * len(mpg))
    return (features[order[:cut]], mpg[order[:cut]]), (features[order[cut:]], mpg[order[cut:]])


def linear_model(normalizer):
    model = mk.Sequential([normalizer, layers.Dense(units=1)])
    model.compile(optimizer=mk.optimizers.Adam(learning_rate=0.1), loss="mean_absolute_error")
    return model


def dnn_model(normalizer):
    model = mk.Sequential([normalizer, layers.Dense(64, activation="relu"), layers.Dense(64, activation="relu"),
                           layers.Dense(1)])
    model.compile(loss="mean_absolute_error", optimizer=mk.optimizers.Adam(0.001))
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args(argv)
    mk.utils.set_random_seed(0)
    (train_x, train_y), (test_x, test_y) = split(*make_table())
    horsepower = COLUMNS.index("Horsepower")
    print(f"{len(train_y)} training cars, {len(test_y)} test cars; MPG {train_y.mean():.1f} ± {train_y.std():.1f}")

    normalizer = layers.Normalization(axis=-1)
    normalizer.adapt(train_x)
    print("feature means:", np.round(normalizer.weights[0].numpy(), 1))
    first = train_x[:1]
    print("first example normalized:", np.round(normalizer(first).numpy(), 2))

    horsepower_normalizer = layers.Normalization(input_shape=[1], axis=None)
    horsepower_normalizer.adapt(train_x[:, [horsepower]])

    results = {}
    histories = {}
    runs = {
        "horsepower_model": (linear_model(horsepower_normalizer), train_x[:, [horsepower]], test_x[:, [horsepower]]),
        "linear_model": (linear_model(normalizer), train_x, test_x),
        "dnn_horsepower_model": (dnn_model(horsepower_normalizer), train_x[:, [horsepower]], test_x[:, [horsepower]]),
        "dnn_model": (dnn_model(normalizer), train_x, test_x),
    }
    for name, (model, x_train, x_test) in runs.items():
        history = model.fit(x_train, train_y, epochs=args.epochs, validation_split=0.2, verbose=0)
        histories[name] = history.history
        results[name] = model.evaluate(x_test, test_y, verbose=0)
        print(f"{name:22s} test MAE {results[name]:.3f} MPG (val MAE at the end {history.history['val_loss'][-1]:.3f})")
    predictions = runs["dnn_model"][0].predict(test_x, verbose=0).flatten()
    print("DNN predictions for the first test cars:", np.round(predictions[:5], 1), "true:", np.round(test_y[:5], 1))
    return results, histories


if __name__ == "__main__":
    main()
