"""Helm charts and kustomizations, rendered and read back through the registry."""
