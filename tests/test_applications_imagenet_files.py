"""ConvNeXt, EfficientNetV2, InceptionResNetV2 and NASNet ask for Keras 3.15.1's weight files (the
file names, URLs and hashes of keras/src/applications/*.py), and refuse what Keras refuses with
its messages. ``get_file`` is replaced by a recorder that stops the load, so nothing is
downloaded."""
import pytest

from minikeras import applications
from minikeras.applications import _builder

KERAS_STORAGE = "https://storage.googleapis.com/tensorflow/keras-applications/"


class Asked(Exception):
    pass


@pytest.fixture
def asked_for(monkeypatch):
    def record(fname, origin, cache_subdir, file_hash):
        raise Asked(fname, origin, cache_subdir, file_hash)

    monkeypatch.setattr(_builder, "get_file", record)
    return Asked


@pytest.mark.parametrize("constructor, kwargs, file_name, url, file_hash", [
    ("ConvNeXtTiny", dict(input_shape=(32, 32, 3)), "convnext_tiny_notop.h5",
     KERAS_STORAGE + "convnext/convnext_tiny_notop.h5",
     "d547c096cabd03329d7be5562c5e14798aa39ed24b474157cef5e85ab9e49ef1"),
    ("NASNetMobile", dict(input_shape=(32, 32, 3)), "nasnet_mobile_no_top.h5",
     KERAS_STORAGE + "nasnet/NASNet-mobile-no-top.h5", "1ed92395b5b598bdda52abe5c0dbfd63"),
])
def test_imagenet_weights_are_kerass_files(asked_for, constructor, kwargs, file_name, url, file_hash):
    with pytest.raises(Asked) as info:
        getattr(applications, constructor)(weights="imagenet", include_top=False, **kwargs)
    assert info.value.args == (file_name, url, "models", file_hash)


def test_the_other_files_and_hashes_are_kerass():
    """The same code paths as above (the models are not built again): the tables hold Keras's
    values."""
    from minikeras.applications import convnext, efficientnet_v2, inception_resnet_v2, nasnet
    assert convnext.WEIGHTS_HASHES["convnext_xlarge"][0] == \
        "c1f5ccab661354fc3a79a10fa99af82f0fbf10ec65cb894a3ae0815f17a889ee"
    assert efficientnet_v2.WEIGHTS_HASHES["-l"] == ("27e6d408b53c7ebc868fefa357689935",
                                                    "b0b66b5c863aef5b46e8608fe1711615")
    assert nasnet.WEIGHT_FILES[(331, True)] == ("nasnet_large.h5", KERAS_STORAGE + "nasnet/NASNet-large.h5",
                                                "11577c9a518f0070763c2b964a382f17")
    assert efficientnet_v2.BASE_WEIGHTS_PATH == KERAS_STORAGE + "efficientnet_v2/"
    assert efficientnet_v2.WEIGHTS_HASHES["b0"] == ("21ecbf6da12460d5c40bb2f29ceb2188",
                                                    "893217f2bb855e2983157299931e43ff")
    assert inception_resnet_v2.BASE_WEIGHT_URL == KERAS_STORAGE + "inception_resnet_v2/"
    assert inception_resnet_v2.WEIGHTS_NO_TOP == ("inception_resnet_v2_weights_tf_dim_ordering_tf_kernels_notop.h5",
                                                  "d19885ff4a710c122648d3b5c3b684e4")


def test_convnext_imagenet_weights_need_the_variants_name():
    with pytest.raises(ValueError, match='Model name "tiny" does not match weights variant "convnext_tiny"'):
        applications.ConvNeXtTiny(weights="imagenet", include_top=False, input_shape=(32, 32, 3), name="tiny")


def test_nasnet_imagenet_weights_need_a_static_shape_and_a_known_size():
    with pytest.raises(ValueError, match="the input_shape argument must be static"):
        applications.NASNetMobile(weights="imagenet", include_top=False, input_shape=(None, None, 3))
    from minikeras.applications.nasnet import NASNet
    with pytest.raises(ValueError, match="ImageNet weights can only be loaded with NASNetLarge or NASNetMobile"):
        NASNet(input_shape=(64, 64, 3), include_top=False, default_size=64)


@pytest.mark.parametrize("constructor", ["ConvNeXtTiny", "NASNetMobile"])
def test_channels_first_is_refused_as_in_keras(constructor):
    from minikeras import backend
    previous = backend.image_data_format()
    backend.set_image_data_format("channels_first")
    try:
        with pytest.raises(ValueError, match="does not support the `channels_first` image data format"):
            getattr(applications, constructor)(weights=None, include_top=False, input_shape=(3, 32, 32))
    finally:
        backend.set_image_data_format(previous)


def test_efficientnet_v2_scales_inputs_as_its_variant():
    """B0..B3 normalize [0, 255] with ImageNet's statistics (checked against Keras's outputs in
    test_applications_keras_outputs); S, M and L rescale to [-1, 1] (x / 128 - 1)."""
    import numpy as np

    from minikeras import layers
    from minikeras.applications.efficientnet_v2 import input_scaling
    from minikeras.models import Model
    images = layers.Input((4, 4, 3))
    model = Model(images, input_scaling(images, False, 3))
    x = np.array([0.0, 64.0, 255.0] * 16, np.float32).reshape(1, 4, 4, 3)
    np.testing.assert_allclose(np.asarray(model(x)), x / 128.0 - 1.0, rtol=1e-6)
