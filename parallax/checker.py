"""`check_env`: verifies what the protocol lets us verify about an environment.

It runs the env eagerly, under `jit`, `vmap` and `lax.scan`, and raises a
`ProtocolError` naming the rule broken, the field and the step. The rules
checked are the protocol page's (docs/protocol.md): a stable treedef and dtypes, spaces that
contain what the env emits, `step_count` incrementing, determinism for equal
keys, and for multi-agent envs the six multi-agent rules (docs/protocol.md); and that actions outside
the action space leave the state finite (docs/protocol.md, "Out-of-range actions").
An env that checks its own inputs from compiled code (`ValidateActions`,
with Equinox's `error_if`) is checked too: its refusal of an out-of-range
action counts as one meaning, its refusal of a legal one is a violation.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, PRNGKeyArray

from parallax.core import MARLState, State, action_mask_of, is_key, is_key_dtype
from parallax.spaces import Space, out_of_range_actions, sample_legal


class ProtocolError(Exception):
    """An environment broke a protocol rule; `rule`, `field` and `step` say which, where and when."""

    def __init__(self, rule: str, field: str, message: str, step: int | None = None):
        self.rule, self.field, self.step = rule, field, step
        when = "at reset" if step is None else f"at step {step}"
        super().__init__(f"[{rule}] field '{field}' {when}: {message}")


def _signature(tree: Any) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((tuple(jnp.shape(x)), jnp.result_type(x)) for x in leaves)


def _describe_difference(expected: tuple, got: tuple) -> str:
    if expected[0] != got[0]:
        return f"tree structure changed from {expected[0]} to {got[0]}"
    for i, (a, b) in enumerate(zip(expected[1], got[1])):
        if a != b:
            return f"leaf {i} changed from shape/dtype {a} to {b}"
    return "signature changed"


def _comparable(tree: Any) -> Any:
    return jax.tree_util.tree_map(
        lambda x: jax.random.key_data(x) if is_key_dtype(jnp.result_type(x)) else x,
        tree,
    )


FLOAT_TOLERANCE = 1e-5
"""Relative and absolute tolerance for floats compared by `_trees_equal`.

XLA on CPU may compute the same expression a few ulps apart in two places of
one program (MuJoCo's physics does), so equal inputs are held to agree within
this, not bit for bit; hidden state or randomness still shows as large gaps.
"""


def _trees_equal(a: Any, b: Any) -> Array:
    """Whether two pytrees agree: integers, bools and keys exactly, floats within `FLOAT_TOLERANCE`."""
    a_leaves = jax.tree_util.tree_leaves(_comparable(a))
    b_leaves = jax.tree_util.tree_leaves(_comparable(b))
    equal = jnp.asarray(True)
    for x, y in zip(a_leaves, b_leaves):
        if jnp.issubdtype(jnp.result_type(x), jnp.inexact):
            same = jnp.allclose(x, y, rtol=FLOAT_TOLERANCE, atol=FLOAT_TOLERANCE, equal_nan=True)
        else:
            same = jnp.array_equal(x, y)
        equal = equal & same
    return equal


def _random_action(space: Space, state: Any, key: PRNGKeyArray) -> Any:
    """A random action; uniform over the legal ones where the state carries an action mask."""
    return sample_legal(space, key=key, mask=action_mask_of(state))


def _check_spaces(env: Any) -> None:
    for name in ("action_space", "observation_space"):
        space = getattr(env, name, None)
        if space is None:
            raise ProtocolError("spaces", name, f"{type(env).__name__} has no {name}")
        for attr in ("shape", "dtype", "sample", "contains"):
            if not hasattr(space, attr):
                raise ProtocolError("spaces", name, f"{space!r} has no '{attr}'")
        try:
            hash(space)
        except TypeError:
            raise ProtocolError(
                "spaces", name, f"{space!r} is not hashable, so it cannot be a static jit argument"
            ) from None
        if space != space:
            raise ProtocolError("spaces", name, f"{space!r} does not compare equal to itself")


def _check_fields(env: Any, state: Any, step: int | None) -> None:
    """Types, dtypes and shapes of the fields every state must have."""
    # An env without num_agents is single-agent; wrappers report num_agents=1 over one, as over a one-slot MARL env.
    declared = getattr(env, "num_agents", None)
    multi_agent = declared is not None and (declared > 1 or isinstance(state, MARLState))
    expected_type = MARLState if multi_agent else State
    if not isinstance(state, expected_type):
        raise ProtocolError(
            "state type",
            "state",
            f"expected a {expected_type.__name__} (or subclass), got {type(state).__name__}",
            step,
        )
    for name in ("termination", "truncation"):
        value = getattr(state, name)
        if jnp.shape(value) != () or jnp.result_type(value) != jnp.bool_:
            rule = "rule 6" if multi_agent else "flags"
            raise ProtocolError(
                rule,
                name,
                f"must be an episode-level bool scalar, got {jnp.result_type(value)}{jnp.shape(value)}",
                step,
            )
    if jnp.shape(state.step_count) != () or not jnp.issubdtype(jnp.result_type(state.step_count), jnp.integer):
        raise ProtocolError(
            "step_count", "step_count", f"must be an int scalar, got {jnp.result_type(state.step_count)}", step
        )
    if not is_key(state.key):
        raise ProtocolError("key", "key", f"must be a PRNG key, got {jnp.result_type(state.key)}", step)
    if isinstance(state, MARLState):
        n = env.num_agents
        agents = state.agents
        if jnp.shape(agents.active) != (n,) or jnp.result_type(agents.active) != jnp.bool_:
            raise ProtocolError(
                "agents",
                "agents.active",
                f"must be bool of shape ({n},), got {jnp.result_type(agents.active)}{jnp.shape(agents.active)}",
                step,
            )
        if jnp.shape(agents.reward) != (n,) or not jnp.issubdtype(jnp.result_type(agents.reward), jnp.floating):
            raise ProtocolError(
                "agents",
                "agents.reward",
                f"must be float of shape ({n},), got {jnp.result_type(agents.reward)}{jnp.shape(agents.reward)}",
                step,
            )
        for leaf in jax.tree_util.tree_leaves(agents.observation):
            if jnp.shape(leaf)[:1] != (n,):
                raise ProtocolError(
                    "agents", "agents.observation", f"must lead with num_agents={n}, got shape {jnp.shape(leaf)}", step
                )
    elif isinstance(state, State):
        if jnp.shape(state.reward) != () or not jnp.issubdtype(jnp.result_type(state.reward), jnp.floating):
            raise ProtocolError(
                "reward",
                "reward",
                f"must be a float scalar, got {jnp.result_type(state.reward)}{jnp.shape(state.reward)}",
                step,
            )


def _observation(state: Any) -> Any:
    return state.agents.observation if isinstance(state, MARLState) else state.observation


def _step_violations(env: Any, state: Any, key: PRNGKeyArray) -> tuple[Any, dict[str, Array]]:
    """One checked step: the next state and a flag per rule, true where the rule broke, with what was found
    (under `evidence/<rule>` keys) so that a broken rule's message can say what was expected and what came."""
    action_key, other_key, reset_key = jax.random.split(key, 3)
    action = _random_action(env.action_space, state, action_key)
    next_state = env.step(state, action)
    again = env.step(state, action)
    flags: dict[str, Array] = {
        "action_space/action": ~env.action_space.contains(action),
        "observation_space/observation": ~env.observation_space.contains(_observation(next_state)),
        "step_count increments/step_count": next_state.step_count != state.step_count + 1,
        "determinism/state": ~_trees_equal(next_state, again),
        "evidence/step_count": jnp.stack([state.step_count + 1, next_state.step_count]),
        "evidence/observation": _range_of(_observation(next_state)),
        "evidence/action": _range_of(action),
    }
    if isinstance(state, MARLState):
        active = state.agents.active
        other = _random_action(env.action_space, state, other_key)
        mixed = jax.tree_util.tree_map(
            lambda a, b: jnp.where(jnp.reshape(active, active.shape + (1,) * (a.ndim - 1)), a, b), action, other
        )
        with_other = env.step(state, mixed)
        agents = next_state.agents
        flags["rule 1/action (inactive slots)"] = ~_trees_equal(next_state, with_other)
        flags.update(_agent_rule_violations(agents, previous_active=active))
    fresh = env.reset(key=reset_key)
    following = jax.tree_util.tree_map(
        lambda a, b: jnp.where(jnp.reshape(next_state.done, (1,) * jnp.ndim(a)), a, b), fresh, next_state
    )
    return following, flags


def _agent_rule_violations(agents: Any, previous_active: Array | None) -> dict[str, Array]:
    active = agents.active
    nonzero = jnp.zeros(active.shape, jnp.bool_)
    for leaf in jax.tree_util.tree_leaves(agents.observation):
        nonzero = nonzero | jnp.reshape(leaf != 0, (leaf.shape[0], -1)).any(axis=1)
    flags = {
        "rule 2/agents.observation (inactive slots must be zeros)": jnp.any(nonzero & ~active),
        "evidence/active": active,
        "evidence/nonzero observation": nonzero,
        "evidence/reward": jnp.asarray(agents.reward, jnp.float32),
    }
    if previous_active is not None:
        flags["rule 3/agents.reward (slots inactive on the previous step must be zeros)"] = jnp.any(
            (agents.reward != 0) & ~previous_active
        )
        flags["evidence/previously active"] = previous_active
    else:
        flags["rule 3/agents.reward (must be zeros at reset)"] = jnp.any(agents.reward != 0)
        flags["evidence/previously active"] = jnp.zeros(active.shape, jnp.bool_)
    if agents.action_mask is not None:
        legal = jnp.reshape(agents.action_mask, (active.shape[0], -1)).any(axis=1)
        flags["rule 4/agents.action_mask (every slot needs a legal action)"] = ~jnp.all(legal)
        flags["evidence/has a legal action"] = legal
    return flags


def _range_of(tree: Any) -> Array:
    """`float32[2]`: the smallest and largest value over every leaf of `tree` (what a space check found)."""
    leaves = [jnp.ravel(jnp.asarray(leaf, jnp.float32)) for leaf in jax.tree_util.tree_leaves(tree)]
    values = jnp.concatenate(leaves) if leaves else jnp.zeros((1,), jnp.float32)
    return jnp.stack([values.min(), values.max()])


def _slots(mask: np.ndarray) -> str:
    return ", ".join(map(str, np.flatnonzero(mask))) or "none"


def _explain(name: str, found: dict[str, np.ndarray], env: Any) -> str:
    """What the rule `name` expected and what the env gave, from the evidence recorded at that step."""
    rule = name.split("/", 1)[0]
    if rule == "step_count increments":
        expected, got = found["step_count"]
        return f"expected step_count {int(expected)} (the previous step's + 1), got {int(got)}"
    if rule == "observation_space":
        low, high = found["observation"]
        return f"expected an observation inside {env.observation_space!r}, got values from {low:g} to {high:g}"
    if rule == "action_space":
        low, high = found["action"]
        return f"expected the sampled action inside {env.action_space!r}, got values from {low:g} to {high:g}"
    if rule == "determinism":
        return "expected two steps from the same state with the same action to agree, got different states"
    if rule == "rule 1":
        return (
            "expected the actions of inactive slots to be ignored, got a different next state when only "
            "those actions changed"
        )
    if rule == "rule 2":
        wrong = found["nonzero observation"] & ~found["active"]
        return f"expected zero observations in inactive slots, got non-zero ones in slot(s) {_slots(wrong)}"
    if rule == "rule 3":
        wrong = (found["reward"] != 0) & ~found["previously active"]
        rewards = ", ".join(f"slot {i}: {found['reward'][i]:g}" for i in np.flatnonzero(wrong))
        return f"expected zero rewards in slots that were inactive, got {rewards}"
    if rule == "rule 4":
        return f"expected a legal action in every slot, got none in slot(s) {_slots(~found['has a legal action'])}"
    return "violated"


def _raise_first(flags: dict[str, np.ndarray], step_offset: int, env: Any = None) -> None:
    """Raise for the earliest broken rule; `evidence/...` entries (per step) say what was found there."""
    first: tuple[int, str] | None = None
    for name, values in flags.items():
        if name.startswith("evidence/"):
            continue
        hits = np.flatnonzero(np.asarray(values))
        if hits.size and (first is None or hits[0] < first[0]):
            first = (int(hits[0]), name)
    if first is not None:
        step, name = first
        rule, field = name.split("/", 1)
        found = {
            key.removeprefix("evidence/"): np.asarray(value)[step]
            for key, value in flags.items()
            if key.startswith("evidence/")
        }
        raise ProtocolError(rule, field, _explain(name, found, env), step + step_offset)


def _checkified(function: Any) -> Any:
    """`jax.jit(function)` whose runtime checks are caught: returns (the message of a failed check or None, the
    outputs)."""
    compiled = jax.jit(function)

    def run(*args: Any) -> tuple[str | None, Any]:
        try:
            return None, compiled(*args)
        except Exception as error:  # the runtime's own error type, raised from compiled code; others are re-raised
            message = _check_message(error)
            if message is None:
                raise
            return message, None

    return run


def _check_message(error: Exception) -> str | None:
    """The message of a failed runtime check (Equinox's `error_if`) without the traceback around it; None for other
    errors."""
    text = str(error)
    marker = "EquinoxRuntimeError: "
    if marker not in text:
        return None
    return text.split(marker, 1)[1].split("\n", 1)[0].strip()


def _passed(result: tuple[str | None, Any]) -> Any:
    """The outputs of a `_checkified` call on legal input; a failed check there is a `ProtocolError`."""
    message, out = result
    if message is not None:
        raise ProtocolError("checks", "state", f"a check in the env failed on a legal action: {message}")
    return out


def _check_out_of_range_actions(env: Any, state: Any, step: Any) -> None:
    """Step `state` with each of a few actions outside the action space; the state must stay finite.

    `step` is the `_checkified` step, so no new compile is needed. An env may
    refuse such actions instead, with a runtime check (`ValidateActions`).
    """
    before = jax.tree_util.tree_leaves_with_path(_comparable(state))
    for action in out_of_range_actions(env.action_space):
        try:
            refused, stepped = step(state, action)
        except (TypeError, ValueError, IndexError) as failure:
            raise ProtocolError(
                "out-of-range actions", "action", f"step with {action} raised {type(failure).__name__}: {failure}", 1
            ) from failure
        if refused is not None:
            continue
        for (path, old), new in zip(before, jax.tree_util.tree_leaves(_comparable(stepped))):
            if not jnp.issubdtype(jnp.result_type(old), jnp.inexact):
                continue
            if np.all(np.isfinite(np.asarray(old))) and not np.all(np.isfinite(np.asarray(new))):
                raise ProtocolError(
                    "out-of-range actions",
                    jax.tree_util.keystr(path).lstrip("."),
                    f"stepping with {action} (outside {env.action_space!r}) made it non-finite; give actions outside "
                    "the space one meaning, e.g. clip them into it with parallax.spaces.clip_action",
                    1,
                )


def check_env(env: Any, *, num_steps: int = 64, seed: int = 0) -> None:
    """Check `env` against the protocol; raise `ProtocolError` at the first violation.

    Runs `num_steps` random (legal, where masked) steps under `lax.scan`,
    resetting finished episodes, plus eager, `jit` and `vmap` calls, and one
    step with each of a few out-of-range actions.
    """
    _check_spaces(env)
    key = jax.random.key(seed)
    reset_key, step_key, scan_key = jax.random.split(key, 3)

    state = env.reset(key=reset_key)
    _check_fields(env, state, None)
    if int(state.step_count) != 0:
        raise ProtocolError("step_count", "step_count", f"must be 0 after reset, got {int(state.step_count)}")
    if not _trees_equal(state, env.reset(key=reset_key)):
        raise ProtocolError("determinism", "state", "two resets with the same key returned different states")
    if not bool(env.observation_space.contains(_observation(state))):
        raise ProtocolError(
            "observation_space", "observation", "the observation space does not contain the reset observation"
        )
    if isinstance(state, MARLState):
        _raise_first({k: np.asarray(v)[None] for k, v in _agent_rule_violations(state.agents, None).items()}, 0, env)

    expected = _signature(state)
    jit_step = _checkified(env.step)
    action = _random_action(env.action_space, state, step_key)
    next_state = env.step(state, action)
    _check_fields(env, next_state, 1)
    for got, how in (
        (_signature(next_state), "step"),
        (_signature(jax.jit(lambda k: env.reset(key=k))(reset_key)), "jit(reset)"),
        (_signature(_passed(jit_step(state, action))), "jit(step)"),
    ):
        if got != expected:
            raise ProtocolError(
                "stable pytree", "state", f"{how} differs from reset: {_describe_difference(expected, got)}"
            )

    # vmap is checked for the structure it gives, which tracing alone decides (a batching rule fails as it is
    # traced): run eagerly, a physics env's vmapped reset costs a compile per primitive, half a minute on a CPU.
    batched = jax.eval_shape(jax.vmap(lambda k: env.reset(key=k)), jax.random.split(reset_key, 2))
    for leaf, (shape, dtype) in zip(jax.tree_util.tree_leaves(batched), expected[1]):
        if (tuple(leaf.shape), leaf.dtype) != ((2, *shape), dtype):
            raise ProtocolError(
                "stable pytree",
                "state",
                f"vmap(reset) gave leaf {leaf.shape} {leaf.dtype}, expected (2, *{shape}) {dtype}",
            )

    def body(carry: Any, step_key: PRNGKeyArray) -> tuple[Any, dict[str, Array]]:
        return _step_violations(env, carry, step_key)

    try:
        _, flags = _passed(
            _checkified(lambda s, k: jax.lax.scan(body, s, jax.random.split(k, num_steps)))(state, scan_key)
        )
    except (TypeError, ValueError) as error:
        raise ProtocolError("stable pytree", "state", f"lax.scan over step failed: {error}") from error
    _raise_first({k: np.asarray(v) for k, v in flags.items()}, 1, env)
    _check_out_of_range_actions(env, state, jit_step)
