"""Training across processes and hosts with `jax.distributed` from the command line (docs/scaling.md, "Across
hosts, from the command line"): every process joins one run whose mesh spans all their devices, and process 0
alone writes the folders, the pin and the card."""

from __future__ import annotations

import jax

from parallax_zoo.errors import UserError

JOIN_TIMEOUT_S = 300
"""How long a process waits for all the others to join before it gives up (JAX's `initialization_timeout`)."""


class ProcessSetupError(UserError):
    """The processes of a distributed run could not be started as given."""


def join_processes(
    coordinator: str | None = None, num_processes: int | None = None, process_id: int | None = None
) -> int:
    """`jax.distributed.initialize`, before anything else touches a device: with all three given, explicitly; with
    none, from the cluster launcher's environment (SLURM, Open MPI, Cloud TPU). Returns the number of processes."""
    given = {"--coordinator": coordinator, "--num-processes": num_processes, "--process-id": process_id}
    if None in given.values() and any(value is not None for value in given.values()):
        missing = ", ".join(flag for flag, value in given.items() if value is None)
        raise ProcessSetupError(
            f"{missing} missing: --coordinator, --num-processes and --process-id go together; give all three, or "
            "--distributed alone where a cluster launcher (SLURM, Open MPI) started the processes"
        )
    if num_processes is not None and process_id is not None and not 0 <= process_id < num_processes:
        raise ProcessSetupError(
            f"--process-id {process_id}: give 0 to {num_processes - 1} for --num-processes {num_processes}"
        )
    try:
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=num_processes,
            process_id=process_id,
            initialization_timeout=JOIN_TIMEOUT_S,
        )
    except ValueError as error:  # no launcher found in the environment, and nothing given
        raise ProcessSetupError(
            f"--distributed found no cluster launcher's environment (SLURM, Open MPI) to join ({error}); start the "
            "processes with one, or give --coordinator HOST:PORT --num-processes N --process-id I on each"
        ) from error
    except RuntimeError as error:  # jax already running, or the others never came
        raise ProcessSetupError(f"the processes could not join one run: {error}".splitlines()[0]) from error
    return jax.process_count()


def writes_files() -> bool:
    """Whether this process writes a run's files: process 0 only, so N processes write one folder once."""
    return jax.process_index() == 0


__all__ = ["JOIN_TIMEOUT_S", "ProcessSetupError", "join_processes", "writes_files"]
