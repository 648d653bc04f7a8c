"""activations layers."""
