"""The catalogue: registry.yaml and what reads it (specs, resolving an id, pins, foreign-env building).

Imports `parallax` and itself only; native envs are reached through the entry
points registry.yaml names, never imported here.
"""
