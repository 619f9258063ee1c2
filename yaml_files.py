"""Reading a YAML file a user can edit (a suite, a scenario, a references file) with bounded effort.

``yaml.safe_load`` builds no objects but plain data, yet two kinds of file still get past it badly:
a file that is not UTF-8 (a raw ``UnicodeDecodeError`` traceback) and an alias bomb ("billion
laughs": each alias repeats an anchor made of aliases, so a few hundred bytes stand for billions
of values). PyYAML shares the aliased objects, so loading is quick, but everything that walks the
data afterwards (validation, hashing, printing) visits every repetition and runs for hours.
:func:`load_yaml` counts the values the document stands for, aliases expanded, before building
it, and refuses one past :data:`MAX_YAML_NODES`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ecngym.error import ConfigError

#: Most YAML values (mappings, lists, scalars, keys included) a file may stand for once its aliases
#: are expanded: 100x the largest shipped file (a references file holds about 1,000).
MAX_YAML_NODES = 100_000


class YamlTooLarge(yaml.YAMLError):
    """A YAML document refused for its size: past :data:`MAX_YAML_NODES` values, recursive or too deep."""


def _expanded_size(root: yaml.Node, limit: int) -> int:
    """The number of values ``root`` stands for with every alias expanded (a shared node counts per use).

    Raises:
        YamlTooLarge: Past ``limit``, or on a node that contains itself (a recursive alias).
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise YamlTooLarge("an alias refers to a value that contains it (a recursive alias)")
        open_nodes.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = node.value
        else:
            children = []
        for child in children:
            total += size(child)
            if total > limit:
                raise YamlTooLarge(f"its aliases expand it to more than {limit:,} values (an alias bomb?); "
                                "write the values out, or use fewer aliases")
        open_nodes.discard(key)
        sizes[key] = total
        return total

    return size(root)


class _BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that checks the composed document's expanded size before building it."""

    def compose_document(self) -> yaml.Node:
        """The document's node graph, refused past :data:`MAX_YAML_NODES` values."""
        node = super().compose_document()
        _expanded_size(node, MAX_YAML_NODES)
        return node


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` of ``text``, refusing an alias expansion past :data:`MAX_YAML_NODES` values.

    Raises:
        YamlTooLarge: For a document past the limit once its aliases are expanded, with a recursive
            alias, or nested too deeply to read.
        yaml.YAMLError: On malformed YAML.
    """
    try:
        return yaml.load(text, Loader=_BoundedLoader)  # noqa: S506 (a SafeLoader)
    except RecursionError:
        raise YamlTooLarge("it is nested too deeply to read") from None


def read_yaml(path: str | Path, field: str) -> Any:
    """A YAML file's contents (:func:`load_yaml`); every way it can fail is a ConfigError naming ``field``.

    Args:
        path: The file.
        field: The option or config entry that names the file (``scenarios.<name>``, ``suite``).

    Raises:
        ConfigError: Naming ``field`` and the file if it cannot be read, is not UTF-8 text, is not
            valid YAML, or stands for more than :data:`MAX_YAML_NODES` values once its aliases are
            expanded.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(field, f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(field, f"{path} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
                                 "save it as UTF-8") from None
    try:
        return load_yaml(text)
    except YamlTooLarge as exc:
        raise ConfigError(field, f"{path} is refused: {exc}") from None
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())  # (PyYAML's messages span lines: the error is one line)
        raise ConfigError(field, f"{path} is not valid YAML: {reason}") from None
