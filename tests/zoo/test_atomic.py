"""Atomic writes: a failure leaves the old file and no temporary behind."""

import pytest

from parallax_zoo.atomic import atomic_write, write_text_atomic


def test_write_replaces_content_and_leaves_no_temporary(tmp_path):
    path = write_text_atomic(tmp_path / "a" / "note.txt", "first")
    write_text_atomic(path, "second")
    assert path.read_text() == "second"
    assert [p.name for p in path.parent.iterdir()] == ["note.txt"]


def test_failed_write_keeps_the_old_file(tmp_path):
    path = write_text_atomic(tmp_path / "note.txt", "old")

    def half_then_fail(temporary):
        temporary.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(path, half_then_fail)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["note.txt"]


def test_written_files_get_the_usual_permissions(tmp_path):
    import os

    mask = os.umask(0o022)
    try:
        path = write_text_atomic(tmp_path / "note.txt", "x")
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o644
