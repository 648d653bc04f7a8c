"""convolutional layers."""
