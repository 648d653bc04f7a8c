"""``keras.preprocessing``: Keras 3's dataset functions and its ``image`` and ``sequence`` helpers,
which are ``mk.utils``'s (``keras.utils.image_dataset_from_directory`` is the same function)."""
from minikeras.keras.preprocessing import image, sequence  # noqa: F401
from minikeras.utils.image_dataset import image_dataset_from_directory  # noqa: F401
from minikeras.utils.text_dataset import text_dataset_from_directory  # noqa: F401
from minikeras.utils.timeseries import timeseries_dataset_from_array  # noqa: F401
