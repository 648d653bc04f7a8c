"""merging layers."""
