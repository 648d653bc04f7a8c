"""Time-series forecasting with an LSTM, after the TensorFlow tutorial "Time series forecasting".

The tutorial's weather data cannot be downloaded here, so the series is synthetic: an hourly
"temperature" with a daily and a yearly period plus noise that persists for hours (an AR(1)
process), and a "pressure" that drifts slowly and lowers the temperature a little. As in the
tutorial the inputs also carry the time of day and of year as sin/cos signals, the data are
split 70/20/10 in time order and normalized with the training mean and deviation, and
windows of 24 hours are fed to the models:

- single step: predict the temperature of the next hour; baseline: the last hour's value;
- multi step: predict the 24 hours that follow; baseline: repeat the last hour's value.

The models are the tutorial's: ``LSTM(32) -> Dense(1)`` and ``LSTM(32) -> Dense(24)``. The MAE
(of the normalized temperature) on the test windows is printed for the baselines and the LSTMs.

    python examples/time_series.py
    python examples/time_series.py --hours 17532 --epochs 2 --stride 4     # a quick run
"""
import argparse

import numpy as np

import minikeras as mk
from minikeras import layers

INPUT_HOURS = 24
OUT_HOURS = 24
DAY, YEAR = 24, 24 * 365.2425


def make_series(hours, seed=0):
    """``(features, names)``: (hours, 6) float32 columns temperature, pressure, day sin/cos,
    year sin/cos (the tutorial's time signals)."""
    rng = np.random.default_rng(seed)
    t = np.arange(hours, dtype="float64")
    noise = np.zeros(hours)
    shocks = rng.normal(0, 1.0, hours)
    for i in range(1, hours):  # weather persists: AR(1) noise
        noise[i] = 0.95 * noise[i - 1] + shocks[i]
    pressure = 1000 + np.cumsum(rng.normal(0, 0.3, hours))
    pressure -= np.convolve(pressure, np.ones(DAY * 30) / (DAY * 30), mode="same") - 1000  # drift around 1000
    temperature = (10 - 8 * np.cos(2 * np.pi * t / YEAR) - 4 * np.cos(2 * np.pi * t / DAY)
                   + 0.8 * noise - 0.1 * (pressure - 1000))
    columns = [temperature, pressure, np.sin(2 * np.pi * t / DAY), np.cos(2 * np.pi * t / DAY),
               np.sin(2 * np.pi * t / YEAR), np.cos(2 * np.pi * t / YEAR)]
    names = ["T", "p", "day sin", "day cos", "year sin", "year cos"]
    return np.stack(columns, axis=1).astype("float32"), names


def split_and_normalize(data):
    """70/20/10 split in time order, each normalized with the training mean and deviation."""
    n = len(data)
    train, val, test = data[:int(n * 0.7)], data[int(n * 0.7):int(n * 0.9)], data[int(n * 0.9):]
    mean, std = train.mean(axis=0), train.std(axis=0)
    return [(part - mean) / std for part in (train, val, test)]


def windows(data, out_hours, stride=1):
    """``(inputs, labels)``: (n, INPUT_HOURS, features) windows and the temperature of the next
    ``out_hours`` hours, (n, out_hours)."""
    starts = np.arange(0, len(data) - INPUT_HOURS - out_hours + 1, stride)
    inputs = np.stack([data[s:s + INPUT_HOURS] for s in starts])
    labels = np.stack([data[s + INPUT_HOURS:s + INPUT_HOURS + out_hours, 0] for s in starts])
    return inputs, labels


def lstm_model(out_hours, units=32):
    return mk.Sequential([mk.Input((INPUT_HOURS, 6)), layers.LSTM(units), layers.Dense(out_hours)])


def fit(model, train, val, epochs, patience=2):
    model.compile(loss="mse", optimizer=mk.optimizers.Adam(1e-3), metrics=["mae"])
    stop = mk.callbacks.EarlyStopping(monitor="val_loss", patience=patience, restore_best_weights=True)
    return model.fit(*train, validation_data=val, epochs=epochs, batch_size=32, callbacks=[stop], verbose=2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hours", type=int, default=3 * 8766, help="length of the series (default: 3 years)")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--stride", type=int, default=1, help="hours between the starts of two windows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    mk.random.set_seed(args.seed)
    series, _ = make_series(args.hours, args.seed)
    train, val, test = split_and_normalize(series)
    results = {}
    for name, out_hours in (("single step", 1), ("multi step", OUT_HOURS)):
        data = [windows(part, out_hours, args.stride) for part in (train, val, test)]
        x_test, y_test = data[2]
        baseline = float(np.mean(np.abs(y_test - x_test[:, -1:, 0])))  # the last hour, repeated
        model = lstm_model(out_hours)
        fit(model, data[0], data[1], args.epochs)
        lstm = float(np.mean(np.abs(model.predict(x_test, verbose=0) - y_test)))
        results[name] = {"baseline": baseline, "lstm": lstm}
        print(f"{name}: test MAE (normalized temperature) baseline {baseline:.4f}, LSTM {lstm:.4f}")
    return results


if __name__ == "__main__":
    main()
