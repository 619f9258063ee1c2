"""Thread pools of training processes (ecngym.agents.threads)."""

import os
import subprocess
import sys

import pytest

from ecngym.agents.threads import THREADS_ENV, resolve_threads
from ecngym.error import ConfigError


def test_default_is_one_thread_and_the_variable_and_config_override_it(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert resolve_threads() == 1
    monkeypatch.setenv(THREADS_ENV, "3")
    assert resolve_threads() == 3
    assert resolve_threads(2) == 2  # the config wins over the variable
    assert resolve_threads(0) == 0  # 0 = leave the libraries alone


@pytest.mark.parametrize("bad", [-1, 1.5, "two", True])
def test_bad_thread_counts_name_the_field(bad):
    with pytest.raises(ConfigError, match="threads"):
        resolve_threads(bad)


@pytest.mark.parametrize("text", ["3", "0", " 2"])
def test_a_thread_count_given_as_text_in_the_config_is_refused(text, monkeypatch):
    # threads="3" was taken as 3, where every other whole-number field refuses a string; the
    # environment variable, which is text, is still read as the number it spells
    monkeypatch.delenv(THREADS_ENV, raising=False)
    with pytest.raises(ConfigError, match=rf"^threads: expected a whole number of threads in \[0, 4096\] \(0 = "
                                          rf"library defaults\), got {text!r}$"):
        resolve_threads(text)
    monkeypatch.setenv(THREADS_ENV, text)
    assert resolve_threads() == int(text)


@pytest.mark.parametrize("bad", [float("inf"), float("-inf"), 10**400, 4097, "1" * 5000],
                         ids=["inf", "-inf", "10**400", "4097", "5000-digit-text"])
def test_infinite_or_huge_thread_counts_name_the_field(bad):
    # inf and 10**400 were OverflowErrors (int(inf), float(10**400)); a huge count is refused, not applied
    with pytest.raises(ConfigError, match=r"^threads: expected a whole number of threads in \[0, 4096\]"):
        resolve_threads(bad)


def test_whole_counts_of_any_type_are_taken():
    import numpy as np

    assert [resolve_threads(v) for v in (4096, 2.0, np.int64(3))] == [4096, 2, 3]


def test_bad_environment_variable_names_it(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(ConfigError, match=THREADS_ENV):
        resolve_threads()


def test_limit_threads_sets_torch_blas_and_the_children_environment():
    # a fresh process: thread pools are process-wide
    code = ("import numpy, torch, os, json\n"
            "from threadpoolctl import threadpool_info\n"
            "from ecngym.agents.threads import limit_threads\n"
            "n = limit_threads(None)\n"
            "pools = [p['num_threads'] for p in threadpool_info()]\n"
            "print(json.dumps([n, torch.get_num_threads(), pools, os.environ['OPENBLAS_NUM_THREADS'],"
            " os.environ['OMP_NUM_THREADS']]))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", THREADS_ENV)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    import json

    n, torch_threads, pools, blas, omp = json.loads(out.stdout.strip().splitlines()[-1])
    assert n == 1 and torch_threads == 1 and blas == "1" and omp == "1"
    assert pools and all(p == 1 for p in pools)
