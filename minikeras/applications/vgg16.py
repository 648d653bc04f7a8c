"""``keras.applications.vgg16``: VGG16 with its preprocessing ('caffe') and decoding."""
from minikeras.applications.vgg import VGG16, decode_predictions, preprocess_input

__all__ = ["VGG16", "decode_predictions", "preprocess_input"]
