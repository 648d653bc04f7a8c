"""reshaping layers."""
