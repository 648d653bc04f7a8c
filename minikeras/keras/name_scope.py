"""``keras.name_scope``: the scope class lives with the layers, which open one of their own
while they are built and called (``minikeras.layers.name_scope``)."""
from minikeras.layers.name_scope import current_path, name_scope  # noqa: F401
