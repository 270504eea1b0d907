"""The adapters' packages stay optional: importing parallax loads none, and their tests skip without them."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FOREIGN = ("gymnax", "brax", "mujoco", "mujoco_playground", "pgx", "jumanji", "jaxmarl", "xminigrid", "craftax")
ADAPTER_TESTS = (
    "tests/parallax/adapters/test_adapter_gymnax.py",
    "tests/parallax/adapters/test_adapter_brax.py",
    "tests/parallax/adapters/test_adapter_mjx.py",
    "tests/parallax/adapters/test_adapter_pgx.py",
    "tests/parallax/adapters/test_adapter_jumanji.py",
    "tests/parallax/adapters/test_adapter_xminigrid.py",
    "tests/parallax/adapters/test_adapter_jaxmarl.py",
    "tests/parallax/adapters/test_adapter_craftax.py",
)


VENV_PIP = os.path.relpath(os.path.abspath(Path(sys.executable).with_name("pip")), ROOT)
"""The pip of the interpreter running the tests, as the hint shows it from the clone's root (.venv/bin/pip)."""


def test_the_install_command_installs_this_clone_with_the_extra():
    result = python("from parallax.install_command import install_command\nprint(install_command('pgx'))")
    pip, *arguments = shlex.split(result.stdout)
    assert Path(ROOT, pip).is_file() and Path(ROOT, pip).parent == Path(sys.executable).parent
    assert arguments == ["install", "-e", ".[pgx]"] and (ROOT / "pyproject.toml").is_file()
    elsewhere = subprocess.run(
        [sys.executable, "-c", "from parallax.install_command import install_command\nprint(install_command('pgx'))"],
        cwd=Path(ROOT).parent,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert shlex.split(elsewhere.stdout)[1:] == ["install", "-e", f"{ROOT.relative_to(ROOT.parent)}[pgx]"]


def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def hide_foreign_packages() -> str:
    """Source that makes every foreign package unimportable, as if it were not installed."""
    return "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in FOREIGN)


def test_importing_parallax_and_its_adapters_package_loads_no_foreign_package():
    result = python(
        f"import sys, parallax, parallax.adapters\nprint(sorted(name for name in {FOREIGN!r} if name in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_importing_the_zoo_and_listing_its_ids_loads_no_foreign_package():
    result = python(
        "import sys, parallax_zoo\n"
        "ids = parallax_zoo.list_envs()\n"
        "print(len(parallax_zoo.list_envs(namespace='pgx')), "
        "parallax_zoo.registry_table('xminigrid').count('xminigrid/'))\n"
        f"print(sorted(name for name in {FOREIGN!r} if name in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    counts, loaded = result.stdout.strip().splitlines()
    assert counts == "20 44" and loaded == "[]"


def test_without_the_suites_the_registry_lists_them_and_make_names_the_extra():
    result = python(
        hide_foreign_packages()
        + "import parallax_zoo\n"
        + "from parallax_zoo.catalogue.foreign_envs import MissingExtraError\n"
        + "print(len(parallax_zoo.list_envs()) > 100)\n"
        + "for env_id in ('pgx/go_9x9', 'jumanji/Snake-v1', 'xminigrid/MiniGrid-DoorKey-5x5'):\n"
        + "    try:\n"
        + "        parallax_zoo.make(env_id)\n"
        + "    except MissingExtraError as error:\n"
        + "        print(error)\n"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "True" and len(lines) == 4
    for line, extra in zip(lines[1:], ("pgx", "jumanji", "xminigrid")):
        assert f"Install it with: {VENV_PIP} install -e '.[{extra}]'" in line  # this clone, from its root


def test_the_cli_reports_a_missing_suite_as_a_one_line_user_error():
    result = python(
        hide_foreign_packages() + "from parallax_zoo.cli.main import main\nsys.exit(main(['info', 'pgx/go_9x9']))"
    )
    assert result.returncode == 2, result.stdout + result.stderr
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and message.startswith("parallax-zoo info: pgx/go_9x9 needs 'pgx'")
    assert f"Install it with: {VENV_PIP} install -e '.[pgx]'" in message


def test_adapter_tests_skip_cleanly_without_their_packages():
    result = python(
        hide_foreign_packages()
        + "import pytest\n"
        + f"sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', *{ADAPTER_TESTS!r}]))"
    )
    # Module-level skips leave nothing collected (exit code 5); a collection error would be 2.
    assert result.returncode == 5, result.stdout + result.stderr
    assert f"{len(ADAPTER_TESTS)} skipped" in result.stdout and "error" not in result.stdout.lower(), result.stdout


def test_a_missing_package_names_the_extra_to_install():
    result = python(hide_foreign_packages() + "from parallax.adapters import GymnaxAdapter")
    assert result.returncode != 0
    assert f"Install it with: {VENV_PIP} install -e '.[gymnax]'" in result.stderr
