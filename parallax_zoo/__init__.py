"""Parallax Zoo."""
