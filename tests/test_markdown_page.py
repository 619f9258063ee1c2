"""``--markdown PATH``: the pages the benches and reproductions write for the docs site."""

from __future__ import annotations

import re

import pytest
from rich.markup import escape
from rich.table import Table

from ecngym import __version__
from ecngym.cli import main
from ecngym.markdown_page import MarkdownPage, machine, page_console, table_markdown
from ecngym.validation import Bytes, OneOf, Real, Whole, describe_field, describe_type


def test_a_rich_table_becomes_a_markdown_table_with_its_title_alignment_and_plain_cells():
    table = Table(title="speed [b]now[/b]")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("[b]a|b[/b]", "1.50")
    table.add_row("x < y", "[red]no[/]")
    text = table_markdown(table)
    lines = text.splitlines()
    assert lines[0] == "### speed now"
    assert re.fullmatch(r"\| figure +\| +value \|", lines[2])
    assert re.fullmatch(r"\|:-+\|-+:\|", lines[3])  # left, right
    assert "a\\|b" in lines[4] and "1.50" in lines[4]  # the pipe escaped, the number kept as printed
    assert "x &lt; y" in lines[5] and "no" in lines[5] and "[red]" not in text


def test_a_page_is_stamped_with_version_command_machine_and_keeps_print_order(tmp_path):
    page = MarkdownPage("Title", ["ecngym", "bench", "env", "--steps", "10"], "What it measures.")
    console = page_console(page, quiet=True)
    table = Table(title="t")
    table.add_column("c")
    table.add_row("1")
    console.print(escape("before [ours]"))  # printed text is rich markup: brackets escaped, as the benches do
    console.print(table)
    page.heading("next")
    out = page.write(tmp_path / "sub" / "p.md")
    text = out.read_text()
    assert text.startswith("# Title\n")
    assert "`ecngym bench env --steps 10`" in text
    assert f"ecngym {__version__}" in text and machine().split(",")[0] in text
    order = [text.index(s) for s in ("What it measures.", "before \\[ours\\]", "### t", "## next")]
    assert order == sorted(order)


def test_reproduce_writes_its_tables_as_a_page(tmp_path, capsys):
    out = tmp_path / "repro.md"
    assert main(["reproduce", "pred-fcs", "--quick", "--json-only", "--markdown", str(out)]) == 0
    assert capsys.readouterr().out.count("\n") == 1  # --json-only: the JSON line only on the terminal
    text = out.read_text()
    assert f"`ecngym reproduce pred-fcs --quick --json-only --markdown {out}`" in text
    assert "## pred-fcs" in text
    header = (r"^\| claim +\| setting +\| metric +\| paper +\| ours +\| seeds / 95% CI +\| direction +"
              r"\| within bar +\|$")
    assert re.search(header, text, re.M)
    for claim in ("red_grows", "fcs_n_flat", "fcs_square_throughput"):
        for host in ("lean", "linux"):
            assert re.search(rf"^\| {claim}_{host} ", text, re.M), (claim, host)
    assert "Claims: direction holds" in text


def test_bench_scale_writes_its_table_as_a_page(tmp_path):
    out = tmp_path / "scale.md"
    assert main(["bench", "scale", "--k", "2", "--loads", "0.3", "--sim-time", "20us", "--json-only",
                 "--markdown", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Fabric cost vs size and load\n")
    assert re.search(r"^\| +k \(hosts\) \| +load \|", text, re.M)  # right-aligned columns, as printed
    assert re.search(r"^\| +2 \(2\) \| +30% \|", text, re.M)
    assert "bare ns-3 event loop in this run" in text


@pytest.mark.parametrize("argv", [["reproduce", "pred-fcs", "--markdown"], ["bench", "scale"], ["bench", "env"],
                                  ["bench", "train"], ["bench", "fabric"]])
def test_a_markdown_path_that_is_no_md_file_is_refused_before_anything_runs(argv, tmp_path, capsys):
    args = [*argv, str(tmp_path / "page.txt")] if argv[-1] == "--markdown" else [*argv, "--markdown",
                                                                                 str(tmp_path / "page.txt")]
    assert main(args) == 2
    assert "--markdown: got" in capsys.readouterr().err
    assert not (tmp_path / "page.txt").exists()


def test_reproduce_all_and_a_paper_or_list_contradict(capsys):
    assert main(["reproduce", "--all", "pred"]) == 2
    assert "--all: runs every paper; got the paper 'pred' too" in capsys.readouterr().err
    assert main(["reproduce", "--list", "--all"]) == 2
    assert "--list: names the papers and runs none; got --all too" in capsys.readouterr().err


def test_describe_type_reads_the_ranges_from_the_validators():
    assert describe_type(Whole(1, 8)) == "whole number in [1, 8]"
    assert describe_type(Real(0, 1, low_open=True)) == "number in (0, 1]"
    assert describe_type(OneOf("port", "switch")) == "one of 'port', 'switch'"
    assert describe_type(list[Whole(1)]) == "list of whole number in [1, inf)"
    assert describe_type(Whole(0) | None) == "whole number in [0, inf) or null"
    assert describe_type(Bytes(low=1, high=10)).startswith('size (bytes or "5KB") in [1, 10] B')


def test_describe_field_of_a_model_field():
    from ecngym.agents.config import LaecnConfig

    fields = LaecnConfig.model_fields
    assert describe_field(fields["trigger_penalty"]) == "number in [0, 1000.0]"
    assert describe_field(fields["policy_net"]) == "list of whole number in [1, 65536] (at least 1)"
    assert describe_field(fields["initial_trigger"]) == "true or false"
