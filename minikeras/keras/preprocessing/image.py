"""``keras.preprocessing.image``: Pillow images to and from arrays, and ``smart_resize``."""
from minikeras.utils.image_utils import array_to_img, img_to_array, load_img, save_img, smart_resize  # noqa: F401
