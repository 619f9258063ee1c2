"""Result files are replaced atomically: a failed or killed write leaves the previous version intact."""

from __future__ import annotations

import os
import re
import stat

import pytest

from ecngym.error import ConfigError
from ecngym.files import check_output_path, check_writable_directory, write_atomically, write_text_atomically


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


# /proc takes no new files (not even root's); a path under a file fails on every system
UNWRITABLE = [pytest.param("/proc/ecngym.csv", "No such file or directory", "creating a file in '/proc'",
                           marks=pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc")),
              pytest.param("{tmp}/a_file/ecngym.csv", "", "")]


@pytest.mark.parametrize(("path", "reason", "step"), UNWRITABLE)
def test_an_output_path_that_cannot_be_written_is_named_by_the_check(tmp_path, path, reason, step):
    # the check passed, and the writer failed later with a raw FileNotFoundError / FileExistsError
    (tmp_path / "a_file").write_text("x")
    path = path.format(tmp=tmp_path)
    if "a_file" in path:
        match = rf"^--out: got '{re.escape(path)}', which lies under the file '.*a_file'; expected the path"
    else:
        match = rf"^--out: cannot write '{re.escape(path)}': {reason} \({re.escape(step)}\)$"
    with pytest.raises(ConfigError, match=match):
        check_output_path("--out", path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # the probe leaves nothing behind
    check_output_path("--out", tmp_path / "new" / "dir" / "x.csv")  # folders to be made are fine
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


@pytest.mark.parametrize(("path", "reason", "step"), UNWRITABLE)
def test_a_directory_nothing_can_be_written_to_is_named_by_the_check(tmp_path, path, reason, step):
    # (a results store or logger folder, written at the end of a command's work)
    (tmp_path / "a_file").write_text("x")
    path = path.format(tmp=tmp_path).removesuffix(".csv")
    if "a_file" in path:
        match = rf"^results.dir: got '{re.escape(path)}', which lies under the file '.*a_file'; expected a store"
    else:
        match = rf"^results.dir: cannot write '{re.escape(path)}': {reason} \({re.escape(step)}\)$"
    with pytest.raises(ConfigError, match=match):
        check_writable_directory("results.dir", path, "a store")
    with pytest.raises(ConfigError, match=r"^results.dir: got '.*a_file', which is a file; expected a store"):
        check_writable_directory("results.dir", tmp_path / "a_file", "a store")
    assert check_writable_directory("results.dir", tmp_path / "new" / "store") == tmp_path / "new" / "store"
    assert check_writable_directory("results.dir", tmp_path) == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # the probe leaves nothing, makes nothing


@pytest.mark.parametrize(("path", "reason", "step"), UNWRITABLE)
def test_the_writer_names_a_path_it_cannot_write(tmp_path, path, reason, step):
    (tmp_path / "a_file").write_text("x")
    path = path.format(tmp=tmp_path)
    if step:
        match = rf"^output: cannot write '{re.escape(path)}': {reason} \({re.escape(step)}\)$"
    else:
        match = rf"^output: cannot make the folder '{re.escape(str(tmp_path / 'a_file'))}': "
    with pytest.raises(ConfigError, match=match):
        write_text_atomically(path, "a\n1\n", "output")


def test_a_failed_rename_keeps_what_is_there_and_leaves_no_temporary(tmp_path):
    (tmp_path / "eval.csv").mkdir()  # a folder where the file goes: the rename fails
    (tmp_path / "eval.csv" / "kept").write_text("results")
    with pytest.raises(ConfigError, match=r"^path: cannot write '.*eval.csv': .*\(renaming the written file to it\)"):
        write_text_atomically(tmp_path / "eval.csv", "a\n1\n")
    assert (tmp_path / "eval.csv" / "kept").read_text() == "results"
    assert [p.name for p in tmp_path.iterdir()] == ["eval.csv"]


def test_missing_folders_are_made_and_the_file_has_the_umasks_mode(tmp_path):
    old = os.umask(0o027)
    try:
        path = write_text_atomically(tmp_path / "a" / "b" / "eval.csv", "x")
    finally:
        os.umask(old)
    assert path.read_text() == "x" and stat.S_IMODE(path.stat().st_mode) == 0o640  # not mkstemp's 0o600
