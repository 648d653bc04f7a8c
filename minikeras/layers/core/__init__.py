"""core layers."""
