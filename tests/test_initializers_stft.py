"""``mk.initializers.STFT`` (Keras 3's STFTInitializer) against the kernels and configs Keras 3.15
made (``tests/fixtures/keras_stft_initializer/stft.npz``, by ``make_fixtures.py`` there), its
errors against Keras's messages, and the STFTSpectrogram layer's kernels as its values."""
import json
import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import initializers, keras

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "keras_stft_initializer", "stft.npz"))
CASES = sorted(k for k in FIXTURE.files if "/" not in k)


@pytest.mark.parametrize("case", CASES)
def test_values_and_config_match_keras(case):
    recorded = json.loads(str(FIXTURE[f"{case}/config"]))
    init = keras.initializers.STFT(**recorded["config"])
    values = init(tuple(recorded["shape"]))
    assert values.dtype == mk.float32 and tuple(values.shape) == tuple(recorded["shape"])
    np.testing.assert_allclose(values.numpy(), FIXTURE[case], rtol=1e-5, atol=1e-6)
    assert init.get_config() == recorded["config"]
    clone = initializers.deserialize(initializers.serialize(init))
    np.testing.assert_array_equal(clone(tuple(recorded["shape"])).numpy(), values.numpy())


def test_names_and_lookup_as_keras():
    assert keras.initializers.STFTInitializer is keras.initializers.STFT is keras.initializers.stft
    for name in ("stft", "STFT", "STFTInitializer"):
        assert type(keras.initializers.get(name)) is keras.initializers.STFT
    assert initializers.serialize(keras.initializers.STFT())["config"] == {
        "side": "real", "window": "hann", "periodic": False, "scaling": "density"}
    window = np.array([1.0, 2.0, 3.0])
    assert keras.initializers.STFT("imag", window, None, True).get_config() == {
        "side": "imag", "window": [1.0, 2.0, 3.0], "periodic": True, "scaling": None}


def test_errors_as_keras():
    with pytest.raises(ValueError, match=r"side should be 'real' or 'imag', not x"):
        keras.initializers.STFT(side="x")
    with pytest.raises(ValueError, match=r"Scaling is invalid, it must be `None`, 'density' or 'spectrum'\. "
                                         r"Received scaling=l2"):
        keras.initializers.STFT(scaling="l2")
    with pytest.raises(ValueError, match=r"Invalid window name 'nope'"):  # scipy's message, as in Keras
        keras.initializers.STFT(window="nope")
    with pytest.raises(ValueError, match=r"the shape of `window` must be equal to \[3\]\. Received: window "
                                         r"shape=\(2,\)"):
        keras.initializers.STFT(window=[1.0, 2.0])((3, 1, 4))


@pytest.mark.parametrize("shape", [(4, 3), (4, 2, 3), (4, 1, 1)])
def test_shapes_keras_does_not_check_are_refused(shape):
    # Keras fails to unpack a 2-D shape, returns (4, 1, 3) for (4, 2, 3) and NaNs for one bin
    with pytest.raises(ValueError, match=r"STFT initializer: the shape must be \(frame_length, 1, bins\)"):
        keras.initializers.STFT()(shape)


def test_integer_dtype_is_refused():
    with pytest.raises(ValueError, match="STFT initializer .* needs a floating dtype, received dtype=int32"):
        keras.initializers.STFT()((4, 1, 3), dtype="int32")


def test_stft_spectrogram_kernels_are_the_initializers_values():
    layer = mk.layers.STFTSpectrogram(mode="stft", frame_length=12, fft_length=16, window="hamming",
                                      scaling="spectrum", periodic=True)
    layer.build((None, 40, 1))
    for side in ("real", "imag"):
        expected = keras.initializers.STFT(side, "hamming", "spectrum", True)((12, 1, 9))
        np.testing.assert_array_equal(getattr(layer, f"{side}_kernel").numpy(), expected.numpy())
