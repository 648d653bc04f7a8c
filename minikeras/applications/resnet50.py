"""``keras.applications.resnet50``: ResNet50 with its preprocessing ('caffe') and decoding."""
from minikeras.applications.resnet import ResNet50, decode_predictions, preprocess_input

__all__ = ["ResNet50", "decode_predictions", "preprocess_input"]
