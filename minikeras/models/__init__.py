"""Models: ``Model`` (subclassing) and ``Sequential``."""
from minikeras.models.model import Model  # noqa: F401
from minikeras.models.sequential import Sequential  # noqa: F401
from minikeras.saving import load_model  # noqa: F401,E402
