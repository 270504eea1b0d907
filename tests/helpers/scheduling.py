"""`--dist loadfile` handing out the longest test files first, so that the last files the workers run are short.

xdist alone hands out the files with the most tests first, which leaves the files of a few long tests (the notebooks,
pyright, the docs' snippets) for the end, where one of them keeps a worker busy while the other has nothing left.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling
from xdist.workermanage import WorkerController

LONGEST_FILES = (
    "tests/zoo/baselines/test_baselines.py",
    "tests/parallax/adapters/test_adapter_jaxmarl.py",
    "tests/parallax/adapters/test_adapter_brax.py",
    "tests/parallax/adapters/test_suite_rendering.py",
    "tests/project/test_typing.py",
    "tests/zoo/cli/test_console_script.py",
    "tests/zoo/baselines/test_train_safety.py",
    "tests/parallax/adapters/test_adapter_craftax.py",
    "tests/zoo/cli/test_cli_output.py",
    "tests/project/test_notebooks.py",
    "tests/zoo/cli/test_cli.py",
    "tests/zoo/agents/test_held_out_ladder.py",
    "tests/project/test_doc_snippets.py",
    "tests/project/test_docs.py",
)
"""Longest first, by the CPU seconds each took alone (18 to 100 s on a 2-core CPU); the files not named follow in
xdist's order. Each is spelt as xdist names a file's tests: its path from the repository's root."""

LONGEST_FILES_WITH_SLOW = (
    "tests/parallax/interop/test_interop_gymnasium.py",
    "tests/parallax/adapters/test_suite_rendering.py",
    "tests/parallax/interop/test_interop_pettingzoo.py",
    "tests/parallax/adapters/test_adapter_jaxmarl.py",
    "tests/parallax/adapters/test_adapter_mjx.py",
    "tests/parallax/adapters/test_adapter_craftax.py",
    "tests/parallax/adapters/test_adapter_xminigrid.py",
    "tests/parallax/adapters/test_adapter_pgx.py",
    "tests/parallax/adapters/test_adapter_brax.py",
    "tests/parallax/adapters/test_adapter_jumanji.py",
    "tests/zoo/baselines/test_baselines.py",
    "tests/zoo/agents/test_held_out_ladder.py",
    "tests/zoo/agents/test_ladder.py",
)
"""With --run-slow the per-id files lead instead (the Gymnasium checker over every single-agent id, drawing every id:
tens of minutes each), then the order above: a long file left to the end keeps one worker busy alone."""


class LongestFilesFirst(LoadFileScheduling):
    """xdist's file scheduling, with the next file given to a free worker the longest one left."""

    def _assign_work_unit(self, node: WorkerController) -> None:
        order = LONGEST_FILES_WITH_SLOW + LONGEST_FILES if self.config.getoption("--run-slow") else LONGEST_FILES
        named = [scope for scope in self.workqueue if scope in order]
        if named:
            self.workqueue.move_to_end(min(named, key=order.index), last=False)
        super()._assign_work_unit(node)
