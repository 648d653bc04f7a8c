"""mk.callbacks.TensorBoard and mk.summary: event files read back with TensorBoard's own
EventAccumulator; the callback's runs, tags, plugins and steps as Keras 3's for the same fit
(tests/fixtures/tensorboard/, made by make_tensorboard_fixture.py)."""
import glob
import io
import json
import os
import sys

import numpy as np
import pytest

import minikeras as mk

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "tensorboard", "keras_tensorboard.json")


def read_run(directory):
    """{tag: [(step, value array)]} and {tag: plugin name} of the event files in ``directory``."""
    accumulator = EventAccumulator(directory, size_guidance={"tensors": 0})
    accumulator.Reload()
    values, plugins = {}, {}
    for tag in accumulator.Tags()["tensors"]:
        values[tag] = [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in accumulator.Tensors(tag)]
        plugins[tag] = accumulator.SummaryMetadata(tag).plugin_data.plugin_name
    return values, plugins


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    log_dir = tmp_path_factory.mktemp("tensorboard")
    rng = np.random.RandomState(0)
    x = rng.randn(40, 3).astype("float32")
    y = (x[:, :1] > 0).astype("float32")
    # named as Keras named its model in a fresh process (the histogram tags start with the model name)
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(4, activation="relu", name="hidden"),
                           mk.layers.Dense(1, activation="sigmoid", name="out")], name="sequential")
    model.compile("adam", "binary_crossentropy", metrics=["accuracy", mk.metrics.AUC(name="auc")])
    callback = mk.callbacks.TensorBoard(str(log_dir), histogram_freq=1, write_images=True, update_freq=2)
    history = model.fit(x, y, batch_size=8, epochs=3, validation_split=0.25, callbacks=[callback], verbose=0)
    return log_dir, model, history.history


def test_callback_writes_keras_runs_tags_and_steps(fitted):
    log_dir, _, _ = fitted
    with open(FIXTURE) as f:
        expected = json.load(f)
    for run in ("train", "validation"):
        assert len(glob.glob(os.path.join(log_dir, run, "events.out.tfevents.*.v2"))) == 1
        values, plugins = read_run(os.path.join(log_dir, run))
        assert sorted(values) == sorted(expected[run]), run
        for tag, entry in expected[run].items():
            assert [step for step, _ in values[tag]] == entry["steps"], tag
            assert plugins[tag] == entry["plugin"], tag


def test_callback_values(fitted):
    log_dir, model, history = fitted
    train, _ = read_run(os.path.join(log_dir, "train"))
    validation, _ = read_run(os.path.join(log_dir, "validation"))
    for name in ("loss", "accuracy", "auc"):
        np.testing.assert_allclose([float(v) for _, v in train[f"epoch_{name}"]], history[name], rtol=1e-6)
        np.testing.assert_allclose([float(v) for _, v in validation[f"epoch_{name}"]], history[f"val_{name}"],
                                   rtol=1e-6)
        np.testing.assert_allclose([float(v) for _, v in validation[f"evaluation_{name}_vs_iterations"]],
                                   history[f"val_{name}"], rtol=1e-6)
    np.testing.assert_allclose([float(v) for _, v in train["epoch_learning_rate"]], [0.001] * 3, rtol=1e-6)
    # the last histogram is of the final weights: 30 buckets whose counts add up to the weight's size
    _, buckets = train["sequential/hidden/kernel/histogram"][-1]
    kernel = model.layers[0].kernel.numpy()
    assert buckets.shape == (30, 3) and buckets[:, 2].sum() == kernel.size
    np.testing.assert_allclose([buckets[0, 0], buckets[-1, 1]], [kernel.min(), kernel.max()], rtol=1e-6)
    config = json.loads(train["keras"][0][1].item())
    assert config["class_name"] == "Sequential"


def test_weight_images_are_pngs_of_the_kernel_shape(fitted):
    image_module = pytest.importorskip("PIL.Image")
    log_dir, _, _ = fitted
    train, _ = read_run(os.path.join(log_dir, "train"))
    _, content = train["sequential/hidden/kernel/image"][-1]
    width, height, png = int(content[0]), int(content[1]), content[2]
    assert (width, height) == (4, 3)  # the (3, 4) kernel, wider than tall as Keras draws it
    decoded = image_module.open(io.BytesIO(png))
    assert decoded.size == (4, 3) and decoded.mode == "L"


def test_summary_api_in_a_custom_loop(tmp_path):
    writer = mk.summary.create_file_writer(str(tmp_path / "custom"))
    values = np.linspace(0.0, 1.0, 7).astype(np.float32)
    images = np.random.RandomState(1).rand(2, 5, 6, 3).astype(np.float32)
    with writer.as_default():
        for step in range(3):
            assert mk.summary.scalar("loss", mk.constant(1.0 / (step + 1)), step=step)
        assert mk.summary.histogram("weights", mk.constant(values), step=0, buckets=4)
        assert mk.summary.image("pictures", images, step=1, max_outputs=1)
        assert mk.summary.text("notes", "**bold** text", step=2)
    with writer.as_default(step=7):
        assert mk.summary.scalar("at_default_step", 2.5)
        mk.summary.experimental.set_step(8)
    writer.close()
    run, plugins = read_run(str(tmp_path / "custom"))
    assert [(s, float(v)) for s, v in run["loss"]] == [(0, 1.0), (1, 0.5), (2, pytest.approx(1 / 3))]
    assert plugins == {"loss": "scalars", "weights": "histograms", "pictures": "images", "notes": "text",
                       "at_default_step": "scalars"}
    assert run["at_default_step"][0][0] == 7
    counts = run["weights"][0][1]
    np.testing.assert_array_equal(counts[:, 2], np.histogram(values, bins=4)[0])
    content = run["pictures"][0][1]
    assert content.shape == (3,) and (int(content[0]), int(content[1])) == (6, 5)
    image_module = pytest.importorskip("PIL.Image")
    decoded = np.asarray(image_module.open(io.BytesIO(content[2])))
    np.testing.assert_array_equal(decoded, np.floor(images[0] * 255.5).astype(np.uint8))
    assert run["notes"][0][1].item() == b"**bold** text"


def test_no_writer_no_step_and_record_if(tmp_path):
    assert mk.summary.scalar("loss", 1.0, step=0) is False  # no default writer, as TF
    writer = mk.summary.create_file_writer(str(tmp_path))
    mk.summary.experimental.set_step(None)
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            mk.summary.scalar("loss", 1.0)
        with mk.summary.record_if(lambda: False):
            assert mk.summary.scalar("skipped", 1.0, step=0) is False
        with pytest.raises(ValueError, match="expects a scalar"):
            mk.summary.scalar("vector", [1.0, 2.0], step=0)
    with mk.summary.create_noop_writer().as_default():
        assert mk.summary.scalar("dropped", 1.0, step=0) is True
    writer.close()
    run, _ = read_run(str(tmp_path))
    assert run == {}


def test_summary_inside_mk_function_is_refused_clearly(tmp_path):
    writer = mk.summary.create_file_writer(str(tmp_path))

    @mk.function
    def step(x):
        mk.summary.scalar("inside", mk.reduce_sum(x), step=0)
        return x

    with writer.as_default(), pytest.raises(TypeError, match="traced value"):
        step(mk.constant([1.0, 2.0]))
    writer.close()


def test_missing_tensorboard_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tensorboard.summary.writer.event_file_writer", None)
    with pytest.raises(ImportError, match=r"pip install 'minikeras\[tensorboard\]'"):
        mk.summary.create_file_writer(str(tmp_path))
    with pytest.raises(ImportError, match=r"minikeras\[tensorboard\]"):
        mk.callbacks.TensorBoard(str(tmp_path))


def test_bad_arguments():
    with pytest.raises(ValueError, match="update_freq"):
        mk.callbacks.TensorBoard("logs", update_freq="sometimes")
    with pytest.raises(ValueError, match="profile_batch must be"):
        mk.callbacks.TensorBoard("logs", profile_batch=(5, 2))
    with pytest.raises(NotImplementedError, match="embeddings_freq"):
        mk.callbacks.TensorBoard("logs", embeddings_freq=1)


def test_profile_batch_writes_a_jax_profiler_trace(tmp_path):
    x = np.random.RandomState(0).randn(32, 3).astype("float32")
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile("sgd", "mse")
    callback = mk.callbacks.TensorBoard(str(tmp_path), profile_batch=(2, 3), write_graph=False)
    model.fit(x, x[:, :1], batch_size=8, epochs=1, callbacks=[callback], verbose=0)
    assert glob.glob(os.path.join(tmp_path, "train", "plugins", "profile", "*", "*.xplane.pb"))
