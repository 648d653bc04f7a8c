"""``keras.applications.vgg19``: VGG19 with its preprocessing ('caffe') and decoding."""
from minikeras.applications.vgg import VGG19, decode_predictions, preprocess_input

__all__ = ["VGG19", "decode_predictions", "preprocess_input"]
