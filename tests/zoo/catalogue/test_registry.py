"""The registry: lookups, make, registration, and the errors for every kind of bad input."""

from __future__ import annotations

import dataclasses
import importlib.resources
import importlib.util
import math

import jax
import jax.numpy as jnp
import pytest

import parallax_zoo
from parallax import TimeLimit, check_env
from parallax_zoo.catalogue import registry
from parallax_zoo.catalogue.foreign_envs import import_optional
from parallax_zoo.catalogue.registry import (
    DuplicateEnvError,
    EnvNotFoundError,
    EnvSpec,
    InvalidKwargError,
    InvalidSpecError,
    Registry,
    RegistryFileError,
)

NATIVE_IDS = ["GridWorld-v0", "GridWorld-Masked-v0", "Race-v0", "TeamRace-v0", "RespawnRace-v0"]
SUITES_WITH_OWN_TESTS = {"gymnax", "brax", "mjx", "jaxmarl", "craftax", "pgx", "jumanji", "xminigrid"}
"""Suites whose ids `tests/parallax/adapters/test_adapter_<suite>.py` checks, cheap ones by default and the rest with
--run-slow."""


def _registered_id_params() -> list:
    """The native ids; every suite's ids are checked id by id in its own test file, cheap ids by default and the
    rest with --run-slow."""
    return [
        pytest.param(env_id, id=env_id)
        for env_id in parallax_zoo.list_envs()
        if parallax_zoo.spec(env_id).adapter not in SUITES_WITH_OWN_TESTS
    ]


def _yaml(entry_lines: str) -> str:
    return "envs:\n" + entry_lines


# --- what is registered -------------------------------------------------------------------------------------


def test_list_envs_is_sorted_and_holds_the_native_and_adapted_envs() -> None:
    ids = parallax_zoo.list_envs()
    assert ids == sorted(ids)
    assert set(NATIVE_IDS) <= set(ids)
    assert {"gymnax/CartPole-v1", "gymnax/Acrobot-v1", "brax/ant", "mjx/CartpoleBalance"} <= set(ids)
    assert parallax_zoo.list_envs(tag="zero-sum", namespace="native") == [
        "ConnectFour-v0",
        "Othello-v0",
        "TeamRace-v0",
        "TicTacToe-v0",
    ]


@pytest.mark.parametrize("env_id", _registered_id_params())
def test_registered_env_passes_check_env(env_id: str) -> None:
    env_spec = parallax_zoo.spec(env_id)
    env = parallax_zoo.make(env_id)
    check_env(env)
    assert getattr(env, "num_agents", 1) == env_spec.num_agents


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_make_wraps_native_envs_in_a_time_limit_of_max_steps(env_id: str) -> None:
    env = parallax_zoo.make(env_id)
    assert isinstance(env, TimeLimit)
    assert env.max_steps == parallax_zoo.spec(env_id).max_steps


def test_time_limit_truncates_exactly_at_max_steps() -> None:
    env = parallax_zoo.make("GridWorld-v0")
    stay_left = jnp.int32(3)

    def body(state, _):
        state = env.step(state, stay_left)
        return state, state.truncation

    _, truncation = jax.lax.scan(body, env.reset(key=jax.random.key(0)), None, length=50)
    assert not truncation[:49].any()
    assert truncation[49]


def test_make_passes_overrides_to_the_constructor() -> None:
    env = parallax_zoo.make("Race-v0", track_length=4, num_agents=2)
    assert env.unwrapped.track_length == 4
    assert env.num_agents == 2


def test_spec_describes_the_env() -> None:
    env_spec = parallax_zoo.spec("TeamRace-v0")
    assert (env_spec.entry_point, env_spec.multi_agent, env_spec.num_agents) == (
        "parallax_zoo.envs.team_race:TeamRace",
        True,
        4,
    )
    assert env_spec.kind == "native"
    cartpole = parallax_zoo.spec("gymnax/CartPole-v1")
    assert (cartpole.kind, cartpole.foreign_id, cartpole.max_steps) == ("gymnax", "CartPole-v1", 500)


def test_registry_table_lists_every_id_with_its_columns() -> None:
    sections = parallax_zoo.registry_table().split("\n\n")
    for section in sections:
        assert section.splitlines()[1].split()[:5] == ["id", "kind", "agents", "max_steps", "reference"]
    lines = [line for section in sections for line in section.splitlines()[3:]]
    assert len(lines) == len(parallax_zoo.list_envs())
    race_row = next(line for line in lines if line.startswith("Race-v0 "))
    reference = parallax_zoo.spec("Race-v0").reference_score
    assert race_row.split()[:5] == ["Race-v0", "native", "3", "50", "-" if reference is None else f"{reference:.3f}"]


def test_registry_yaml_ships_inside_the_package() -> None:
    resource = importlib.resources.files("parallax_zoo.catalogue").joinpath("registry.yaml")
    assert Registry.from_yaml(resource.read_text()).list_envs() == parallax_zoo.list_envs()


# --- unknown ids --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typo", "suggested"),
    [
        ("Rcae-v0", "'Race-v0'"),
        ("race-v0", "'Race-v0'"),
        ("GridWorld-v1", "'GridWorld-v0'"),
        ("gymnax/Cartpole-v1", "'gymnax/CartPole-v1'"),
        ("TeamRace", "'TeamRace-v0'"),
    ],
)
def test_unknown_id_lists_close_matches(typo: str, suggested: str) -> None:
    with pytest.raises(EnvNotFoundError) as caught:
        parallax_zoo.make(typo)
    message = str(caught.value)
    assert f"No environment registered as '{typo}'" in message
    assert "Did you mean" in message and suggested in message
    assert "list_envs()" in message


def test_unknown_id_without_close_match_points_to_list_envs() -> None:
    with pytest.raises(KeyError) as caught:
        parallax_zoo.spec("Zzzzzzzz-v9")
    assert "Did you mean" not in str(caught.value)
    assert f"lists all {len(parallax_zoo.list_envs())} registered ids" in str(caught.value)


# --- bad kwargs ---------------------------------------------------------------------------------------------


def test_unknown_kwarg_is_named_with_the_accepted_ones() -> None:
    with pytest.raises(InvalidKwargError) as caught:
        parallax_zoo.make("Race-v0", track_lenght=5)
    message = str(caught.value)
    assert "'track_lenght'" in message
    assert "num_agents, track_length, step_cost, cell_pixels" in message


def test_unknown_kwarg_of_an_adapted_env_names_the_foreign_parameters() -> None:
    pytest.importorskip("gymnax")
    with pytest.raises(InvalidKwargError) as caught:
        parallax_zoo.make("gymnax/CartPole-v1", gravityy=9.0)
    assert "'gravityy'" in str(caught.value) and "gravity" in str(caught.value).split("accepts:")[1]


@pytest.mark.parametrize(
    ("env_id", "kwargs", "says"),
    [
        ("GridWorld-v0", {"size": "5"}, "GridWorld-v0: argument 'size' must be an int >= 2, got '5' (str)"),
        ("GridWorld-v0", {"size": 5.5}, "GridWorld-v0: argument 'size' must be an int >= 2, got 5.5 (float)"),
        ("GridWorld-v0", {"size": True}, "GridWorld-v0: argument 'size' must be an int >= 2, got True (bool)"),
        ("GridWorld-v0", {"size": 1}, "GridWorld-v0: argument 'size' must be an int >= 2, got 1 (int)"),
        (
            "GridWorld-v0",
            {"step_cost": math.nan},
            "GridWorld-v0: argument 'step_cost' must be a finite float >= 0, got nan (float)",
        ),
        (
            "GridWorld-v0",
            {"step_cost": -0.5},
            "GridWorld-v0: argument 'step_cost' must be a finite float >= 0, got -0.5 (float)",
        ),
        (
            "RespawnRace-v0",
            {"fall_probability": 1.0},
            "RespawnRace-v0: argument 'fall_probability' must be a finite float in [0, 1), got 1.0 (float)",
        ),
        ("Race-v0", {"step_cost": math.inf}, "Race-v0: argument 'step_cost' must be a finite float, got inf (float)"),
        ("TeamRace-v0", {"reach": "far"}, "TeamRace-v0: argument 'reach' must be an int >= 0, got 'far' (str)"),
        (
            "TicTacToe-v0",
            {"size": 4},
            "TicTacToe-v0 does not take the keyword argument 'size'. It accepts: cell_pixels.",
        ),
        (
            "ConnectFour-v0",
            {"rows": 7},
            "ConnectFour-v0 does not take the keyword argument 'rows'. It accepts: cell_pixels.",
        ),
    ],
)
def test_kwargs_are_checked_against_the_constructor_types_and_ranges_before_building(env_id, kwargs, says) -> None:
    with pytest.raises(InvalidKwargError) as caught:
        parallax_zoo.make(env_id, **kwargs)
    assert str(caught.value) == says
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)


def test_kwargs_of_the_right_type_build_and_ints_stand_for_floats() -> None:
    env = parallax_zoo.make("GridWorld-v0", size=4, step_cost=0)
    assert (env.unwrapped.size, env.unwrapped.step_cost) == (4, 0.0)


def test_an_entry_point_that_is_not_a_class_or_factory_is_refused_naming_the_entry(scratch_registry: Registry) -> None:
    parallax_zoo.register({"id": "Pi-v0", "entry_point": "math:pi"})
    with pytest.raises(InvalidSpecError) as caught:
        parallax_zoo.make("Pi-v0")
    assert (caught.value.entry, caught.value.field) == ("'Pi-v0'", "entry_point")
    assert "'math:pi' names float 3.14159" in str(caught.value) and "not a class or factory function" in str(
        caught.value
    )


def test_a_factory_function_entry_point_gets_its_kwargs_checked(scratch_registry: Registry) -> None:
    parallax_zoo.register({"id": "Factory-v0", "entry_point": "helpers.example_envs:small_grid", "max_steps": 5})
    assert parallax_zoo.make("Factory-v0", goal_row=2).unwrapped.goal_row == 2
    with pytest.raises(InvalidKwargError, match=r"Factory-v0: argument 'goal_row' must be an int, got 2.0 \(float\)"):
        parallax_zoo.make("Factory-v0", goal_row=2.0)


def test_a_missing_optional_package_names_the_extra_to_install() -> None:
    with pytest.raises(ImportError) as caught:
        import_optional("parallax_zoo_no_such_module", "brax", "brax/ant")
    assert "brax/ant" in str(caught.value) and "install -e '" in str(caught.value)
    assert "[brax]'" in str(caught.value)


# --- registration -------------------------------------------------------------------------------------------


def test_register_adds_an_env_that_make_builds(scratch_registry: Registry) -> None:
    parallax_zoo.register(
        {
            "id": "ShortRace-v0",
            "entry_point": "parallax_zoo.envs.race:Race",
            "kwargs": {"track_length": 3},
            "max_steps": 7,
            "multi_agent": True,
            "num_agents": 3,
        }
    )
    env = parallax_zoo.make("ShortRace-v0")
    assert env.max_steps == 7 and env.unwrapped.track_length == 3
    assert "ShortRace-v0" in parallax_zoo.list_envs()


def test_registering_an_existing_id_raises_unless_overridden(scratch_registry: Registry) -> None:
    replacement = dataclasses.replace(parallax_zoo.spec("Race-v0"), max_steps=9)
    with pytest.raises(DuplicateEnvError) as caught:
        parallax_zoo.register(replacement)
    assert "'Race-v0' is already registered" in str(caught.value) and "override=True" in str(caught.value)
    assert parallax_zoo.spec("Race-v0").max_steps == 50
    parallax_zoo.register(replacement, override=True)
    assert parallax_zoo.spec("Race-v0").max_steps == 9


def test_duplicate_ids_in_one_file_are_rejected() -> None:
    entry = "  - id: A-v0\n    entry_point: m:C\n"
    with pytest.raises(DuplicateEnvError, match=r"entry #1 repeats the id 'A-v0'"):
        Registry.from_yaml(_yaml(entry + entry))


# --- malformed registry.yaml --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "entry_label", "field", "says"),
    [
        ("  - id: A-v0\n    entry_point: m:C\n    max_step: 5\n", "'A-v0'", "max_step", "Did you mean 'max_steps'?"),
        (
            "  - id: A-v0\n    entry_point: m:C\n    max_steps: ten\n",
            "'A-v0'",
            "max_steps",
            "int from 1 to 2,147,483,647",
        ),
        ("  - id: A-v0\n    entry_point: m:C\n    max_steps: 0\n", "'A-v0'", "max_steps", "in int32) or null, got 0"),
        (
            "  - id: A-v0\n    entry_point: m:C\n    max_steps: 2147483648\n",
            "'A-v0'",
            "max_steps",
            "int from 1 to 2,147,483,647 (steps are counted in int32) or null, got 2147483648",
        ),
        ("  - entry_point: m:C\n", "#0", "id", "is missing"),
        ("  - id: Race\n    entry_point: m:C\n", "'Race'", "id", "'Name-vN'"),
        ("  - id: A-v0\n", "'A-v0'", "entry_point", "exactly one of"),
        ("  - id: A-v0\n    entry_point: not a path\n", "'A-v0'", "entry_point", "package.module:ClassName"),
        ("  - id: gymnax/X-v0\n    adapter: gymnax\n", "'gymnax/X-v0'", "foreign_id", "foreign library's env name"),
        ("  - id: brax/X-v0\n    adapter: gymnax\n    foreign_id: X-v0\n", "'brax/X-v0'", "id", "under 'gymnax/'"),
        ("  - id: gym/X-v0\n    adapter: gym\n    foreign_id: X\n", "'gym/X-v0'", "adapter", "must be one of"),
        ("  - id: A-v0\n    entry_point: m:C\n    num_agents: 2\n", "'A-v0'", "num_agents", "multi_agent: true"),
        ("  - id: A-v0\n    entry_point: m:C\n    multi_agent: yes please\n", "'A-v0'", "multi_agent", "true or false"),
        ("  - id: A-v0\n    entry_point: m:C\n    tags: [1, 2]\n", "'A-v0'", "tags", "list of strings"),
        (
            "  - id: A-v0\n    entry_point: m:C\n    reference_score: .nan\n",
            "'A-v0'",
            "reference_score",
            "finite number",
        ),
        ("  - id: A-v0\n    entry_point: m:C\n    kwargs: [1]\n", "'A-v0'", "kwargs", "mapping"),
        (
            "  - id: A-v0\n    entry_point: m:C\n    baseline: {revision: main}\n",
            "'A-v0'",
            "baseline",
            "needs repo_id and files",
        ),
        (
            "  - id: A-v0\n    entry_point: m:C\n    baseline: {repo_id: o/r, files: {model.safetensors: abc}}\n",
            "'A-v0'",
            "baseline",
            "invalid sha256 'abc' for 'model.safetensors'",
        ),
        (
            "  - id: A-v0\n    entry_point: m:C\n    baseline: {repo_id: o/r, tag: v1}\n",
            "'A-v0'",
            "baseline",
            "unknown keys ['tag']",
        ),
        ("  - just a string\n", "#0", "(entry)", "mapping of fields"),
        (
            "  - id: A-v0\n    entry_point: m:C\n    tags: [zero-sum]\n    opponents: [m:f]\n",
            "'A-v0'",
            "opponents",
            "mapping from names",
        ),
        (
            "  - id: A-v0\n    entry_point: m:C\n    tags: [zero-sum]\n    opponents: {random: m:f}\n",
            "'A-v0'",
            "opponents",
            "other than ('random', 'baseline')",
        ),
        (
            "  - id: A-v0\n    entry_point: m:C\n    tags: [zero-sum]\n    opponents: {naive: f}\n",
            "'A-v0'",
            "opponents",
            "'naive' must look like 'package.module:function'",
        ),
        (
            "  - id: A-v0\n    entry_point: m:C\n    opponents: {naive: m:f}\n",
            "'A-v0'",
            "opponents",
            "only zero-sum games",
        ),
        (
            "  - id: A-v0\n    entry_point: m:C\n    held_out: {strong: m:f}\n",
            "'A-v0'",
            "held_out",
            "only zero-sum games (tag 'zero-sum') have held-out players",
        ),
        (
            "  - id: A-v0\n    entry_point: m:C\n    tags: [zero-sum]\n    opponents: {naive: m:f}\n"
            "    held_out: {naive: m:g}\n",
            "'A-v0'",
            "held_out",
            "other than ('random', 'baseline', 'naive')",
        ),
    ],
)
def test_malformed_entry_names_the_entry_and_the_field(entry: str, entry_label: str, field: str, says: str) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        Registry.from_yaml(_yaml(entry), source="my-registry.yaml")
    error = caught.value
    assert (error.entry, error.field) == (entry_label, field)
    assert str(error).startswith(f"my-registry.yaml: entry {entry_label}, field '{field}': ")
    assert says in str(error)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("envs: [unclosed\n", "is not valid YAML"),
        ("- id: A-v0\n", "an 'envs' key"),
        ("envs: {A-v0: {}}\n", "an 'envs' key"),
    ],
)
def test_unreadable_registry_file_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(RegistryFileError, match=says):
        Registry.from_yaml(text, source="my-registry.yaml")


def test_a_valid_entry_with_a_baseline_pin_loads() -> None:
    digest = "ab" * 32
    text = _yaml(
        "  - id: A-v0\n    entry_point: m:C\n    reference_score: 1\n"
        f"    baseline: {{repo_id: org/a, files: {{model.safetensors: {digest}}}}}\n"
    )
    env_spec = Registry.from_yaml(text).spec("A-v0")
    assert env_spec.baseline is not None
    assert (env_spec.baseline.repo_id, env_spec.baseline.revision) == ("org/a", "main")
    assert dict(env_spec.baseline.files) == {"model.safetensors": digest}
    assert env_spec.reference_score == 1 and not math.isnan(env_spec.reference_score)


def test_env_spec_validates_when_built_directly() -> None:
    with pytest.raises(InvalidSpecError) as caught:
        EnvSpec(id="Race-v0", entry_point="parallax_zoo.envs.race:Race", max_steps=-1)
    assert caught.value.field == "max_steps"


def test_entry_point_that_does_not_exist_is_reported_at_make() -> None:
    scratch = Registry([EnvSpec(id="Ghost-v0", entry_point="parallax_zoo.envs.race:Ghost")])
    with pytest.raises(registry.RegistryError, match="names 'Ghost', which 'parallax_zoo.envs.race' does not define"):
        scratch.make("Ghost-v0")


# --- adapted envs (run once the adapters are installed) ------------------------------------------------------


def test_gymnax_entry_builds_the_adapter_with_the_registry_episode_length() -> None:
    pytest.importorskip("gymnax")
    adapter = pytest.importorskip("parallax.adapters.gymnax")
    env = parallax_zoo.make("gymnax/CartPole-v1")
    assert isinstance(env, adapter.GymnaxAdapter)
    short = parallax_zoo.make("gymnax/CartPole-v1", max_steps_in_episode=3)
    state = short.reset(key=jax.random.key(0))
    for _ in range(3):
        state = short.step(state, jnp.int32(0))
    assert bool(state.done)


def test_brax_entry_builds_the_adapter() -> None:
    pytest.importorskip("brax")
    adapter = pytest.importorskip("parallax.adapters.brax")
    assert isinstance(parallax_zoo.make("brax/inverted_pendulum"), adapter.BraxAdapter)


@pytest.mark.skipif(importlib.util.find_spec("mujoco_playground") is None, reason="mujoco_playground is not installed")
def test_mjx_entry_rejects_a_config_key_playground_does_not_have() -> None:
    with pytest.raises(InvalidKwargError) as caught:
        parallax_zoo.make("mjx/CartpoleBalance", episode_lenght=10)
    assert "'episode_lenght'" in str(caught.value) and "episode_length" in str(caught.value)
