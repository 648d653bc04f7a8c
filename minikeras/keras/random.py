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
from minikeras.random.seed_generator import SeedGenerator  # noqa: F401
