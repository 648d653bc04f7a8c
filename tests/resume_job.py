"""A small training job run as a separate process by tests/test_saving_resume.py and
tests/test_callbacks_backup.py:

    python tests/resume_job.py MODE FOLDER [KILL_AT]

MODE: full (fit 4 epochs), first (fit 2 epochs, save weights and .keras), second (load the
weights, fit epochs 2..4, seeded differently, so the random state must come from the file),
second_keras (the same from the .keras file), backup (fit 4 epochs with
BackupAndRestore(save_freq=SAVE_FREQ); KILL_AT="step:N" kills the process with SIGKILL after
global step N, "write:N" while writing the N-th backup's weights). The final weights go to
FOLDER/MODE.npz.
"""
import os
import signal
import sys

import numpy as np

import minikeras as mk
from minikeras.saving import _files

SAVE_FREQ = 5  # steps; an epoch has 6


def build(seed):
    mk.random.set_seed(seed)
    model = mk.Sequential([mk.layers.Dense(16, activation="relu", input_shape=(8,)), mk.layers.Dropout(0.5),
                           mk.layers.Dense(3)])
    model.compile(optimizer=mk.optimizers.Adam(0.01),
                  loss=mk.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(96, 8)).astype("float32"), rng.integers(0, 3, 96).astype("int32")


class KillAtStep(mk.callbacks.Callback):
    def __init__(self, step):
        super().__init__()
        self.step, self.seen = step, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.step:
            os.kill(os.getpid(), signal.SIGKILL)


def kill_during_write(n):
    write_all, calls = _files._write_all, [0]

    def dying_write(temp_path, data, mode):
        calls[0] += ".weights.h5." in os.path.basename(temp_path)
        if calls[0] == n:
            with open(temp_path, "wb") as f:
                f.write(data[:len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        write_all(temp_path, data, mode)

    _files._write_all = dying_write


def main(mode, folder, kill_at=None):
    x, y = data()
    model = build(7)
    fit = {"batch_size": 16, "shuffle": True, "verbose": 0}
    if mode == "full":
        model.fit(x, y, epochs=4, **fit)
    elif mode == "first":
        model.fit(x, y, epochs=2, **fit)
        model.save_weights(os.path.join(folder, "ckpt.weights.h5"))
        model.save(os.path.join(folder, "ckpt.keras"))
    elif mode == "second":
        model = build(12345)
        model.load_weights(os.path.join(folder, "ckpt.weights.h5"))
        model.fit(x, y, epochs=4, initial_epoch=2, **fit)
    elif mode == "second_keras":
        mk.random.set_seed(12345)
        model = mk.saving.load_model(os.path.join(folder, "ckpt.keras"))
        model.fit(x, y, epochs=4, initial_epoch=2, **fit)
    elif mode == "backup":
        callbacks = [mk.callbacks.BackupAndRestore(os.path.join(folder, "backup"), save_freq=SAVE_FREQ)]
        if kill_at and kill_at.startswith("step:"):
            callbacks.append(KillAtStep(int(kill_at[5:])))
        elif kill_at and kill_at.startswith("write:"):
            kill_during_write(int(kill_at[6:]))
        model.fit(x, y, epochs=4, callbacks=callbacks, **fit)
    np.savez(os.path.join(folder, f"{mode}.npz"), *[w.numpy() for w in model.weights])


if __name__ == "__main__":
    main(*sys.argv[1:])
