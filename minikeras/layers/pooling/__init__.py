"""pooling layers."""
