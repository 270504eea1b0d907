"""Checked by pyright, not run: every player of the zoo is a `Player`, so anything that takes one takes each of them."""

from parallax_zoo.agents.player import Player
from parallax_zoo.agents.players import Greedy, MaskedScriptedPlayer, Matchup, RandomPlayer, Rotation, ScriptedPlayer
from parallax_zoo.agents.policy import Policy
from parallax_zoo.agents.search import SearchPlayer


def takes_player(player: Player) -> Player: ...


def every_player_is_a_player(
    policy: Policy,
    search: SearchPlayer,
    random: RandomPlayer,
    scripted: ScriptedPlayer,
    masked: MaskedScriptedPlayer,
    greedy: Greedy,
    matchup: Matchup,
    rotation: Rotation,
) -> None:
    for player in (policy, search, random, scripted, masked, greedy, matchup, rotation):
        takes_player(player)
