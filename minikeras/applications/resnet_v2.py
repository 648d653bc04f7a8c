"""``keras.applications.resnet_v2``: ResNet50V2/101V2/152V2 with their preprocessing ('tf') and
decoding (the models are built in ``resnet``, with the V1 ones)."""
from minikeras.applications.resnet import (
    ResNet50V2,
    ResNet101V2,
    ResNet152V2,
    decode_predictions,
    preprocess_input_v2 as preprocess_input,
)

__all__ = ["ResNet50V2", "ResNet101V2", "ResNet152V2", "decode_predictions", "preprocess_input"]
