"""How policies are judged: the evaluation protocol, ratings, anchors, the leaderboard, recordings.

Sits on the catalogue, the agents and the policies; the baselines and the command line import it.
"""
