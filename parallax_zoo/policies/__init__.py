"""Where a policy lives: checkpoint files and their hashes, the Hub and its network, loading a policy back.

Sits on the catalogue and the agents; judging, the baselines and the command line import it.
"""
