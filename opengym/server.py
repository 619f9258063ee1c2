"""``ecngym serve-ns3gym``: an ecngym env as the simulation-script side of ns3-gym (OpenGym).

An ns3-gym agent (``ns3gym.ns3env.Ns3Env(port=5555, startSim=False)``) binds a ZMQ REP socket
and waits for an ns-3 simulation script to connect. This command is that script for any ecngym
env: it connects a REQ socket to ``tcp://<host>:<port>`` and, per episode,

1. sends ``SimInitMsg`` with the env's observation and action spaces mapped to OpenGym spaces
   (:mod:`ecngym.opengym.protocol`) and reads ``SimInitAck``;
2. resets the env (seed ``seed + episode``) and sends the first ``EnvStateMsg`` (initial
   observation, reward 0, the reset ``info``);
3. for every ``EnvActMsg`` reply: applies its action with ``env.step`` and sends the next
   ``EnvStateMsg`` (observation, reward, game over, info); the last step of an episode is a
   game over with reason ``SimulationEnd`` (truncation: the episode's trace window ran out) or
   ``GameOver`` (termination), and its info carries the episode summary and flow records.

``info`` is the step's ``info`` as JSON (NumPy arrays as lists, a DataFrame as
``{column: [values]}``, NaN / infinity as ``null``) plus ``episode``, ``step`` and ``reward``
(the exact float64 reward: the message's ``reward`` field is a float32).

After a game over the ns3-gym client answers with a stop request and its ``reset()`` binds the
port anew and waits for a simulation: the next episode then starts on the *same* fabric process
(ns3-gym itself relaunches ns-3). A stop request in the middle of an episode ends that episode
(status ``stopped``) the same way. The agent that does not come back for the next episode within
``timeout_s`` ends the session normally (it closed). An action of the wrong form or out of range
ends the episode with a game over (reason ``GameOver``) whose info is
``{"error": "InvalidAction", "message": ...}`` (the message ``env.step`` gives in-process), and
the command stops with that message (exit status 2). An agent that closes its connection in the
middle of an episode, or sends no reply within ``timeout_s``, stops the command with a clear
message (exit status 2). After a game over the agent's stop is awaited until it replies, closes
its connection or ``timeout_s`` passes.

Each episode's row (``episodes.csv``: seed, steps, return, status, error, summary) is written as
the episode ends, so finished episodes are kept whatever happens later; ``serve.json`` holds the
resolved config and the rows.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hydra
import numpy as np
import pandas as pd
import zmq
import zmq.utils.monitor
from omegaconf import DictConfig, OmegaConf
from rich.console import Console

from ecngym import __version__
from ecngym.commands.checks import user_errors
from ecngym.commands.factories import make_env
from ecngym.envs.config import MAX_EPISODE_SEED
from ecngym.error import ConfigError, EcnGymError, InvalidAction
from ecngym.files import write_atomically, write_text_atomically
from ecngym.opengym import protocol as pb
from ecngym.validation import check, check_whole


class AgentTimeout(EcnGymError, TimeoutError):
    """The ns3-gym agent did not connect or answer within the time-out."""


class AgentDisconnected(EcnGymError, ConnectionError):
    """The ns3-gym agent closed its connection in the middle of an episode, without a stop request."""


class PortInUse(EcnGymError, ConnectionError):
    """The port is held by a program that does not speak ZMQ (not an ns3-gym agent)."""


def _jsonable(x: Any) -> Any:
    """``x`` as plain JSON values (see the module docstring)."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f" and not np.isfinite(x).all():
            return np.where(np.isfinite(x), x, None).tolist()
        return x.tolist() if x.dtype.kind in "biuf" else [_jsonable(v) for v in x.tolist()]
    if hasattr(x, "to_dict") and hasattr(x, "columns"):  # a DataFrame, column by column
        return {str(c): _jsonable(x[c].to_numpy()) for c in x.columns}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x if isinstance(x, (str, int, float, bool)) or x is None else str(x)


def info_json(info: dict[str, Any], **extra: Any) -> str:
    """The ``info`` string of an ``EnvStateMsg``: ``info`` and ``extra`` as strict JSON."""
    return json.dumps(_jsonable({**info, **extra}), separators=(",", ":"), allow_nan=False)


_HANDSHAKE_FAILED = (zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                     | zmq.EVENT_HANDSHAKE_FAILED_AUTH)


class OpenGymServer:
    """The simulation side of the OpenGym protocol for one Gymnasium env.

    Args:
        env: The env to serve (an ecngym env, or any Gymnasium env with mappable spaces).
        host: Address of the agent (loopback by default).
        port: The agent's port (its REP socket is bound there).
        timeout_s: How long to wait for the agent to connect or to answer a message, in
            (0, :data:`~ecngym.opengym.protocol.MAX_WAIT_S`] seconds.
        handshake_s: How long a TCP peer may take to answer the ZMQ greeting before the port is
            declared held by another program, in (0, :data:`~ecngym.opengym.protocol.MAX_WAIT_S`] seconds.

    Raises:
        UnsupportedSpace: If a space of ``env`` has no OpenGym equivalent.
        ConfigError: On a bad ``host``, ``port``, ``timeout_s`` or ``handshake_s`` (:meth:`check_settings`).
    """

    def __init__(self, env: Any, host: str = "127.0.0.1", port: int = 5555, timeout_s: float = 300.0,
                 handshake_s: float = 5.0) -> None:
        self.env = env
        host, port, self.timeout_s, self.handshake_s = self.check_settings(host, port, timeout_s, handshake_s)
        self.address = f"tcp://{host}:{port}"
        self.obs_space, self.act_space = env.observation_space, env.action_space
        self.init_msg = pb.SimInitMsg(
            # ns3-gym's client uses these process ids only to kill the simulation on close; this
            # server outlives an episode (it serves the agent's next reset), so it sends none.
            simProcessId=0, wafShellProcessId=0,
            obsSpace=pb.describe_space(self.obs_space, "observation"),
            actSpace=pb.describe_space(self.act_space, "action"))
        self._ctx = zmq.Context()
        self.env_s = 0.0  # wall time inside env.reset / env.step (the rest of a step is protocol)
        self.encode_s = 0.0  # wall time building and serialising EnvStateMsg (observation, info JSON)
        self.state_bytes = 0  # bytes of EnvStateMsg sent
        self.states_sent = 0

    @staticmethod
    def check_settings(host: Any, port: Any, timeout_s: Any, handshake_s: Any) -> tuple[str, int, float, float]:
        """``host``, ``port``, ``timeout_s`` and ``handshake_s`` checked (before an env is built, by the CLI, too).

        Returns:
            ``(host, port, timeout_s, handshake_s)``, the port as an int and the waits as floats.

        Raises:
            ConfigError: On an empty ``host``, a port that is not a whole number in [1, 65535], or a
                wait that is not a number in (0, ``protocol.MAX_WAIT_S``], naming ``host``, ``port``,
                ``timeout_s`` or ``handshake_s`` (:func:`~ecngym.opengym.protocol.check_endpoint`).
        """
        host, port, timeout_s = pb.check_endpoint(host, port, timeout_s)
        return host, port, timeout_s, check("handshake_s", handshake_s, pb.WAIT_S)

    # ------------------------------------------------------------------ socket
    def _connect(self, what: str) -> tuple[zmq.Socket, zmq.Socket]:
        """A REQ socket whose ZMQ handshake with the agent succeeded, and its monitor socket.

        A TCP connection that fails before the ZMQ handshake completes (the peer hangs up or does
        not answer the greeting) is tried again on a fresh socket: an ns3-gym agent's previous REP
        socket that is closing while its ``reset()`` binds the port anew refuses connections that
        way for a moment. Only failures that go on for ``handshake_s`` mean another program holds
        the port.

        Raises:
            AgentTimeout: If no agent answers at the address within ``timeout_s``.
            PortInUse: If the port accepts TCP connections but the peer does not speak ZMQ.
        """
        deadline = time.monotonic() + self.timeout_s
        failing_since: float | None = None  # when the first attempt that failed was dialled
        while True:
            dialled = time.monotonic()
            sock, monitor = self._dial()
            outcome = self._handshake(monitor, deadline)
            if outcome == "ok":
                return sock, monitor
            self._close(sock, monitor)
            if outcome == "timeout":
                raise AgentTimeout(f"no ns3-gym agent answered at {self.address} within {self.timeout_s:g} s "
                                   f"({what}); start the agent first: it binds the port "
                                   f"(ns3gym.ns3env.Ns3Env(port=..., startSim=False))")
            failing_since = dialled if failing_since is None else failing_since
            if time.monotonic() - failing_since >= self.handshake_s:  # a silent peer: at its first time-out
                raise PortInUse(f"port: {self.address} accepts TCP connections but the program there does not "
                                "speak ZMQ (no ZMTP handshake): the port is in use by another program, not an "
                                "ns3-gym agent; start the agent on a free port and give that port as port=...")
            time.sleep(0.05)  # a closing listener: give the agent's new socket a moment to bind

    def _dial(self) -> tuple[zmq.Socket, zmq.Socket]:
        """A fresh REQ socket connecting to the agent, with a monitor of its connection events."""
        sock = self._ctx.socket(zmq.REQ)
        sock.linger = 0
        sock.setsockopt(zmq.HANDSHAKE_IVL, max(1, int(self.handshake_s * 1000)))
        monitor = sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED
                                          | zmq.EVENT_HANDSHAKE_SUCCEEDED | _HANDSHAKE_FAILED)
        try:
            sock.connect(self.address)
        except zmq.ZMQError as exc:  # e.g. a host with a space: ZMQ cannot parse the endpoint
            self._close(sock, monitor)
            raise ConfigError("host", f"ZMQ cannot connect to {self.address!r} ({exc}); give the agent's host "
                                      "name or address, e.g. 127.0.0.1") from None
        return sock, monitor

    @staticmethod
    def _handshake(monitor: zmq.Socket, deadline: float) -> str:
        """How the socket's connection went: ``"ok"``, ``"failed"`` (before the handshake) or ``"timeout"``."""
        tcp_up = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not monitor.poll(remaining * 1000):
                return "timeout"
            event = zmq.utils.monitor.recv_monitor_message(monitor)["event"]
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                return "ok"
            if event == zmq.EVENT_CONNECTED:
                tcp_up = True
            elif event & _HANDSHAKE_FAILED or (event == zmq.EVENT_DISCONNECTED and tcp_up):
                return "failed"

    @staticmethod
    def _close(sock: zmq.Socket, monitor: zmq.Socket) -> None:
        sock.disable_monitor()
        monitor.close(linger=0)
        sock.close(linger=0)

    def _request(self, sock: zmq.Socket, data: bytes, reply_type: type, what: str, monitor: zmq.Socket) -> Any:
        """Send the serialised message ``data`` and return the parsed reply.

        A peer that disconnects before replying (``monitor`` reports it) raises
        :class:`ConnectionResetError`: the caller decides what that means (an agent's previous socket
        closing at init, the agent leaving after a game over, or dying in the middle of an episode).

        Raises:
            AgentTimeout: If no reply comes within ``timeout_s``.
            MalformedMessage: If the reply is not a ``reply_type``
                (:func:`~ecngym.opengym.protocol.parse_message`).
        """
        sock.send(data)
        deadline = time.monotonic() + self.timeout_s
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            ready = dict(poller.poll(max(remaining, 0) * 1000)) if remaining > 0 else {}
            if sock in ready:
                return pb.parse_message(reply_type, sock.recv(), what)
            if monitor in ready:
                if zmq.utils.monitor.recv_monitor_message(monitor)["event"] == zmq.EVENT_DISCONNECTED:
                    raise ConnectionResetError
                continue
            if not ready:
                raise AgentTimeout(f"the ns3-gym agent at {self.address} did not answer within {self.timeout_s:g} s "
                                   f"({what}): it has probably exited")

    def _start(self, what: str) -> tuple[zmq.Socket, zmq.Socket] | None:
        """Connect, exchange SimInitMsg / SimInitAck; the socket and its monitor (``None``: agent said stop)."""
        while True:
            sock, monitor = self._connect(what)
            try:
                ack = self._request(sock, self.init_msg.SerializeToString(), pb.SimInitAck, f"{what}: SimInitAck",
                                    monitor)
            except ConnectionResetError:  # an agent's previous socket closing: connect to its new one
                self._close(sock, monitor)
                continue
            except AgentTimeout:
                self._close(sock, monitor)
                raise
            if ack.stopSimReq:
                self._close(sock, monitor)
                return None
            return sock, monitor

    # ------------------------------------------------------------------ episodes
    def _state(self, obs: Any, reward: float, over: bool, reason: int, info: dict[str, Any], /, **extra: Any) -> bytes:
        """The serialised EnvStateMsg; ``info`` and ``extra`` go in as JSON (:func:`info_json`)."""
        t = time.perf_counter()
        data = pb.EnvStateMsg(obsData=pb.encode(obs, self.obs_space), reward=reward, isGameOver=over,
                              reason=reason, info=info_json(info, **extra)).SerializeToString()
        self.encode_s += time.perf_counter() - t
        self.state_bytes += len(data)
        self.states_sent += 1
        return data

    def episode(self, sock: zmq.Socket, monitor: zmq.Socket, episode: int,
                seed: int) -> tuple[dict[str, Any], Exception | None]:
        """Play one episode with the connected agent; return its row and the error that ended it, if any."""
        where = f"episode {episode + 1}"
        t = time.perf_counter()
        obs, info = self.env.reset(seed=seed)
        self.env_s += time.perf_counter() - t
        row: dict[str, Any] = {"episode": episode, "seed": seed, "episode_seed": info.get("episode_seed"),
                               "trace_hash": info.get("trace_hash"), "steps": 0, "return": 0.0,
                               "status": "running", "error": ""}
        msg = self._state(obs, 0.0, False, pb.SIMULATION_END, info, episode=episode, step=0, reward=0.0)
        try:
            act = self._request(sock, msg, pb.EnvActMsg, f"{where}, reply to the initial state", monitor)
            while True:
                if act.stopSimReq:
                    row["status"] = "stopped"
                    return row, None
                try:
                    action = pb.decode_action(act.actData, self.act_space)
                    t = time.perf_counter()
                    obs, reward, terminated, truncated, info = self.env.step(action)
                    self.env_s += time.perf_counter() - t
                except InvalidAction as exc:
                    row.update(status="invalid_action", error=str(exc))
                    final = self._state(obs, 0.0, True, pb.GAME_OVER, {"error": "InvalidAction", "message": str(exc)},
                                        episode=episode, step=row["steps"])
                    try:
                        self._request(sock, final, pb.EnvActMsg, f"{where}: the agent's stop after its invalid action",
                                      monitor)
                    except (AgentTimeout, ConnectionResetError):
                        pass  # the episode is over either way
                    return row, exc
                row["steps"] += 1
                row["return"] += float(reward)
                over = bool(terminated or truncated)
                msg = self._state(obs, reward, over, pb.GAME_OVER if terminated else pb.SIMULATION_END, info,
                                  episode=episode, step=row["steps"], reward=float(reward))
                if over:
                    row.update(status="finished", **{k: v for k, v in info.get("summary", {}).items()
                                                     if k not in row})
                    try:
                        self._request(sock, msg, pb.EnvActMsg, f"{where}: the agent's stop after the game over",
                                      monitor)
                    except (AgentTimeout, ConnectionResetError):
                        pass  # the episode is complete; the next one's connect decides whether the agent is there
                    return row, None
                act = self._request(sock, msg, pb.EnvActMsg, f"{where}, step {row['steps']}", monitor)
        except AgentTimeout as exc:
            row.update(status="agent_gone", error=str(exc))
            return row, exc
        except ConnectionResetError:
            exc = AgentDisconnected(f"the ns3-gym agent at {self.address} closed its connection without a stop "
                                    f"request ({where}, step {row['steps']}): it has probably exited")
            row.update(status="agent_gone", error=str(exc))
            return row, exc

    def serve(self, episodes: int, seed: int, on_episode: Callable[[dict[str, Any]], None] | None = None,
              log: Callable[[str], None] = print) -> list[dict[str, Any]]:
        """Serve up to ``episodes`` episodes (seeds ``seed``, ``seed + 1``, ...); return their rows.

        ``on_episode`` gets each row as soon as its episode ends (also one ended by an error).

        Raises:
            AgentTimeout: If no agent connects for the first episode, or the agent stops answering
                in the middle of an episode.
            AgentDisconnected: If the agent closes its connection in the middle of an episode.
            PortInUse: If the port is held by a program that does not speak ZMQ.
            InvalidAction: After an invalid action was answered with a game over.
        """
        rows: list[dict[str, Any]] = []
        for k in range(episodes):
            what = f"episode {k + 1}/{episodes}"
            try:
                started = self._start(what)
            except AgentTimeout:
                if k == 0:
                    raise
                log(f"the agent did not start episode {k + 1} within {self.timeout_s:g} s (it closed): "
                    f"served {k} episode(s)")
                break
            if started is None:
                log(f"the agent declined episode {k + 1} (stop request in SimInitAck): served {k} episode(s)")
                break
            sock, monitor = started
            try:
                row, error = self.episode(sock, monitor, k, seed + k)
            finally:
                self._close(sock, monitor)
            rows.append(row)
            if on_episode is not None:
                on_episode(row)
            log(f"episode {k + 1}/{episodes}: {row['status']}, {row['steps']} steps, return {row['return']:.4g}")
            if error is not None:
                raise error
        return rows

    def close(self) -> None:
        """Close every socket and the ZMQ context (the env is the caller's)."""
        self._ctx.destroy(linger=0)


# ----------------------------------------------------------------------------- command
def _brief(space: Any) -> str:
    """A space in one line (a Box's per-element bounds as their range)."""
    if isinstance(space, pb.spaces.Box):
        return f"Box(shape={space.shape}, {space.dtype}, [{np.min(space.low):g}, {np.max(space.high):g}])"
    return str(space)


@hydra.main(version_base="1.3", config_path="../configs", config_name="serve_ns3gym")
@user_errors
def serve_ns3gym_main(cfg: DictConfig) -> None:
    """Entry point of ``ecngym serve-ns3gym`` (Hydra: ``env=roce_incast port=5555 episodes=2``)."""
    _, port, _, _ = OpenGymServer.check_settings(cfg.host, cfg.port, cfg.timeout_s, cfg.handshake_s)  # before the env
    episodes = check_whole("episodes", cfg.episodes, 1)
    seed = check_whole("seed", cfg.seed, 0, MAX_EPISODE_SEED - (episodes - 1))  # episode k plays seed + k
    out = Path(hydra.core.hydra_config.HydraConfig.get().runtime.output_dir)
    console = Console(stderr=True)
    env = make_env(cfg)
    rows: list[dict[str, Any]] = []

    def record(row: dict[str, Any]) -> None:
        rows.append(row)
        # a later failure keeps these; atomic: a kill while writing leaves the previous rows
        write_atomically(out / "episodes.csv", lambda tmp: pd.DataFrame(rows).to_csv(tmp, index=False))

    server = None
    try:
        server = OpenGymServer(env, cfg.host, port, cfg.timeout_s, cfg.handshake_s)
        obs_view = pb.space_from_description(server.init_msg.obsSpace)
        act_view = pb.space_from_description(server.init_msg.actSpace)
        console.print(f"ecngym {__version__} serve-ns3gym: {cfg.env.id} as the ns-3 simulation for the ns3-gym "
                      f"agent at {server.address}; {episodes} episode(s) from seed {seed}\n"
                      f"  observation {_brief(env.observation_space)} -> OpenGym {_brief(obs_view)}\n"
                      f"  action {_brief(env.action_space)} -> OpenGym {_brief(act_view)}")
        server.serve(episodes, seed, on_episode=record, log=console.print)
    finally:
        env.close()
        if server is not None:
            server.close()
        write_text_atomically(out / "serve.json", json.dumps(
            {"version": __version__, "config": OmegaConf.to_container(cfg, resolve=True),
             "env_config": env.unwrapped.config.as_dict(), "episodes": _jsonable(rows)}, indent=2))
        console.print(f"results: {out}")
