"""Parallax: a minimal, pure-functional protocol for JAX RL environments (docs/protocol.md).

Importing it loads jax and nothing heavier; adapters import their foreign
package only when used.
"""

from parallax import spaces
from parallax.checker import ProtocolError, check_env
from parallax.core import (
    Agents,
    BaseEnv,
    Env,
    MARLEnv,
    MARLState,
    MARLVectorEnv,
    State,
    VectorEnv,
)
from parallax.spaces import Box, Discrete, MultiBinary, MultiDiscrete, PyTreeSpace, Space, stack_space
from parallax.version import __version__
from parallax.wrappers import (
    AutoResetWrapper,
    EpisodeStats,
    RecordEpisodeStatistics,
    TimeLimit,
    ValidateActions,
    VmapWrapper,
    Wrapper,
)

__all__ = [
    "Agents",
    "__version__",
    "AutoResetWrapper",
    "BaseEnv",
    "Box",
    "Discrete",
    "Env",
    "EpisodeStats",
    "MARLEnv",
    "MARLState",
    "MARLVectorEnv",
    "MultiBinary",
    "MultiDiscrete",
    "ProtocolError",
    "PyTreeSpace",
    "RecordEpisodeStatistics",
    "Space",
    "State",
    "TimeLimit",
    "ValidateActions",
    "VectorEnv",
    "VmapWrapper",
    "Wrapper",
    "check_env",
    "spaces",
    "stack_space",
]
