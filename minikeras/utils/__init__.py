"""``mk.utils``: Keras 3's utilities (``keras.utils``) that tutorials use."""
from minikeras.utils.numerical import normalize, to_categorical  # noqa: F401
from minikeras.utils.data_packing import pack_x_y_sample_weight, unpack_x_y_sample_weight  # noqa: F401
from minikeras.utils.seeding import set_random_seed  # noqa: F401
from minikeras.utils.sequence import pad_sequences  # noqa: F401
from minikeras.utils.split import split_dataset  # noqa: F401
from minikeras.utils.image_dataset import image_dataset_from_directory  # noqa: F401
from minikeras.utils.image_utils import array_to_img, img_to_array, load_img, save_img  # noqa: F401
from minikeras.utils.text_dataset import text_dataset_from_directory  # noqa: F401
from minikeras.utils.audio_dataset import audio_dataset_from_directory  # noqa: F401
from minikeras.utils.timeseries import timeseries_dataset_from_array  # noqa: F401
from minikeras.utils.file_utils import get_file  # noqa: F401
from minikeras.utils.progbar import Progbar  # noqa: F401
from minikeras.data.python_batches import PyDataset  # noqa: F401 - keras.utils.PyDataset
Sequence = PyDataset  # Keras 2's name, kept by Keras 3
from minikeras.callbacks.interactive_logging import (  # noqa: F401 - keras.utils keeps these too
    disable_interactive_logging, enable_interactive_logging, is_interactive_logging_enabled)
from minikeras.utils.plot import model_to_dot, plot_model  # noqa: F401
from minikeras.saving.registry import (  # noqa: F401 - keras.utils keeps these too
    CustomObjectScope, custom_object_scope, deserialize_keras_object, get_custom_objects, get_registered_name,
    get_registered_object, register_keras_serializable, serialize_keras_object)
from minikeras.utils.config import Config  # noqa: F401
from minikeras.utils import legacy  # noqa: F401 - keras.utils.legacy: Keras 2's serialize/deserialize
from minikeras.dtypes import standardize_dtype  # noqa: F401 - keras.utils keeps these too
from minikeras.module import clear_session  # noqa: F401
from minikeras.symbolic import get_source_inputs, is_keras_tensor  # noqa: F401
from minikeras.layers.preprocessing.feature_space import FeatureSpace  # noqa: F401
from minikeras.image import bounding_boxes  # noqa: F401 - keras.utils.bounding_boxes
