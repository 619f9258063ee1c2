"""Result files are replaced atomically: a failed or killed write leaves the previous version intact."""

from __future__ import annotations

import pytest

from ecngym.files import write_atomically, write_text_atomically


def test_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "eval.csv"
    write_text_atomically(path, "a\n1\n")
    write_text_atomically(path, "a\n1\n2\n")
    assert path.read_text() == "a\n1\n2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["eval.csv"]


def test_a_write_that_fails_midway_keeps_the_previous_version(tmp_path):
    path = tmp_path / "eval.csv"
    write_text_atomically(path, "a\n1\n")

    def half_then_fail(tmp):
        tmp.write_text("a\n")  # a partial file, as a kill during to_csv would leave
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, half_then_fail)
    assert path.read_text() == "a\n1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["eval.csv"]
