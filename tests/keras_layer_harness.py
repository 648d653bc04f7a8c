"""Keras 3's ``run_layer_test`` (``keras/src/testing/test_case.py``) rewritten on minikeras's public API.

Keras's own layer tests (``keras/src/layers/**/*_test.py``) call ``run_layer_test`` with a layer
class, its constructor arguments, an input shape or data and what to expect; the test cases
ported from them into ``tests/test_keras_layer_cases_*.py`` call this function with the same
arguments. It checks, as Keras's does:

- serialization: ``get_config``/``from_config`` and ``serialize_keras_object``/
  ``deserialize_keras_object`` give the same config (as JSON, tuples as lists);
- ``supports_masking``;
- build: ``layer.build(input_shape)`` builds it with the expected numbers of weights;
- a symbolic call on ``mk.Input(batch_shape=...)``: built, output shapes and dtypes;
- an eager call: output shapes, dtypes and values, the number of losses, the mask's shape;
- a one-step ``fit`` of a Model wrapping the layer, with the loss ``sum(y_pred)``, fed by a
  Python generator that repeats the batch, with ``steps_per_epoch=1``;
- mixed precision: under ``dtype="mixed_float16"`` the eager outputs have the dtypes of the
  symbolic call's outputs and floating weights are float32. The dtypes depend on the layer's
  class, config, call arguments and input dtypes, not on the input shapes, so a case repeating
  those of one already checked in this process skips it (every float16 call compiles each op
  again).

Differences from Keras's: no sparse or ragged inputs, no seed-generator count (minikeras's random
layers draw from the global generator; only the recurrent cells hold a SeedGenerator, as
Keras's, whose state ``expected_num_non_trainable_variables`` counts), no torch/TPU branches;
``expected_num_seed_generators`` is accepted and ignored.
"""
import json
import warnings

import numpy as np

import minikeras as mk


def _json(config):
    return json.dumps(config, sort_keys=True, default=lambda v: list(v) if isinstance(v, tuple) else repr(v))


def _is_shape(value):
    return isinstance(value, tuple) and all(v is None or isinstance(v, int) for v in value)


def _map_shapes(fn, shapes, dtypes):
    if _is_shape(shapes):
        return fn(shapes, dtypes)
    if isinstance(shapes, dict):
        return {k: _map_shapes(fn, v, dtypes[k]) for k, v in shapes.items()}
    return type(shapes)(_map_shapes(fn, s, d) for s, d in zip(shapes, dtypes))


def _flatten(value):
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in _flatten(value[k])]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _eager(shape, dtype):
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(0, 2, shape).astype(dtype)


def _check_serialization(layer, custom_objects):
    config = layer.get_config()
    with mk.saving.custom_object_scope(custom_objects or {}):
        revived = type(layer).from_config(config)
    assert _json(revived.get_config()) == _json(config), "get_config/from_config round trip changed the config"
    serialized = json.loads(_json(mk.saving.serialize_keras_object(layer)))
    with mk.saving.custom_object_scope(custom_objects or {}):
        revived = mk.saving.deserialize_keras_object(serialized)
    assert type(revived) is type(layer), f"deserialized a {type(revived).__name__}, not a {type(layer).__name__}"
    assert _json(revived.get_config()) == _json(config), "serialize/deserialize round trip changed the config"


def _call(layer, data, call_kwargs):
    return layer(**data, **call_kwargs) if isinstance(data, dict) else layer(data, **call_kwargs)


def run_layer_test(layer_cls, init_kwargs, input_shape=None, input_dtype=None, input_data=None, call_kwargs=None,
                   expected_output_shape=None, expected_output_dtype=None, expected_output=None,
                   expected_num_trainable_weights=None, expected_num_non_trainable_weights=None,
                   expected_num_non_trainable_variables=None, expected_num_seed_generators=None,
                   expected_num_losses=None, supports_masking=None, expected_mask_shape=None, custom_objects=None,
                   run_training_check=True, run_mixed_precision_check=True, assert_built_after_instantiation=False,
                   rtol=1e-6, atol=1e-6):
    """Keras 3's ``run_layer_test`` checks (see the module docstring); raises AssertionError."""
    if input_shape is not None and input_data is not None:
        raise ValueError("input_shape and input_data cannot be passed at the same time.")
    if expected_output is not None and input_data is None:
        raise ValueError("In order to use expected_output, input_data must be provided.")
    init_kwargs, call_kwargs = init_kwargs or {}, call_kwargs or {}
    if input_shape is not None and input_dtype is None:
        input_dtype = _map_shapes(lambda s, d: "float32", input_shape, _blank(input_shape))
    if input_data is None and input_shape is not None:
        input_data = _map_shapes(_eager, input_shape, input_dtype)
        if isinstance(input_data, dict):  # Keras's {"query_shape": ...} becomes the call's query=...
            input_data = {k.removesuffix("_shape"): v for k, v in input_data.items()}

    counts_given = expected_num_trainable_weights is not None and expected_num_non_trainable_weights is not None
    if input_data is not None and not counts_given:  # the counts from a probe layer's call, as Keras's
        probe = layer_cls(**init_kwargs)
        _call(probe, input_data, call_kwargs)
        if expected_num_trainable_weights is None:
            expected_num_trainable_weights = len(probe.trainable_weights)
        if expected_num_non_trainable_weights is None:
            expected_num_non_trainable_weights = len(probe.non_trainable_weights)

    layer = layer_cls(**init_kwargs)
    _check_serialization(layer, custom_objects)
    if supports_masking is not None:
        assert layer.supports_masking == supports_masking, (
            f"Unexpected supports_masking value: {layer.supports_masking}, expected {supports_masking}")

    def build_asserts(layer):
        assert layer.built, "the layer is not built"
        if expected_num_trainable_weights is not None:
            assert len(layer.trainable_weights) == expected_num_trainable_weights, (
                f"Unexpected number of trainable_weights: {len(layer.trainable_weights)}, expected "
                f"{expected_num_trainable_weights}")
        if expected_num_non_trainable_weights is not None:
            assert len(layer.non_trainable_weights) == expected_num_non_trainable_weights, (
                f"Unexpected number of non_trainable_weights: {len(layer.non_trainable_weights)}, expected "
                f"{expected_num_non_trainable_weights}")
        if expected_num_non_trainable_variables is not None:
            assert len(layer.non_trainable_variables) == expected_num_non_trainable_variables, (
                "Unexpected number of non_trainable_variables")

    def output_asserts(layer, output, eager):
        outputs = _flatten(output)
        if expected_output_shape is not None:
            expected = [expected_output_shape] if _is_shape(expected_output_shape) else _flatten_shapes(
                expected_output_shape)
            for shape, x in zip(expected, outputs, strict=True):
                assert len(shape) == len(x.shape) and all(e is None or e == n for e, n in zip(shape, x.shape)), (
                    f"Expected output shape {shape} but received {tuple(x.shape)}")
        if expected_output_dtype is not None:
            expected = _flatten(expected_output_dtype)
            if len(expected) == 1:
                expected = expected * len(outputs)
            for dtype, x in zip(expected, outputs):
                assert np.dtype(x.dtype).name == np.dtype(dtype).name, (
                    f"Expected output dtype {dtype} but received {x.dtype}")
        if eager:
            if expected_output is not None:
                for ref, x in zip(_flatten(expected_output), outputs, strict=True):
                    np.testing.assert_allclose(np.asarray(x), np.asarray(ref), rtol=rtol, atol=atol,
                                               err_msg="Unexpected output value")
            if expected_num_losses is not None:
                assert len(layer.losses) == expected_num_losses, (
                    f"Unexpected number of losses: {len(layer.losses)}, expected {expected_num_losses}")

    if input_data is not None:
        shapes = _map_like(lambda x: tuple(np.shape(x)), input_data)
        build_shape = input_shape if input_shape is not None else shapes
        layer = layer_cls(**init_kwargs)
        if isinstance(build_shape, dict):
            layer.build(**build_shape)
        else:
            layer.build(build_shape)
        build_asserts(layer)

        symbolic = _map_like(lambda x: mk.Input(batch_shape=tuple(np.shape(x)), dtype=np.asarray(x).dtype.name),
                             input_data)
        layer = layer_cls(**init_kwargs)
        output = _call(layer, symbolic, call_kwargs)
        build_asserts(layer)
        output_asserts(layer, output, eager=False)
        if expected_mask_shape is not None:
            mask = layer.compute_mask(symbolic)
            assert tuple(mask.shape) == tuple(expected_mask_shape), f"Unexpected mask shape {mask.shape}"
        if assert_built_after_instantiation:
            assert layer_cls(**init_kwargs).built, f"{layer_cls.__name__} is stateless, so it should be built " \
                                                    "after instantiation."

            class ModifiedBuildLayer(layer_cls):
                def build(self, *args, **kwargs):
                    pass

            assert not ModifiedBuildLayer(**init_kwargs).built, (
                f"the build of a {layer_cls.__name__} subclass is overridden, so it should not be built after "
                "instantiation")

        layer = layer_cls(**init_kwargs)
        output = _call(layer, input_data, call_kwargs)
        output_asserts(layer, output, eager=True)
        if run_training_check:
            _training_step(layer, input_data, output)
        if run_mixed_precision_check:
            _mixed_precision_check(layer_cls, init_kwargs, input_data, symbolic, call_kwargs)


def _blank(structure):
    if _is_shape(structure):
        return None
    if isinstance(structure, dict):
        return {k: _blank(v) for k, v in structure.items()}
    return type(structure)(_blank(v) for v in structure)


def _flatten_shapes(shapes):
    if _is_shape(shapes):
        return [shapes]
    if isinstance(shapes, dict):
        return [s for k in sorted(shapes) for s in _flatten_shapes(shapes[k])]
    return [s for v in shapes for s in _flatten_shapes(v)]


def _map_like(fn, data):
    if isinstance(data, dict):
        return {k: _map_like(fn, v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(_map_like(fn, v) for v in data)
    return fn(data)


class _SumLoss(mk.losses.Loss):
    def __call__(self, y_true, y_pred, sample_weight=None):
        return mk.reduce_sum(sum(mk.reduce_sum(mk.cast(p, "float32")) for p in _flatten(y_pred)))


class _LayerModel(mk.Model):
    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def call(self, x, training=False):
        return self.layer(x, training=training)


def _training_step(layer, input_data, output_data):
    model = _LayerModel(layer)
    model.compile(optimizer="sgd", loss=_SumLoss())
    data = (input_data, output_data)

    def data_generator():
        while True:
            yield data

    model.fit(data_generator(), steps_per_epoch=1, verbose=0)


_MIXED_PRECISION_CHECKED = set()


def _mixed_precision_key(layer_cls, init_kwargs, input_data, call_kwargs):
    dtypes = _map_like(lambda x: np.asarray(x).dtype.name, input_data)
    try:
        return json.dumps([layer_cls.__module__, layer_cls.__qualname__, init_kwargs, call_kwargs, dtypes],
                          sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return None  # arguments JSON cannot describe: always checked


def _mixed_precision_check(layer_cls, init_kwargs, input_data, symbolic, call_kwargs):
    """As Keras's: under ``mixed_float16`` the eager outputs have the dtypes of the symbolic call's
    outputs (the layer's own output spec) and the floating weights stay float32."""
    key = _mixed_precision_key(layer_cls, init_kwargs, input_data, call_kwargs)
    if key is not None:
        if key in _MIXED_PRECISION_CHECKED:
            return
        _MIXED_PRECISION_CHECKED.add(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 on a CPU: minikeras warns that it is slow
        layer = layer_cls(**{**init_kwargs, "dtype": "mixed_float16"})
        output = _call(layer, input_data, call_kwargs)
        spec = _call(layer, symbolic, call_kwargs)
    for x, expected in zip(_flatten(output), _flatten(spec), strict=True):
        assert np.dtype(x.dtype).name == np.dtype(expected.dtype).name, (
            f"mixed_float16: expected output dtype {expected.dtype} (the symbolic call's), got {x.dtype}")
    for weight in layer.weights:
        if np.dtype(weight.dtype).kind == "f":
            assert np.dtype(weight.dtype).name == "float32", f"mixed_float16: weight {weight.path} is {weight.dtype}"
