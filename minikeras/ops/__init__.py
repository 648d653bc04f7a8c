"""Primitive ops. Each module holds a family; every op's forward and gradient stand together."""
from minikeras.ops import operators as _operators

_operators.install()
