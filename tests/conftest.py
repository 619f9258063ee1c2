"""Shared pytest configuration: the slow marker is deselected by `make test` (-m "not slow").

A test that fails while its env is open leaves that env's fabric alive (the traceback keeps it),
and ns-3's simulator is one per process, so every later test that builds a fabric would fail too,
burying the first failure under unrelated ones. After a failed test the fabric it left open is
closed; a passing test is left alone (module-scoped fixtures keep their fabrics). Every test runs in
a scratch directory of its own, never in the checkout. ``chromium`` runs the headless browser the
page and screenshot tests read.
"""

import os
import shutil
import subprocess
from collections.abc import Callable

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


_FAILED = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def _close_the_fabric_a_failed_test_left_open(request: pytest.FixtureRequest):
    yield
    if request.node.stash.get(_FAILED, False):
        from ecngym.sim_backend import fabric

        live = fabric._live_fabric() if fabric._live_fabric is not None else None
        if live is not None:
            live.close()


@pytest.fixture(autouse=True)
def _run_in_a_scratch_directory(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Every test starts in a fresh folder of its own.

    Commands write relative paths (``outputs/results``, ``outputs/leaderboard.html``, Hydra's run
    folders) into the current directory: run from the checkout, the suite would fill the user's
    ``outputs/`` and overwrite the page ``make demo`` wrote.
    """
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture(autouse=True)
def _leave_no_threads_behind():
    """After each test, stop what starts threads and outlives a test (Ray, tqdm's monitor).

    A thread left running makes every later test that branches a simulation (a fork) fail: the
    branch hub refuses a process with threads, as it must (``ecngym.envs.branch``).
    """
    yield
    import sys

    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
    tqdm = sys.modules.get("tqdm")
    monitor = getattr(getattr(tqdm, "tqdm", None), "monitor", None) if tqdm is not None else None
    if monitor is not None:
        monitor.exit()
        tqdm.tqdm.monitor = None


@pytest.fixture
def one_torch_thread():
    """Torch at one intra-op thread for the test (a pool of more makes branching rightly refuse), then as it was."""
    import sys

    torch = sys.modules.get("torch")
    n = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(1)
    yield
    if torch is not None:
        torch.set_num_threads(n)


@pytest.fixture(scope="session")
def run_cases() -> Callable[[str], None]:
    """Run a test file of cases in a fresh pytest process; fail with its output if any case fails.

    For the tests that branch a simulation (``ecngym.envs.branch`` forks the process): the branch hub
    refuses a process that runs other threads, as it must, and a long test session accumulates them
    (a logger's writer, a launcher's executor, a notebook client). A fresh process has none.
    """
    import sys
    from pathlib import Path

    def run(path: str) -> None:
        file = Path(__file__).resolve().parent / path
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(file)],
                              capture_output=True, text=True, cwd=file.parent)
        assert done.returncode == 0, f"{path} failed in its own process:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"

    return run


@pytest.fixture(scope="session")
def chromium() -> Callable[..., subprocess.CompletedProcess]:
    """Headless Chromium, run with the given arguments (``--dump-dom URI``, ``--screenshot=PNG URI`` ...).

    ``budget_ms`` is the virtual time the page's scripts (plotly) get before the DOM is read or the
    screenshot taken. Where no Chromium is on PATH the test is skipped; ``make test`` installs
    Debian's ``chromium`` and sets ECNGYM_REQUIRE_BROWSER=1, so there it fails instead.
    """
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        if os.environ.get("ECNGYM_REQUIRE_BROWSER") == "1":
            pytest.fail("no chromium on PATH (make test installs it with apt-get)")
        pytest.skip("no chromium on PATH (make test installs it)")

    def run(*args: str, budget_ms: int = 15000) -> subprocess.CompletedProcess:
        return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               f"--virtual-time-budget={budget_ms}", *args], capture_output=True, text=True,
                              timeout=120)

    return run
