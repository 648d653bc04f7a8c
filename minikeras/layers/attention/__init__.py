"""attention layers."""
