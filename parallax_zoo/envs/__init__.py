"""Native environments, one module per family, and their rendering helpers."""
