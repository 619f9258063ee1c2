"""Reading user-edited YAML files: UTF-8 only, aliases bounded, every failure a one-line ConfigError."""

from __future__ import annotations

import pytest

from ecngym.configs import CONFIG_DIR
from ecngym.error import ConfigError
from ecngym.yaml_files import MAX_YAML_NODES, read_yaml


def _bomb(levels: int) -> str:
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_it_is_built(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(9))  # 9**10 strings once expanded
    with pytest.raises(ConfigError) as err:
        read_yaml(path, "scenarios.x")
    assert str(err.value) == (f"scenarios.x: {path} is refused: its aliases expand it to more than "
                              f"{MAX_YAML_NODES:,} values (an alias bomb?); write the values out, or use fewer aliases")


def test_aliases_within_the_bound_read_as_plain_data(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(_bomb(3))  # 9**4 = 6,561 strings: read, every alias expanded
    data = read_yaml(path, "x")
    assert len(data["l3"]) == 9 and data["l3"][8][8][8] == ["lol"] * 9


def test_every_shipped_references_file_reads_within_the_bound():
    files = sorted((CONFIG_DIR / "suite" / "references").glob("*.yaml"))
    assert files
    for path in files:  # (safe_dump writes a list used twice as an alias)
        assert read_yaml(path, "references")["scenario"] == path.stem


@pytest.mark.parametrize(("text", "reason"), [
    ("a: &a [*a]\n", "an alias refers to a value that contains it (a recursive alias)"),
    ("[" * 1100 + "]" * 1100, "it is nested too deeply to read"),
])
def test_a_recursive_or_too_deep_document_is_refused(tmp_path, text, reason):
    path = tmp_path / "f.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_yaml(path, "f")
    assert str(err.value) == f"f: {path} is refused: {reason}"


def test_a_file_that_is_not_utf8_is_refused_naming_the_byte(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: h\u00f6st\n".encode("latin-1"))
    with pytest.raises(ConfigError) as err:
        read_yaml(path, "suite")
    assert str(err.value) == f"suite: {path} is not UTF-8 text (byte 0xf6 at offset 7); save it as UTF-8"


def test_malformed_yaml_and_a_missing_file_are_one_line_errors(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: [1, 2\nb: 3\n")
    with pytest.raises(ConfigError, match=f"^suite: {path} is not valid YAML: ") as err:
        read_yaml(path, "suite")
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match=f"^suite: cannot read {tmp_path / 'none.yaml'}: No such file"):
        read_yaml(tmp_path / "none.yaml", "suite")
