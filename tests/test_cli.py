"""The `parallax-zoo` command, called through its `main` as the console script does."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from parallax_zoo.cli import main


def test_list_prints_every_registered_id(capsys):
    import parallax_zoo

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for env_id in parallax_zoo.list_envs():
        assert env_id in out


def test_info_shows_spaces_and_limits(capsys):
    assert main(["info", "Race-v0"]) == 0
    out = capsys.readouterr().out
    assert "Race-v0" in out and "max_steps" in out and "Discrete(2, shape=(3,))" in out


def test_unknown_id_exits_2_with_close_matches(capsys):
    assert main(["info", "Rcae-v0"]) == 2
    assert "Did you mean: 'Race-v0'" in capsys.readouterr().err


def test_render_writes_a_gif_of_the_episode(tmp_path, capsys):
    out = tmp_path / "race.gif"
    assert main(["render", "Race-v0", "--out", str(out), "--steps", "12"]) == 0
    with Image.open(out) as gif:
        assert gif.n_frames >= 2
        frame = np.asarray(gif.convert("RGB"))
    assert frame.ndim == 3 and frame.shape[2] == 3
    assert not list(tmp_path.glob("*.tmp"))


def test_download_without_a_pin_says_how_to_get_one():
    with pytest.raises(SystemExit, match="no baseline pinned"):
        main(["download", "GridWorld-v0"])
