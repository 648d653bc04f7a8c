"""Models: ``Model`` (subclassing) and ``Sequential``."""
from minikeras.models.model import Model  # noqa: F401
from minikeras.models.sequential import Sequential  # noqa: F401
