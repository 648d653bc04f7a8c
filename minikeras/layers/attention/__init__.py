"""attention layers."""
from minikeras.layers.attention.group_query_attention import (  # noqa: F401
    GroupedQueryAttention as GroupQueryAttention)
