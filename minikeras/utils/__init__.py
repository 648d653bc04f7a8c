"""``mk.utils``: Keras 3's utilities (``keras.utils``) that tutorials use."""
from minikeras.utils.numerical import normalize, to_categorical  # noqa: F401
from minikeras.utils.seeding import set_random_seed  # noqa: F401
