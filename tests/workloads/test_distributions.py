"""Flow-size distributions: shipped CDFs sample correctly; bad CDF files are rejected precisely."""

import numpy as np
import pytest
from scipy import stats

from ecngym.error import ConfigError
from ecngym.workloads import BUILTIN_CDFS, get_distribution, load_cdf_file


@pytest.mark.parametrize("name", sorted(BUILTIN_CDFS))
def test_samples_match_the_cdf(name):
    dist = get_distribution(name)
    sizes = dist.sample(np.random.default_rng(20_000), 20_000)
    assert sizes.min() >= 1 and sizes.dtype == np.int64
    # Kolmogorov-Smirnov distance between the sample's ECDF and the CDF. Sizes are whole bytes,
    # so evaluate at integer sizes only (P(ceil(X) <= k) = F(k)): the CDF's own points and the
    # sample's quantiles. 1.63 / sqrt(n) is the KS critical value at the 1% level.
    grid = np.unique(np.concatenate([np.ceil(dist.sizes_bytes), np.quantile(sizes, np.linspace(0, 1, 501))]))
    grid = grid[grid >= 1]  # sizes are at least 1 byte: P(S <= k) = F(k) for k >= 1
    ecdf = np.searchsorted(np.sort(sizes), grid, side="right") / len(sizes)
    distance = np.max(np.abs(ecdf - dist.cdf_at(grid)))
    assert distance < 1.63 / np.sqrt(len(sizes)), f"{name}: KS distance {distance:.4f}"
    # and scipy's KS test agrees where the distribution is effectively continuous
    if dist.sizes_bytes[1] > 1000:
        assert stats.kstest(sizes, dist.cdf_at).pvalue > 0.001


def test_websearch_mean_matches_the_literature():
    assert get_distribution("websearch").mean_bytes == pytest.approx(1.711e6, rel=0.01)
    sizes = get_distribution("datamining").sample(np.random.default_rng(1), 100)
    assert sizes.max() <= 1e9


def test_fixed_and_custom(tmp_path):
    assert set(get_distribution("fixed", size_bytes=64_000).sample(np.random.default_rng(0), 50)) == {64_000}
    f = tmp_path / "cdf.txt"
    f.write_text("# fraction format\n1000 0.0\n2000 0.5\n4000 1.0\n")
    d = get_distribution("custom", cdf_file=f)
    s = d.sample(np.random.default_rng(0), 10_000)
    assert 1000 <= s.min() and s.max() <= 4000
    assert np.mean(s <= 2000) == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize(
    "content,line",
    [("0 0\n100 50\n50 60\n200 100\n", 3),      # size decreases
     ("0 0\n100 60\n200 50\n300 100\n", 3),     # cdf decreases
     ("0 0\n100 abc\n200 100\n", 2),            # malformed number
     ("0 0\n100\n200 100\n", 2),                # missing column
     ("0 0\n100 50\n200 90\n", 3)],             # does not end at 100 or 1
)
def test_bad_cdf_file_names_the_line(tmp_path, content, line):
    f = tmp_path / "bad.txt"
    f.write_text(content)
    with pytest.raises(ConfigError, match=rf"workload\.cdf_file.*line {line}"):
        load_cdf_file(f)


def test_unknown_workload_suggests_the_closest():
    with pytest.raises(ConfigError, match="workload.name.*websearch"):
        get_distribution("websaerch")
