"""Audio preprocessing layers: STFTSpectrogram and MelSpectrogram (Keras 3's)."""
from minikeras.layers.preprocessing.audio.mel_spectrogram import MelSpectrogram  # noqa: F401
from minikeras.layers.preprocessing.audio.stft_spectrogram import STFTSpectrogram  # noqa: F401
