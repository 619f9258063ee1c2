"""Flow-size distributions: shipped CDFs sample correctly; bad CDF files are rejected precisely."""

import re

import numpy as np
import pytest
from scipy import stats

from ecngym.error import ConfigError
from ecngym.workloads import BUILTIN_CDFS, fixed_size, generate_trace, get_distribution, load_cdf_file

N = 20_000


@pytest.mark.parametrize("name", sorted(BUILTIN_CDFS))
def test_samples_match_the_piecewise_linear_cdf(name):
    dist = get_distribution(name)
    # 1. the inverse-CDF draws (before rounding) follow the piecewise-linear CDF: scipy's KS test
    u = np.random.default_rng(7).random(N)
    continuous = dist.quantile(u)
    assert stats.kstest(continuous, dist.cdf_at).pvalue > 0.001
    # 2. the sampler is exactly those draws rounded up to whole bytes (>= 1), same stream
    sizes = dist.sample(np.random.default_rng(7), N)
    assert sizes.dtype == np.int64 and sizes.min() >= 1
    np.testing.assert_array_equal(sizes, np.maximum(1, np.ceil(continuous)))
    # 3. and the whole-byte sizes match the CDF where it is defined for them: P(S <= k) = F(k) for
    # whole k >= 1 (KS distance on the CDF's points and the sample's quantiles; 1.63/sqrt(n) is
    # the 1 % critical value)
    grid = np.unique(np.concatenate([np.ceil(dist.sizes_bytes), np.quantile(sizes, np.linspace(0, 1, 501))]))
    grid = grid[grid >= 1]
    ecdf = np.searchsorted(np.sort(sizes), grid, side="right") / N
    assert np.max(np.abs(ecdf - dist.cdf_at(grid))) < 1.63 / np.sqrt(N)


def test_the_ks_check_rejects_a_wrong_distribution():
    websearch, datamining = get_distribution("websearch"), get_distribution("datamining")
    draws = websearch.quantile(np.random.default_rng(1).random(N))
    assert stats.kstest(draws, datamining.cdf_at).pvalue < 1e-6


def test_means_match_the_literature():
    assert get_distribution("websearch").mean_bytes == pytest.approx(1.711e6, rel=0.01)  # HPCC README
    assert get_distribution("datamining").mean_bytes == pytest.approx(12.7e6, rel=0.05)  # algorithms/pred.md §7
    assert get_distribution("pred_workload1").mean_bytes == pytest.approx(4_500)
    big = get_distribution("google_rpc").sample(np.random.default_rng(0), 100_000)
    assert np.mean(big) == pytest.approx(get_distribution("google_rpc").mean_bytes, rel=0.1)


def test_fixed_and_custom(tmp_path):
    assert set(get_distribution("fixed", size_bytes=64_000).sample(np.random.default_rng(0), 50)) == {64_000}
    f = tmp_path / "cdf.txt"
    f.write_text("# fraction format\n1000 0.0\n2000 0.5\n4000 1.0\n")
    d = get_distribution("custom", cdf_file=f)
    s = d.sample(np.random.default_rng(0), 10_000)
    assert 1000 <= s.min() and s.max() <= 4000
    assert np.mean(s <= 2000) == pytest.approx(0.5, abs=0.02)


def test_trafficgenerator_fraction_format_equals_hpcc_percent_format(tmp_path):
    # TrafficGenerator's DCTCP_CDF.txt layout: column-aligned, CDF as a fraction ending at 1
    tg = tmp_path / "DCTCP_CDF.txt"
    tg.write_text("0     0\n10000 0.15\n20000 0.2\n30000 0.3\n50000 0.4\n80000 0.53\n200000 0.6\n"
                  "1000000 0.7\n2000000 0.8\n5000000 0.9\n10000000 0.97\n30000000 1\n")
    mine, shipped = load_cdf_file(tg), get_distribution("websearch")
    np.testing.assert_allclose(mine.cdf, shipped.cdf)
    np.testing.assert_array_equal(mine.sizes_bytes, shipped.sizes_bytes)


def test_an_atom_at_the_first_point(tmp_path):
    f = tmp_path / "atom.txt"
    f.write_text("100 40\n200 100\n")  # 40 % of flows are exactly 100 B
    s = load_cdf_file(f).sample(np.random.default_rng(3), 10_000)
    assert s.min() == 100 and np.mean(s == 100) == pytest.approx(0.4, abs=0.02)


@pytest.mark.parametrize(
    "content,line",
    [("0 0\n100 50\n50 60\n200 100\n", 3),          # size decreases
     ("0 0\n100 60\n200 50\n300 100\n", 3),         # cdf decreases
     ("# header\n0 0\n100 abc\n200 100\n", 3),      # malformed number (comment lines count)
     ("0 0\n100\n200 100\n", 2),                    # missing column
     ("0 0 9\n100 100\n", 1),                       # a third column (was ignored)
     ("0 0\n100 50 # ok\n150 60 70\n200 100\n", 3),  # (a comment is no column)
     ("0 0\n-5 10\n200 100\n", 2),                  # negative size
     ("0 0\n100 50\n200 90\n", 3)],                 # does not end at 100 or 1
)
def test_bad_cdf_file_names_the_file_and_line(tmp_path, content, line):
    f = tmp_path / "bad.txt"
    f.write_text(content)
    with pytest.raises(ConfigError, match=rf"workload\.cdf_file \(.*bad\.txt\).*line {line}\b"):
        load_cdf_file(f)


@pytest.mark.parametrize("content", ["", "# only a comment\n", "0 100\n"])
def test_cdf_file_with_too_few_points(tmp_path, content):
    f = tmp_path / "short.txt"
    f.write_text(content)
    with pytest.raises(ConfigError, match="workload.cdf_file.*at least two points"):
        load_cdf_file(f)


def test_missing_cdf_file(tmp_path):
    with pytest.raises(ConfigError, match=r"^workload\.cdf_file: no file at '.*nope\.txt'; expected a CDF file"):
        get_distribution("custom", cdf_file=tmp_path / "nope.txt")
    with pytest.raises(ConfigError, match="workload.cdf_file"):
        get_distribution("custom")


@pytest.mark.parametrize("path,message", [
    ([1], r"^workload\.cdf_file: got \[1\], expected the path of a CDF file \('size_bytes cdf' lines\)$"),
    (5, r"^workload\.cdf_file: got 5, expected the path of a CDF file"),
    ("", r"^workload\.cdf_file: got '', expected the path of a CDF file"),
    ("DIR", r"^workload\.cdf_file: got '.*', which is a directory; expected a CDF file"),
    ("BINARY", r"^workload\.cdf_file \(.*binary\.cdf\): cannot read as a CDF file: 'utf-8' codec can't decode"),
])
def test_a_cdf_file_that_is_no_text_file_path_is_a_config_error(tmp_path, path, message):
    # 'ecngym eval +env.kwargs.workload.workload=custom +env.kwargs.workload.cdf_file=[1]' exited 1 with
    # a TypeError from Path([1]); a binary file raised UnicodeDecodeError
    (tmp_path / "binary.cdf").write_bytes(bytes(range(256)))
    path = {"DIR": tmp_path, "BINARY": tmp_path / "binary.cdf"}.get(path, path) if isinstance(path, str) else path
    with pytest.raises(ConfigError, match=message):
        get_distribution("custom", cdf_file=path)


def test_unknown_workload_lists_the_known_and_suggests_the_closest():
    with pytest.raises(ConfigError, match=r"workload\.name.*'datamining'.*Did you mean 'websearch'"):
        get_distribution("websaerch")
    with pytest.raises(ConfigError, match="workload.name.*no size distribution"):
        get_distribution("none")


def test_a_flat_cdf_run_is_a_gap(tmp_path):
    f = tmp_path / "gap.txt"
    f.write_text("0 0\n1000 50\n5000 50\n6000 100\n")  # no flow sizes in (1000, 5000]
    d = load_cdf_file(f)
    assert d.quantile(0.5) == 5000.0  # the documented choice: a flat run maps to its largest size
    assert d.quantile(0.25) == pytest.approx(500.0) and d.quantile(0.75) == pytest.approx(5500.0)
    s = d.sample(np.random.default_rng(0), 10_000)
    assert not ((s > 1000) & (s <= 5000)).any()


@pytest.mark.parametrize("size,message", [
    (float("nan"), r"^workload\.size: expected a whole number, got nan$"),
    (float("inf"), r"^workload\.size: expected a whole number, got inf$"),
    (None, r"^workload\.size: expected a whole number, got None$"),
    (True, r"^workload\.size: expected a whole number, got True$"),
    ("64KB", r"^workload\.size: expected a whole number, got '64KB'$"),
    (2.5, r"^workload\.size: expected a whole number, got 2\.5$"),
    (0, r"^workload\.size: got 0, allowed range is \[1, 9007199254740992\]$"),
    (2**53 + 1, r"^workload\.size: got 9007199254740993, allowed range is \[1, 9007199254740992\]$"),
])
def test_a_fixed_size_that_is_no_whole_byte_count_is_a_config_error(size, message):
    # fixed_size(nan) raised ValueError (cannot convert float NaN to integer), inf an OverflowError,
    # None a TypeError
    with pytest.raises(ConfigError, match=message):
        fixed_size(size)
    assert fixed_size(64_000.0).name == "fixed(64000B)"  # a whole float is that count


@pytest.mark.parametrize("name", [["websearch"], 5, None, {"name": "websearch"}])
def test_a_workload_name_that_is_no_string_is_a_config_error(name):
    # get_distribution(['websearch']) raised TypeError (unhashable type: 'list'); generate_trace
    # took str(['websearch']) for the name
    message = rf"^workload\.name: expected a string, got {re.escape(repr(name))}$"
    with pytest.raises(ConfigError, match=message):
        get_distribution(name)
    with pytest.raises(ConfigError, match=message):
        generate_trace(name, duration="1ms")


def test_a_cdf_line_of_three_columns_is_refused_whole(tmp_path):
    # '0 0 9' was read as size 0, cdf 0: the third column ignored
    f = tmp_path / "three.txt"
    f.write_text("0 0 9\n100 100\n")
    with pytest.raises(ConfigError, match=rf"^workload\.cdf_file \({re.escape(str(f))}\): line 1: expected "
                                          r"'size_bytes cdf' \(two numbers\), got '0 0 9'$"):
        load_cdf_file(f)
