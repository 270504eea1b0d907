"""Every ```python block of README.md and docs/*.md runs as written, and every `parallax-zoo` command in their shell
blocks parses. A block marked `<!-- fragment -->` on the line before it is a deliberate excerpt and is left out; one
marked `<!-- slow -->` (GPU-sized training) runs only with --run-slow.

The blocks of one page run in order in one fresh interpreter (a page reads top to bottom), in a scratch folder.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FRAGMENT = "<!-- fragment -->"
SLOW = "<!-- slow -->"
FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    fragment: bool
    slow: bool


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of one Markdown page, each with its language and whether it is marked a fragment."""
    found: list[Block] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        before = next((lines[i].strip() for i in range(index - 1, -1, -1) if lines[i].strip()), "")
        code = "\n".join(lines[index + 1 : end])
        found.append(Block(page, index + 1, opening.group(1), code, before == FRAGMENT, before == SLOW))
        index = end + 1
    return found


def python_blocks(page: Path, slow: bool = False) -> list[Block]:
    """The page's runnable Python blocks; the slow ones only when `slow`."""
    return [
        block
        for block in blocks(page)
        if block.language == "python" and not block.fragment and (slow or not block.slow)
    ]


RUNNER = """
import os, sys, tempfile, traceback
failed = []
for page, blocks in PAGES:
    os.chdir(tempfile.mkdtemp(prefix="snippets-"))
    namespace = {"__name__": "__main__"}
    for line, code in blocks:
        try:
            exec(compile(code, f"{page}:{line}", "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            failed.append(f"{page}:{line}")
            break  # the page's later blocks build on this one
if failed:
    print("SNIPPETS FAILED: the blocks at " + ", ".join(failed), file=sys.stderr)
    sys.exit(1)
"""


def run_pages(pages: list[Path], slow: bool = False) -> subprocess.CompletedProcess[str]:
    """Every runnable Python block of the pages, each page in order in a namespace and a folder of its own, all in
    one fresh interpreter (so jax and the zoo are imported once)."""
    listed = [
        (str(page.relative_to(ROOT)), [(block.line, block.code) for block in python_blocks(page, slow)])
        for page in pages
    ]
    program = f"PAGES = {listed!r}\n{RUNNER}"
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "JAX_PLATFORMS": "cpu", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=1800
    )


def check_most_python_blocks_are_runnable_not_fragments() -> None:
    every = [block for page in PAGES for block in blocks(page) if block.language == "python"]
    left_out = [f"{block.page.name}:{block.line}" for block in every if block.fragment or block.slow]
    assert len(every) >= 20 and len(left_out) <= len(every) // 4, left_out
    unlabelled = [
        f"{page.name}:{block.line}"
        for page in PAGES
        for block in blocks(page)
        if not block.language and block.code.lstrip().startswith(("import ", "from "))
    ]
    assert not unlabelled, f"code blocks without a language are not checked: {unlabelled}"


def test_python_blocks_run_as_written():
    check_most_python_blocks_are_runnable_not_fragments()
    process = run_pages(PAGES)
    assert process.returncode == 0, process.stderr[-6000:]


@pytest.mark.slow
def test_python_blocks_run_as_written_slow_ones_too():
    process = run_pages([page for page in PAGES if any(block.slow for block in blocks(page))], slow=True)
    assert process.returncode == 0, process.stderr[-6000:]


def cli_commands() -> list[tuple[str, list[str]]]:
    """Every `parallax-zoo ...` line of the pages' shell blocks, as (where, arguments); `<commit>` reads as a word."""
    found = []
    for page in PAGES:
        for block in blocks(page):
            if block.language not in ("bash", "sh", "console", "shell"):
                continue
            for offset, line in enumerate(block.code.splitlines(), 1):
                command = re.sub(r"<[^>]*>", "PLACEHOLDER", line.split("  #")[0]).strip()
                if not command.startswith("parallax-zoo "):
                    continue
                found.append((f"{page.name}:{block.line + offset}", shlex.split(command)[1:]))
    return found


def check_every_parallax_zoo_command_in_the_pages_parses() -> None:
    from parallax_zoo.cli.main import build_parser

    assert len(cli_commands()) >= 10
    parser = build_parser()
    refused = []
    for where, arguments in cli_commands():
        try:
            parser.parse_args(arguments)
        except SystemExit:
            refused.append(f"{where}: parallax-zoo {shlex.join(arguments)}")
    assert not refused, refused


def test_the_set_up_puts_parallax_zoo_on_path_for_the_commands_that_follow():
    """After the README's set-up, `parallax-zoo` is on PATH, and every command the pages show parses."""
    set_up = next(block for block in blocks(ROOT / "README.md") if block.language == "bash")
    activate = [line.split("#")[0].strip() for line in set_up.code.splitlines() if line.startswith("source ")]
    assert activate, f"README's set-up block says nothing that puts parallax-zoo on PATH:\n{set_up.code}"
    check_every_parallax_zoo_command_in_the_pages_parses()
    if not (ROOT / ".venv" / "bin" / "activate").is_file():
        pytest.skip("no .venv here: `make test` creates it")
    bare = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONHOME")}
    shell = subprocess.run(
        ["bash", "-c", f"{activate[0]} && parallax-zoo --version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**bare, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert shell.returncode == 0 and shell.stdout.startswith("parallax-zoo "), shell.stderr
