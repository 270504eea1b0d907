"""Scoring: policy folders, the Hub, loading, the evaluation protocol, the leaderboard, baseline training, recording.

Sits on the catalogue and the agents; only the command line and the public API import it.
"""
