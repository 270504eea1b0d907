"""The catalogue: registry.yaml and what reads it (specs, pins, foreign-env building, the README table).

Imports `parallax` and itself only; native envs are reached through the entry
points registry.yaml names, never imported here.
"""
