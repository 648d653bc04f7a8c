"""audio_dataset_from_directory against Keras 3.15 on the WAV folder of
tests/fixtures/keras_audio_dataset/make_fixtures.py (batches, padding, labels, class names, which
files go to training and validation for a seed), decode_wav against tf.audio.decode_wav's rule,
and Keras's argument errors."""
import io
import json
import wave
from pathlib import Path

import numpy as np
import pytest

import minikeras as mk
from minikeras.utils.wav import decode_wav

EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "keras_audio_dataset" / "expected.json").read_text())


def wav_bytes(samples, width=2, channels=2, rate=8000):
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(np.asarray(samples, f"<i{width}").tobytes() if width != 3 else bytes(samples))
    return buffer.getvalue()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("audio")
    for name, samples in EXPECTED["files"].items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(wav_bytes(samples))
    return str(root)


def rows(ds):
    return [[b.numpy().tolist() for b in batch] if isinstance(batch, tuple) else [batch.numpy().tolist()]
            for batch in ds]


def unpadded_rows(batches):
    """The (audio without its zero padding, label) of every row, sorted: a shuffled part's content."""
    out = []
    for batch in batches:
        audio, labels = batch
        for clip, label in zip(audio, labels):
            while clip and clip[-1] == [0.0, 0.0]:
                clip = clip[:-1]
            out.append((clip, label))
    return sorted(out)


@pytest.mark.parametrize("case", EXPECTED["cases"], ids=[str(c["kwargs"]) for c in EXPECTED["cases"]])
def test_matches_keras(folder, case):
    out = mk.utils.audio_dataset_from_directory(folder, verbose=False, **case["kwargs"])
    parts = out if isinstance(out, list) else [out]
    assert [p.class_names for p in parts] == case["class_names"]
    shuffled = case["kwargs"].get("shuffle", True)
    for index, (part, expected) in enumerate(zip(parts, case["parts"], strict=True)):
        got = rows(part)
        if shuffled and index == 0:  # tf.data's shuffle order is TensorFlow's own; the files must match
            assert unpadded_rows(got) == unpadded_rows(expected)
        else:
            np.testing.assert_array_equal(np.array(got, dtype=object).shape, np.array(expected, dtype=object).shape)
            assert got == expected


def test_decode_wav_is_tensorflows_rule():
    samples = np.array([[0, 16384], [-32768, 32767], [-1, 5]])
    audio, rate = decode_wav(wav_bytes(samples))
    assert rate == 8000 and audio.dtype == np.float32
    np.testing.assert_array_equal(audio, samples / 32768.0)
    np.testing.assert_array_equal(decode_wav(wav_bytes(samples), 2)[0], samples[:2] / 32768.0)
    np.testing.assert_array_equal(decode_wav(wav_bytes(samples), 5)[0], np.r_[samples, np.zeros((2, 2))] / 32768.0)


def test_decode_wav_refuses_other_widths_as_tensorflow():
    with pytest.raises(mk.errors.InvalidArgumentError, match="Can only read 16-bit WAV files, but received 8"):
        decode_wav(wav_bytes([[1, 2]], width=1))
    with pytest.raises(mk.errors.InvalidArgumentError, match="expected a 16-bit PCM WAV file"):
        decode_wav(b"RIFF....not a wav")


def test_keras_argument_errors(folder, tmp_path):
    make = mk.utils.audio_dataset_from_directory
    with pytest.raises(ValueError, match="Cannot set both `ragged` and `output_sequence_length`"):
        make(folder, ragged=True, output_sequence_length=3)
    with pytest.raises(ValueError, match="`sampling_rate` should have an integer value. Received: sampling_rate=1.5"):
        make(folder, sampling_rate=1.5)
    with pytest.raises(ValueError, match="`sampling_rate` should be higher than 0. Received: sampling_rate=0"):
        make(folder, sampling_rate=0)
    with pytest.raises(ValueError, match="minikeras has no resampler"):
        make(folder, sampling_rate=16000)
    with pytest.raises(ValueError, match="do not hold RaggedTensors"):
        make(folder, ragged=True)
    with pytest.raises(ValueError, match='`label_mode` argument must be one of "int", "categorical", "binary"'):
        make(folder, label_mode="sparse")
    with pytest.raises(ValueError, match="No audio files found in directory"):
        make(str(tmp_path), labels=None, verbose=False)
