"""How the shipped baselines are made: training runs, fine-tuning, re-measuring, model cards, pinning them.

Sits on judging and the policies; only the command line imports it.
"""
