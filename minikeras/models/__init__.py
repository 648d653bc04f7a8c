"""Models: ``Model`` (subclassing and functional) and ``Sequential``."""
import sys

from minikeras.models.cloning import clone_model  # noqa: F401
from minikeras.models.model import Model  # noqa: F401
from minikeras.models.sequential import Sequential  # noqa: F401
from minikeras.saving import load_model, save_model  # noqa: F401
from minikeras.saving.model_file import model_from_json  # noqa: F401
from minikeras.saving.registry import register_builtin_namespace

# Every public model class is minikeras's own in a .keras file (module "minikeras.models").
register_builtin_namespace("minikeras.models", sys.modules[__name__])
