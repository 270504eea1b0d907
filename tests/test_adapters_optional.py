"""The adapters' packages stay optional: importing parallax loads none, and their tests skip without them."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOREIGN = ("gymnax", "brax", "mujoco", "mujoco_playground")
ADAPTER_TESTS = ("tests/test_adapter_gymnax.py", "tests/test_adapter_brax.py", "tests/test_adapter_mjx.py")


def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def hide_foreign_packages() -> str:
    """Source that makes every foreign package unimportable, as if it were not installed."""
    return "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in FOREIGN)


def test_importing_parallax_and_its_adapters_package_loads_no_foreign_package():
    result = python(
        "import sys, parallax, parallax.adapters\n"
        f"print(sorted(name for name in {FOREIGN!r} if name in sys.modules))"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_adapter_tests_skip_cleanly_without_their_packages():
    result = python(
        hide_foreign_packages()
        + "import pytest\n"
        + f"sys.exit(pytest.main(['-q', '-rs', '-p', 'no:cacheprovider', *{ADAPTER_TESTS!r}]))"
    )
    # Module-level skips leave nothing collected (exit code 5); a collection error would be 2.
    assert result.returncode == 5, result.stdout + result.stderr
    assert "3 skipped" in result.stdout and "error" not in result.stdout.lower(), result.stdout


def test_a_missing_package_names_the_extra_to_install():
    result = python(hide_foreign_packages() + "from parallax.adapters import GymnaxAdapter")
    assert result.returncode != 0
    assert "pip install 'parallax-zoo[gymnax]'" in result.stderr
