"""Seeded weights for an application, written in the layout Keras publishes its ImageNet files in.

Both the fixture script (tests/fixtures/keras_applications/make_fixtures.py, run with Keras 3)
and tests/test_applications_keras_outputs.py use these two functions, so the same file is made
on both sides from a small JSON record of its structure instead of being committed.

The structure is a list of ``[layer_name, [[weight_name, shape], ...]]`` in the file's
``layer_names`` order (the model's layers, layers without weights included with no weights);
weight names are the published files' ``'<layer>/<weight>:0'``.

The arrays are drawn from ``numpy.random.default_rng(seed)`` in that order, layer after layer,
weight after weight, one draw per weight, by the weight's last name part:

    kernel, pointwise_kernel   normal * sqrt(1 / fan_in), fan_in = product of all but the last axis
    depthwise_kernel           normal * sqrt(1 / (kh * kw))
    gamma                      uniform(0.2, 0.8)
    moving_variance, variance  uniform(0.5, 1.5)
    count                      an int64 in [1, 1000)  (Normalization's sample count)
    anything else              normal * 0.1  (bias, beta, moving_mean, mean, ...)

so that activations keep a scale near one through the deep stacks and the comparison of
outputs means something (no saturated softmax, no vanishing features).
"""
import h5py
import numpy as np


def _draw(rng, weight_name, shape):
    short = weight_name.split("/")[-1].split(":")[0]
    shape = tuple(shape)
    if short in ("kernel", "pointwise_kernel"):
        fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        return (rng.standard_normal(shape) * np.sqrt(1.0 / fan_in)).astype("float32")
    if short == "depthwise_kernel":
        return (rng.standard_normal(shape) * np.sqrt(1.0 / (shape[0] * shape[1]))).astype("float32")
    if short == "gamma":
        return rng.uniform(0.2, 0.8, shape).astype("float32")
    if short == "count":
        return rng.integers(1, 1000, shape).astype("int64")
    if short in ("moving_variance", "variance"):
        return rng.uniform(0.5, 1.5, shape).astype("float32")
    return (rng.standard_normal(shape) * 0.1).astype("float32")


def seeded_arrays(structure, seed):
    """The weight arrays for ``structure``, as ``{layer_name: [array, ...]}`` (see the module)."""
    rng = np.random.default_rng(seed)
    return {layer: [_draw(rng, name, shape) for name, shape in weights] for layer, weights in structure}


def write_published_layout(path, structure, arrays):
    """Writes ``arrays`` to ``path`` as Keras's published ImageNet ``.h5`` files are laid out:
    the root's ``layer_names``, ``backend`` and ``keras_version`` attributes; one group per
    layer with its ``weight_names`` attribute; each array at ``<layer>/<weight_name>`` (so
    ``conv1_conv/conv1_conv/kernel:0``)."""
    with h5py.File(path, "w") as f:
        f.attrs["layer_names"] = [layer.encode("utf8") for layer, _ in structure]
        f.attrs["backend"] = b"tensorflow"
        f.attrs["keras_version"] = b"2.2.4"
        for layer, weights in structure:
            group = f.create_group(layer)
            group.attrs["weight_names"] = [name.encode("utf8") for name, _ in weights]
            for (name, _), value in zip(weights, arrays[layer]):
                group.create_dataset(name, data=value)


def case_inputs(seed, input_shape, batch):
    """The images a case is predicted on: ``batch`` images of ``input_shape`` uniform in [-1, 1]
    from ``numpy.random.default_rng(1000 + seed)``."""
    return np.random.default_rng(1000 + seed).uniform(-1, 1, (batch,) + tuple(input_shape)).astype("float32")
