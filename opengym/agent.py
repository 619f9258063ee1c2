"""A minimal agent side of the OpenGym protocol (what ns3-gym's ``Ns3Env`` does on the wire).

Used by ``ecngym bench env --ns3gym``; an ns3-gym user keeps using ``ns3gym.ns3env.Ns3Env``.
The agent binds a ZMQ REP socket; the simulation (``ecngym serve-ns3gym``) connects to it. A new
episode's simulation connects to the same bound socket, so no rebind is needed between episodes.
"""

from __future__ import annotations

from typing import Any

import zmq
from gymnasium import spaces

from ecngym.error import ConfigError, EcnGymError
from ecngym.opengym import protocol as pb


class SimulationTimeout(EcnGymError, TimeoutError):
    """The simulation sent no message within the agent's time-out (it never connected, or stopped)."""


class OpenGymAgent:
    """Bind, receive the spaces, then exchange states and actions in lockstep.

    Args:
        port: Port to bind on ``host``, in [0, 65535]; 0 picks a free one (see :attr:`port`).
        host: Interface to bind (loopback by default).
        timeout_s: Longest wait for one message from the simulation, in (0, MAX_WAIT_S] seconds
            (:class:`SimulationTimeout` after it).

    Raises:
        ConfigError: On a bad ``host``, ``port`` or ``timeout_s``
            (:func:`~ecngym.opengym.protocol.check_endpoint`), or an address ZMQ cannot bind
            (naming ``port`` when it is in use, else ``host``).
    """

    def __init__(self, port: int = 0, host: str = "127.0.0.1", timeout_s: float = 300.0) -> None:
        host, port, timeout_s = pb.check_endpoint(host, port, timeout_s, lowest_port=0)
        self._ctx = zmq.Context()
        self.sock = self._ctx.socket(zmq.REP)
        self.sock.linger = 0
        self.sock.rcvtimeo = int(timeout_s * 1000)
        self.timeout_s = timeout_s
        try:
            if port == 0:
                self.port = self.sock.bind_to_random_port(f"tcp://{host}")
            else:
                self.sock.bind(f"tcp://{host}:{port}")
                self.port = port
        except zmq.ZMQError as exc:
            self.close()
            field = "port" if exc.errno == zmq.EADDRINUSE else "host"
            raise ConfigError(field, f"cannot bind tcp://{host}:{port or '*'} ({exc})") from None
        self.observation_space: spaces.Space | None = None
        self.action_space: spaces.Space | None = None

    def wait_init(self) -> tuple[spaces.Space, spaces.Space]:
        """Receive ``SimInitMsg``, ack it; return the (observation, action) spaces as declared.

        Raises:
            UnsupportedSpace: If a space the simulation declares is malformed or unknown
                (:func:`~ecngym.opengym.protocol.space_from_description`).
            MalformedMessage: If the message is no ``SimInitMsg``.
            SimulationTimeout: If none comes within ``timeout_s``.
        """
        init = pb.parse_message(pb.SimInitMsg, self._recv("SimInitMsg"), "SimInitMsg")
        self.observation_space = pb.space_from_description(init.obsSpace, "observation space")
        self.action_space = pb.space_from_description(init.actSpace, "action space")
        self.sock.send(pb.SimInitAck(done=True, stopSimReq=False).SerializeToString())
        return self.observation_space, self.action_space

    def recv_state(self) -> tuple[Any, float, bool, int, str]:
        """The next ``EnvStateMsg``: (observation, reward, game over, reason, info string).

        Raises:
            MalformedMessage: If the message is no ``EnvStateMsg``.
            SimulationTimeout: If none comes within ``timeout_s``.
        """
        state = pb.parse_message(pb.EnvStateMsg, self._recv("EnvStateMsg"), "EnvStateMsg")
        return pb.decode_data(state.obsData), state.reward, state.isGameOver, state.reason, state.info

    def _recv(self, what: str) -> bytes:
        """The next message from the simulation, ``what`` it should be naming it in the error.

        Raises:
            SimulationTimeout: If none comes within ``timeout_s`` (ZMQ's bare ``zmq.Again``, "Resource
                temporarily unavailable", said neither what was awaited nor for how long).
        """
        try:
            return self.sock.recv()
        except zmq.Again:
            raise SimulationTimeout(f"no {what} from the simulation on port {self.port} within timeout_s = "
                                    f"{self.timeout_s:g} s: it never connected, or it stopped "
                                    "(is 'ecngym serve-ns3gym' running with this port?)") from None

    def send_action(self, action: Any) -> None:
        """Answer the last state with ``action`` (an element of :attr:`action_space`)."""
        msg = pb.EnvActMsg(stopSimReq=False)
        msg.actData.CopyFrom(pb.encode(action, self.action_space, "action"))
        self.sock.send(msg.SerializeToString())

    def send_stop(self) -> None:
        """Answer the last state with a stop request (after a game over, or to end the episode)."""
        self.sock.send(pb.EnvActMsg(stopSimReq=True).SerializeToString())

    def close(self) -> None:
        """Close the socket and the context."""
        self.sock.close(linger=0)
        self._ctx.destroy(linger=0)
