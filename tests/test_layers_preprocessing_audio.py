"""STFTSpectrogram and MelSpectrogram against Keras 3 on JAX.

``tests/fixtures/keras_audio/audio.npz`` (made by ``make_fixtures.py`` there) holds Keras's
outputs for the configurations below and the kernels its STFT initializer made;
``stft_model.keras`` is a functional model Keras saved with changed kernels.
"""
import json
import os
import zipfile

import numpy as np
import pytest
from conftest import assert_close

import minikeras as mk
from minikeras import keras

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_audio")
DATA = np.load(os.path.join(HERE, "audio.npz"))

STFT_CASES = {  # as make_fixtures.py
    "stft_log_valid": dict(mode="log", frame_length=32, frame_step=16, fft_length=64),
    "stft_magnitude_same_hamming": dict(mode="magnitude", frame_length=30, frame_step=7, fft_length=32,
                                        window="hamming", padding="same"),
    "stft_psd_periodic_spectrum": dict(mode="psd", frame_length=16, frame_step=8, periodic=True,
                                       scaling="spectrum"),
    "stft_real_first": dict(mode="real", frame_length=16, frame_step=5, data_format="channels_first"),
    "stft_imag_expand": dict(mode="imag", frame_length=16, fft_length=32, expand_dims=True),
    "stft_angle_nowindow": dict(mode="angle", frame_length=16, window=None, scaling=None),
    "stft_stft_first_expand": dict(mode="stft", frame_length=20, frame_step=10, fft_length=32,
                                   data_format="channels_first", expand_dims=True, padding="same"),
}
MEL_CASES = {
    "mel_default_db": dict(fft_length=64, sequence_stride=16, num_mel_bins=12, sampling_rate=8000),
    "mel_power_hamming": dict(fft_length=64, sequence_stride=20, sequence_length=48, window="hamming",
                              num_mel_bins=10, sampling_rate=16000, min_freq=100.0, max_freq=6000.0,
                              power_to_db=False, mag_exp=1.0),
    "mel_db_ref_top": dict(fft_length=32, sequence_stride=8, num_mel_bins=8, sampling_rate=4000, top_db=30.0,
                           ref_power=2.5, window=None),
}


def _stereo(kwargs):
    x = DATA["stereo"]
    return np.swapaxes(x, 1, 2) if kwargs.get("data_format") == "channels_first" else x


@pytest.mark.parametrize("case", sorted(STFT_CASES))
def test_stft_spectrogram_kernels_and_outputs_are_keras_s(case):
    kwargs = STFT_CASES[case]
    layer = keras.layers.STFTSpectrogram(**kwargs)
    x = _stereo(kwargs)
    layer.build(x.shape)
    for w in layer.weights:  # Keras's STFT initializer (its phases rounded to float32), same names and order
        assert_close(w.numpy(), DATA[f"{case}/{w.name}"], rtol=0, atol=5e-6, what=f"{case} {w.name}")
    assert [w.name for w in layer.weights] == [k.split("/")[1] for k in DATA.files if k.startswith(case + "/")]
    # Keras's own kernels: a bin whose imaginary part is a rounding error of theirs ('angle') comes out the same
    layer.set_weights([DATA[f"{case}/{w.name}"] for w in layer.weights])
    out = layer(x)
    expected = DATA[case]
    if kwargs["mode"] == "angle":  # a bin with no imaginary part sits on the branch cut: +-pi
        out = np.angle(np.exp(1j * (np.asarray(out) - expected))) + expected
    assert_close(out, expected, rtol=1e-5, atol=1e-5, what=f"{case} output")
    symbolic = layer(mk.Input(x.shape[1:]))
    assert symbolic.shape == (None,) + expected.shape[1:]
    assert tuple(layer.compute_output_shape((None,) + x.shape[1:])) == (None,) + expected.shape[1:]


@pytest.mark.parametrize("case", sorted(MEL_CASES))
def test_mel_spectrogram_outputs_are_keras_s(case):
    layer = keras.layers.MelSpectrogram(**MEL_CASES[case])
    out = layer(DATA["mono"])
    assert_close(out, DATA[case], rtol=1e-5, atol=1e-4, what=f"{case} output")
    one = layer(DATA["mono"][1])
    if MEL_CASES[case].get("power_to_db", True):  # top_db clips below the largest value of what is given
        assert one.shape == DATA[case].shape[1:]
    else:
        assert_close(one, DATA[case][1], rtol=1e-5, atol=1e-4, what=f"{case} unbatched")
    assert layer(mk.Input(DATA["mono"].shape[1:])).shape == (None,) + DATA[case].shape[1:]


def test_the_kernel_gradient_is_the_frames_times_the_output_cotangent():
    """'real' mode is a strided correlation: d sum(out * r) / d kernel[k, 0, f] is
    sum over batch, frames and channels of x[b, t * step + k, c] * r[b, t, c * bins + f]."""
    layer = keras.layers.STFTSpectrogram(mode="real", frame_length=8, frame_step=3, fft_length=8)
    x = DATA["stereo"][:, :40]
    layer.build(x.shape)
    r = np.random.default_rng(1).normal(size=layer.compute_output_shape(x.shape)).astype(np.float32)
    with mk.GradientTape() as tape:
        loss = mk.reduce_sum(layer(x) * r)
    grad = tape.gradient(loss, layer.real_kernel)
    frames = r.shape[1]
    windows = np.stack([x[:, t * 3:t * 3 + 8, :] for t in range(frames)], axis=1)  # (b, t, k, c)
    expected = np.einsum("btkc,btcf->kf", windows, r.reshape(1, frames, 2, 5))[:, None, :]
    assert_close(grad, expected, rtol=1e-5, atol=1e-5, what="kernel gradient")
    assert layer.real_kernel.trainable


def test_keras_model_file_loads_and_ours_has_keras_s_config(tmp_path):
    model = mk.saving.load_model(os.path.join(HERE, "stft_model.keras"))
    assert_close(model(DATA["stereo"]), DATA["stft_model_output"], rtol=1e-5, atol=1e-5, what="loaded output")
    assert [w.path for w in model.weights] == ["stft/real_kernel", "stft/imag_kernel"]
    path = str(tmp_path / "ours.keras")
    model.save(path)
    with zipfile.ZipFile(path) as ours, zipfile.ZipFile(os.path.join(HERE, "stft_model.keras")) as theirs:
        layer_ours = json.loads(ours.read("config.json"))["config"]["layers"][-1]
        layer_theirs = json.loads(theirs.read("config.json"))["config"]["layers"][-1]
    assert (layer_ours["module"], layer_ours["class_name"]) == ("keras.layers", "STFTSpectrogram")
    assert layer_ours["config"] == layer_theirs["config"]
    again = mk.saving.load_model(path)
    assert_close(again(DATA["stereo"]), DATA["stft_model_output"], rtol=1e-5, atol=1e-5, what="reloaded output")
    mel = keras.layers.MelSpectrogram(**MEL_CASES["mel_power_hamming"])
    clone = keras.layers.MelSpectrogram.from_config(mel.get_config())
    assert clone.get_config() == {**mel.get_config(), "name": clone.name}
    assert_close(clone(DATA["mono"]), DATA["mel_power_hamming"], rtol=1e-5, atol=1e-4, what="mel from config")


def test_bad_arguments_and_inputs_are_refused_as_keras_does():
    with pytest.raises(ValueError, match="`frame_step` should be a positive integer not greater than `frame_length`"):
        keras.layers.STFTSpectrogram(frame_length=8, frame_step=9)
    with pytest.raises(ValueError, match="`fft_length` should be not less than `frame_length`"):
        keras.layers.STFTSpectrogram(frame_length=16, fft_length=8)
    with pytest.raises(ValueError, match="Output mode is invalid, it must be one of log, magnitude"):
        keras.layers.STFTSpectrogram(mode="power")
    with pytest.raises(ValueError, match="Padding is invalid"):
        keras.layers.STFTSpectrogram(padding="causal")
    with pytest.warns(UserWarning, match="`fft_length` is recommended to be a power of two"):
        keras.layers.STFTSpectrogram(frame_length=16, fft_length=20)
    layer = keras.layers.STFTSpectrogram(frame_length=16, name="spec")
    with pytest.raises(ValueError, match=r"Input 0 with name 'None' of layer 'spec' is incompatible with the layer: "
                                         r"expected ndim=3, found ndim=2. Full shape received: \(2, 100\)"):
        layer(np.zeros((2, 100), np.float32))
    with pytest.raises(TypeError, match="'spec': invalid input type. Expected `float16`, `float32` or `float64`. "
                                        "Received: input type=int32"):
        layer(np.zeros((1, 100, 1), np.int32))
    with pytest.raises(ValueError, match="`fft_length` must be greater than or equal to  `sequence_length`"):
        keras.layers.MelSpectrogram(fft_length=32, sequence_length=64)
    with pytest.raises(ValueError, match='must be one of `"hann"`, `"hamming"`. Received: window=blackman'):
        keras.layers.MelSpectrogram(window="blackman")
    mel = keras.layers.MelSpectrogram(fft_length=32, sequence_stride=8, num_mel_bins=4, name="mel")
    with pytest.raises(ValueError, match=r"'mel' expects audio of shape \(time,\) or \(batch, time\); received shape "
                                         r"\(1, 2, 100\)"):
        mel(np.zeros((1, 2, 100), np.float32))
