"""Decoding WAV files as ``tf.audio.decode_wav`` does, with the standard library's ``wave``.

TensorFlow reads 16-bit PCM only; samples become float32 in [-1, 1) (the integer / 32768),
shaped (samples, channels).
"""
import io
import wave

import numpy as np

from minikeras.errors import InvalidArgumentError


def decode_wav(contents, desired_samples=-1, name="DecodeWav"):
    """Returns ``(audio, sample_rate)`` of the WAV file ``contents`` (bytes): float32 audio
    ``(samples, channels)``; ``desired_samples`` >= 0 cuts it or pads it with zeros to that many
    samples, as ``tf.audio.decode_wav``.

    Raises:
        InvalidArgumentError: not a WAV file, or not 16-bit PCM; the message says what was found.
    """
    try:
        with wave.open(io.BytesIO(contents), "rb") as reader:
            width, channels, rate = reader.getsampwidth(), reader.getnchannels(), reader.getframerate()
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as error:
        raise InvalidArgumentError(None, name, f"expected a 16-bit PCM WAV file, received one wave cannot read: "
                                   f"{error} [Op:{name}]") from None
    if width != 2:
        raise InvalidArgumentError(None, name, f"Can only read 16-bit WAV files, but received {8 * width} [Op:{name}]")
    audio = np.frombuffer(frames, dtype="<i2").reshape(-1, channels).astype(np.float32) / 32768.0
    if desired_samples >= 0:
        kept = audio[:desired_samples]
        audio = np.zeros((desired_samples, channels), np.float32)
        audio[:len(kept)] = kept
    return audio, rate
