"""regularization layers."""
