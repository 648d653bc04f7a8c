"""``keras.random``: Keras 3's random draws and ``SeedGenerator`` (``minikeras.random.draws``)."""
from minikeras.random.draws import (  # noqa: F401
    beta,
    binomial,
    categorical,
    dropout,
    gamma,
    normal,
    randint,
    shuffle,
    truncated_normal,
    uniform,
)
from minikeras.random.seed_generator import SeedGenerator
from minikeras.saving.registry import register_builtin

# Saved as Keras 3 saves it ({"module": "keras.random", "class_name": "SeedGenerator"}, the
# module written "minikeras.random" here and translated in .keras files).
register_builtin("minikeras.random")(SeedGenerator)
