"""``mk.applications`` (``keras.applications``): ImageNet models with Keras 3's constructors, layer
names and weight files: VGG16/19, ResNet50/101/152 and V2, DenseNet121/169/201, InceptionV3,
InceptionResNetV2, Xception, MobileNet, MobileNetV2, MobileNetV3Small/Large, EfficientNetB0..B7,
EfficientNetV2B0..B3/S/M/L, ConvNeXtTiny/Small/Base/Large/XLarge, NASNetMobile/Large.

Keras's module paths hold each model with its ``preprocess_input`` and ``decode_predictions``:
``vgg16``, ``vgg19``, ``resnet``, ``resnet50``, ``resnet_v2``, ``densenet``, ``inception_v3``,
``xception``, ``mobilenet``, ``mobilenet_v2``, ``mobilenet_v3``, ``efficientnet``, ``efficientnet_v2``,
``convnext``, ``inception_resnet_v2``, ``nasnet``, ``imagenet_utils``.

    from minikeras import keras
    model = keras.applications.ResNet50(weights="imagenet")
    preds = model.predict(keras.applications.resnet50.preprocess_input(images))
    keras.applications.resnet50.decode_predictions(preds, top=3)
"""
from minikeras.applications import (  # noqa: F401
    convnext, densenet, efficientnet, efficientnet_v2, imagenet_utils, inception_resnet_v2, inception_v3, mobilenet,
    mobilenet_v2, mobilenet_v3, nasnet, resnet, resnet50, resnet_v2, vgg, vgg16, vgg19, xception)
from minikeras.applications.convnext import (  # noqa: F401
    ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall, ConvNeXtTiny, ConvNeXtXLarge)
from minikeras.applications.densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from minikeras.applications.efficientnet import (  # noqa: F401
    EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3, EfficientNetB4, EfficientNetB5, EfficientNetB6,
    EfficientNetB7)
from minikeras.applications.efficientnet_v2 import (  # noqa: F401
    EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2, EfficientNetV2B3, EfficientNetV2L, EfficientNetV2M,
    EfficientNetV2S)
from minikeras.applications.inception_resnet_v2 import InceptionResNetV2  # noqa: F401
from minikeras.applications.inception_v3 import InceptionV3  # noqa: F401
from minikeras.applications.mobilenet import MobileNet  # noqa: F401
from minikeras.applications.mobilenet_v2 import MobileNetV2  # noqa: F401
from minikeras.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small  # noqa: F401
from minikeras.applications.nasnet import NASNetLarge, NASNetMobile  # noqa: F401
from minikeras.applications.resnet import (  # noqa: F401
    ResNet50, ResNet50V2, ResNet101, ResNet101V2, ResNet152, ResNet152V2)
from minikeras.applications.vgg import VGG16, VGG19  # noqa: F401
from minikeras.applications.xception import Xception  # noqa: F401
