"""Branches of a running simulation: step-boundary snapshots that can be played forward again and again.

The fabric is single-threaded and lives in the process (ns-3's simulator is a process-wide
singleton), so the cheapest exact copy of a running episode is the process itself: a
:class:`Snapshot` is a forked process (copy-on-write) paused at a step boundary, holding the env,
its fabric, its trace's pending flows and every random state as they were. A :meth:`Snapshot.branch`
forks the holder again and runs a function on the copy; the copy reports a result and either exits
or becomes a snapshot itself, paused where the function left it. A branch that replays the
parent's actions gives bit-identical flow records to the unbranched run (``tests/envs/test_branch.py``).
Cloning a discrete-event simulation at decision points is an old idea (Hybinette & Fujimoto,
"Cloning parallel simulations", ACM TOMACS 11(4), 2001); a fork gives it for free here.

Forking is only safe in a process with one thread: another thread's locks (a torch or BLAS pool
mid-operation, Ray's workers, a logging handler's queue) would be copied held and never released.
:func:`fork_safety_problem` checks for the hazards this package can create and a branch refuses
with a :class:`BranchError` naming them; inside a clean worker process (a ``multiprocessing`` pool
worker, a Ray task's process without threads started) branching works.

Messages between the driver and its snapshots go over ``multiprocessing.connection`` (an
``AF_UNIX`` socket in a temporary folder that only this user can enter, ``mkdtemp``'s mode 0700,
so no handshake is needed on each branch's connection): they carry only objects this package's own
processes made, never a file a user handed over.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Client, Connection, Listener
from typing import Any

from ecngym.error import EcnGymError

#: ``fn(env, *args) -> (result, hold)``: what a branch runs on its copy of the env. ``hold`` True
#: makes the copy a new :class:`Snapshot` paused where ``fn`` left the env.
BranchFn = Callable[..., tuple[Any, bool]]


class BranchError(EcnGymError, RuntimeError):
    """A branch could not be made or failed in its process."""


def os_thread_count() -> int:
    """Threads of this process as the OS counts them (``/proc/self/task``), or 1 where unknown."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def fork_safety_problem() -> str | None:
    """Why forking this process now would be unsafe, or ``None`` if it is safe.

    Checked: other Python threads, a started Ray, and torch with an intra-op thread pool of more
    than one thread (its pool's threads are copied into the child as dead threads whose locks may
    be held). BLAS pools of NumPy are not counted: OpenBLAS re-initialises its pool in a forked
    child (``pthread_atfork``), and the fabric does not use BLAS.
    """
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if others:
        return f"Python threads are running besides the main one ({', '.join(sorted(others))})"
    ray = sys.modules.get("ray")
    if ray is not None and getattr(ray, "is_initialized", lambda: False)():
        return "Ray is initialised in this process (its workers and threads cannot be copied)"
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() > 1:
        return (f"torch runs an intra-op pool of {torch.get_num_threads()} threads "
                "(call torch.set_num_threads(1) before branching)")
    return None


def without_tqdm_monitor() -> None:
    """Keep tqdm from starting its monitor thread, so progress bars leave the process safe to branch."""
    import tqdm

    tqdm.tqdm.monitor_interval = 0


def check_fork_safe() -> None:
    """Raise :class:`BranchError` if :func:`fork_safety_problem` finds a hazard.

    Raises:
        BranchError: Naming the hazard.
    """
    problem = fork_safety_problem()
    if problem is not None:
        raise BranchError(f"cannot branch the simulation: {problem}; branch in a clean worker process")


def _child_exit(code: int) -> None:
    """End a forked process without running the parent's exit handlers or flushing its buffers twice."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


@dataclass
class Snapshot:
    """A process paused at a step boundary, holding a copy of an env (see the module doc).

    Made by :meth:`BranchHub.snapshot` (of the driver's env) or by a branch that holds. Close it
    when no longer needed (:meth:`close`; the hub closes what is left).
    """

    hub: BranchHub
    conn: Connection
    pid: int
    info: Any = None
    closed: bool = field(default=False)

    def branch(self, fn: BranchFn, *args: Any) -> int:
        """Start ``fn(env, *args)`` on a copy of this snapshot's env, in a new process.

        Returns at once; the branch's result comes back through :meth:`BranchHub.wait`.

        Returns:
            The branch's ticket (a key of :meth:`BranchHub.wait`'s results).

        Raises:
            BranchError: If this snapshot is closed or its process is gone.
        """
        if self.closed:
            raise BranchError("this snapshot is closed")
        ticket = self.hub.new_ticket()
        try:
            self.conn.send(("branch", ticket, fn, args))
        except (OSError, EOFError) as exc:
            raise BranchError(f"the snapshot's process {self.pid} is gone: {exc}") from exc
        self.hub.pending.add(ticket)
        return ticket

    def close(self) -> None:
        """End the snapshot's process (safe to call twice)."""
        if self.closed:
            return
        self.closed = True
        try:
            self.conn.send(("exit",))
        except (OSError, EOFError):
            pass
        self.conn.close()
        self.hub.forget(self)


class BranchHub:
    """The driver's side of branching: makes snapshots, collects branch results.

    Use as a context manager; every snapshot and branch still alive is ended on exit.

    Raises:
        BranchError: On entry, where forking is unsafe (:func:`check_fork_safe`).
    """

    def __init__(self) -> None:
        self.pending: set[int] = set()
        self._tickets = 0
        self._folder: str | None = None
        self._listener: Listener | None = None
        self._snapshots: dict[int, Snapshot] = {}
        self._arrived: dict[int, Any] = {}
        self._direct_children: list[int] = []
        self._driver_pid = os.getpid()

    def __enter__(self) -> BranchHub:
        check_fork_safe()
        self._folder = tempfile.mkdtemp(prefix="ecngym-branch-")
        self._listener = Listener(os.path.join(self._folder, "hub"), family="AF_UNIX")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """End every live snapshot and remove the hub's socket (safe to call twice)."""
        if os.getpid() != self._driver_pid:
            return
        for snap in list(self._snapshots.values()):
            snap.close()
        for pid in self._direct_children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self._direct_children = []
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def new_ticket(self) -> int:
        """A fresh branch ticket."""
        self._tickets += 1
        return self._tickets

    def forget(self, snap: Snapshot) -> None:
        """Drop a closed snapshot from the hub's books."""
        self._snapshots.pop(id(snap), None)

    @property
    def live_snapshots(self) -> int:
        """How many snapshot processes are held open."""
        return len(self._snapshots)

    def snapshot(self, env: Any) -> Snapshot:
        """Fork the driver into a snapshot of ``env`` as it stands (at a step boundary).

        Args:
            env: The env (its fabric running, between two steps).

        Returns:
            The snapshot; the driver's ``env`` goes on unchanged.

        Raises:
            BranchError: If the hub is not open or forking is unsafe now.
        """
        if self._listener is None:
            raise BranchError("the branch hub is not open (use it as a context manager)")
        check_fork_safe()
        ticket = self.new_ticket()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the snapshot's process
            self._listener = None  # (its socket stays the driver's; the child never accepts)
            self._become_snapshot(env, ticket, None)
        self._direct_children.append(pid)
        self.pending.add(ticket)
        results = self.wait([ticket])
        return results[ticket]

    def _connect(self) -> Connection:
        assert self._folder is not None
        return Client(os.path.join(self._folder, "hub"), family="AF_UNIX")

    def _become_snapshot(self, env: Any, ticket: int, result: Any) -> None:
        """Serve branch requests for ``env`` until told to exit or the driver goes (never returns)."""
        code = 0
        try:
            signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # branches are reaped by the kernel
            conn = self._connect()
            conn.send(("snapshot", ticket, os.getpid(), result))
            while True:
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    break  # the driver is gone
                if msg[0] == "exit":
                    break
                _, branch_ticket, fn, args = msg
                sys.stdout.flush()
                sys.stderr.flush()
                if os.fork() == 0:  # the branch's process
                    conn.close()
                    self._run_branch(env, branch_ticket, fn, args)
        except BaseException:  # noqa: BLE001 (a forked process must never return into the driver's code)
            traceback.print_exc()
            code = 1
        _child_exit(code)

    def _run_branch(self, env: Any, ticket: int, fn: BranchFn, args: tuple[Any, ...]) -> None:
        """Run ``fn`` on this process's copy of the env; report; hold or exit (never returns)."""
        try:
            result, hold = fn(env, *args)
        except BaseException as exc:  # noqa: BLE001 (reported to the driver, which raises it)
            try:
                conn = self._connect()
                conn.send(("error", ticket, f"{type(exc).__name__}: {exc}", traceback.format_exc()))
                conn.close()
            finally:
                _child_exit(1)
        if hold:
            self._become_snapshot(env, ticket, result)
        try:
            conn = self._connect()
            conn.send(("result", ticket, result))
            conn.close()
        finally:
            _child_exit(0)

    def wait(self, tickets: list[int] | None = None) -> dict[int, Any]:
        """Collect branch results: for each ticket its result, or its :class:`Snapshot` if it held.

        A held branch's :class:`Snapshot` carries the branch's result as ``info``.

        Args:
            tickets: The tickets to wait for (``None``: every pending one).

        Returns:
            Ticket -> result (or Snapshot).

        Raises:
            BranchError: If a branch raised (with its traceback) or its process died.
        """
        if self._listener is None:
            raise BranchError("the branch hub is not open (use it as a context manager)")
        wanted = set(self.pending | self._arrived.keys()) if tickets is None else set(tickets)
        while wanted - self._arrived.keys():
            conn = self._listener.accept()
            msg = conn.recv()
            kind, ticket = msg[0], msg[1]
            self.pending.discard(ticket)
            if kind == "snapshot":
                snap = Snapshot(self, conn, pid=msg[2], info=msg[3])
                self._snapshots[id(snap)] = snap
                self._arrived[ticket] = snap
                continue
            conn.close()
            if kind == "error":
                raise BranchError(f"a branch failed: {msg[2]}\n--- in the branch's process:\n{msg[3]}")
            self._arrived[ticket] = msg[2]
        return {t: self._arrived.pop(t) for t in wanted}


def run_branches(hub: BranchHub, work: list[tuple[Snapshot, BranchFn, tuple[Any, ...]]], processes: int) -> list[Any]:
    """Run branches, at most ``processes`` of them simulating at once.

    Args:
        hub: The open hub.
        work: ``(snapshot, fn, args)`` per branch.
        processes: Branches running at once (>= 1).

    Returns:
        Each branch's result (or :class:`Snapshot`, if it held), in ``work``'s order.

    Raises:
        BranchError: As :meth:`BranchHub.wait`.
    """
    results: dict[int, Any] = {}
    tickets: list[int] = []
    running: list[int] = []
    for snap, fn, args in work:
        if len(running) >= processes:
            results.update(hub.wait([running.pop(0)]))
        t = snap.branch(fn, *args)
        tickets.append(t)
        running.append(t)
    results.update(hub.wait(running))
    return [results[t] for t in tickets]
