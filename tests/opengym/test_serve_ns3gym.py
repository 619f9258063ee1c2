"""``ecngym serve-ns3gym`` against an agent side that does what ns3-gym's Python client does.

The agent here is written from ns3-gym's protocol (``ns3gym/ns3env.py``: ``Ns3ZmqBridge`` and
``Ns3Env``), independently of ``ecngym.opengym``'s own code except the message classes: it binds a
REP socket first, waits for the simulation's ``SimInitMsg``, acks it, receives the first state,
answers each state with an ``EnvActMsg`` whose action is a ``DataContainer`` with the payload
packed in ``google.protobuf.Any``, answers a game over with a stop request, and on ``reset()``
closes its socket, binds the port again and waits for a simulation. The server runs as the real
command in its own process, on a port chosen at run time on the loopback interface.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
import zmq

import ecngym.envs  # noqa: F401  (registers the ids)
from ecngym.error import InvalidAction
from ecngym.opengym import protocol as pb

ENV_ID = "ecngym/RoceIncast-v0"
STEPS = 8
SEED = 5


class Ns3GymStyleAgent:
    """The agent side of ns3-gym, message for message (one REP socket, strict lockstep)."""

    def __init__(self, ctx: zmq.Context, port: int | None = None) -> None:
        self.ctx = ctx
        self.sock = ctx.socket(zmq.REP)
        self.sock.rcvtimeo = 60_000  # a broken server fails the test instead of hanging it
        self.sock.linger = 2000  # ns3-gym's client keeps ZMQ's default (wait for unsent replies); bounded here
        if port is None:  # the REP socket is bound first, on a free port chosen now
            self.port = self.sock.bind_to_random_port("tcp://127.0.0.1", min_port=20000, max_port=60000)
        else:
            self.port = port
            for attempt in range(100):  # ZMQ closes the previous socket's listener asynchronously
                try:
                    self.sock.bind(f"tcp://127.0.0.1:{port}")
                    break
                except zmq.ZMQError:
                    if attempt == 99:
                        raise
                    time.sleep(0.02)

    def initialize(self) -> tuple[pb.SimInitMsg, gym.spaces.Space]:
        """``Ns3ZmqBridge.initialize_env``: receive SimInitMsg, ack it, read the action space."""
        init = pb.SimInitMsg.FromString(self.sock.recv())
        self.sock.send(pb.SimInitAck(done=True, stopSimReq=False).SerializeToString())
        self.action_space = self._space(init.actSpace)
        return init, self.action_space

    def _space(self, desc: pb.SpaceDescription) -> gym.spaces.Space:
        if desc.type == pb.TUPLE:
            t = pb.TupleSpace()
            assert desc.space.Unpack(t)
            return gym.spaces.Tuple([self._space(e) for e in t.element])
        d = pb.DiscreteSpace()
        assert desc.type == pb.DISCRETE and desc.space.Unpack(d)
        return gym.spaces.Discrete(d.n)

    def rx_state(self) -> tuple[np.ndarray, float, bool, int, dict]:
        """``Ns3ZmqBridge.rx_env_state``: the next state; a game over is answered with a stop at once."""
        state = pb.EnvStateMsg.FromString(self.sock.recv())
        box = pb.BoxDataContainer()
        assert state.obsData.type == pb.BOX and state.obsData.data.Unpack(box)
        assert box.dtype == pb.FLOAT
        obs = np.array(box.floatData, dtype=np.float32)
        if state.isGameOver:  # ns3-gym's client answers a game over with a stop request at once
            self.send_stop()
        return obs, state.reward, state.isGameOver, state.reason, json.loads(state.info)

    @staticmethod
    def _pack(action) -> pb.DataContainer:
        if isinstance(action, tuple):  # a Tuple space: one container per element, in order
            container = pb.DataContainer(type=pb.TUPLE)
            container.data.Pack(pb.TupleDataContainer(element=[Ns3GymStyleAgent._pack(a) for a in action]))
            return container
        container = pb.DataContainer(type=pb.DISCRETE)
        container.data.Pack(pb.DiscreteDataContainer(data=action))
        return container

    def send_action(self, action: int | tuple[int, ...]) -> None:
        """``Ns3ZmqBridge.send_actions``: the action in a DataContainer, its payload packed in an Any."""
        reply = pb.EnvActMsg(stopSimReq=False)
        reply.actData.CopyFrom(self._pack(action))
        self.sock.send(reply.SerializeToString())

    def send_raw(self, container: pb.DataContainer) -> None:
        """An EnvActMsg carrying ``container`` as it is (for malformed actions)."""
        reply = pb.EnvActMsg(stopSimReq=False)
        reply.actData.CopyFrom(container)
        self.sock.send(reply.SerializeToString())

    def send_stop(self) -> None:
        """``Ns3ZmqBridge.send_close_command``: an EnvActMsg with only the stop request."""
        self.sock.send(pb.EnvActMsg(stopSimReq=True).SerializeToString())

    def rebind(self) -> None:
        """``Ns3Env.reset()`` after a finished episode: a new bridge on the same port."""
        self.sock.close()  # the stop just sent is still delivered (linger)
        self.__init__(self.ctx, self.port)

    def close(self) -> None:
        """Close the socket."""
        self.sock.close(linger=0)


def _serve(tmp_path, port: int, *overrides: str, env: str = "roce_incast") -> subprocess.Popen:
    out = tmp_path / "serve"
    return subprocess.Popen(
        [sys.executable, "-m", "ecngym", "serve-ns3gym", f"env={env}", f"port={port}",
         f"env.kwargs.episode_steps={STEPS}", f"seed={SEED}", f"hydra.run.dir={out}", *overrides],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen) -> tuple[int, str]:
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def _in_process(seed: int, actions: list, env_id: str = ENV_ID) -> tuple[list[np.ndarray], list[float], list[dict]]:
    """The same episode through gymnasium.make in this process: observations, rewards, step infos."""
    env = gym.make(env_id, episode_steps=STEPS)
    obs, info = env.reset(seed=seed)
    observations, rewards, infos = [obs], [], []
    for a in actions:
        obs, r, term, trunc, info = env.step(np.array(a) if isinstance(a, tuple) else a)
        observations.append(obs)
        rewards.append(r)
        infos.append(info)
    assert trunc and not term
    env.close()
    return observations, rewards, infos


@pytest.fixture
def ctx():
    context = zmq.Context()
    yield context
    # linger=0: a test that failed with a socket still open must not hang the suite in term()
    context.destroy(linger=0)


# the single-switch env (Discrete actions) and the leaf-spine (MultiDiscrete, sent as a Tuple of Discrete)
SCENARIOS = [("roce_incast", ENV_ID, gym.spaces.Discrete(13), 16 * 24),
             ("roce_leaf_spine", "ecngym/RoceLeafSpine-v0", gym.spaces.Tuple([gym.spaces.Discrete(13)] * 2), 48 * 24)]


@pytest.mark.parametrize(("env_name", "env_id", "declared_action_space", "obs_size"), SCENARIOS)
def test_two_episodes_over_the_protocol_are_identical_to_in_process(tmp_path, ctx, env_name, env_id,
                                                                    declared_action_space, obs_size):
    agent = Ns3GymStyleAgent(ctx)
    proc = _serve(tmp_path, agent.port, "episodes=2", env=env_name)
    try:
        rng = np.random.default_rng(0)
        episodes = []
        for episode in range(2):
            if episode:
                agent.rebind()
            init, act_space = agent.initialize()
            assert act_space == declared_action_space
            obs_space = pb.BoxSpace()
            assert init.obsSpace.type == pb.BOX and init.obsSpace.space.Unpack(obs_space)
            assert list(obs_space.shape) == [obs_size] and obs_space.dtype == pb.FLOAT
            assert (obs_space.low, obs_space.high) == (0.0, 2.0)
            assert init.simProcessId == 0 and init.wafShellProcessId == 0  # nothing for a client to kill
            obs, reward, over, _, info = agent.rx_state()
            assert (reward, over, info["episode"], info["step"]) == (0.0, False, episode, 0)
            observations, rewards, exact, actions, infos = [obs], [], [], [], []
            while not over:
                action = (int(rng.integers(act_space.n)) if isinstance(act_space, gym.spaces.Discrete)
                          else tuple(int(rng.integers(s.n)) for s in act_space.spaces))
                agent.send_action(action)
                obs, reward, over, reason, info = agent.rx_state()
                observations.append(obs)
                rewards.append(reward)
                exact.append(info["reward"])
                actions.append(action)
                infos.append(info)
            assert reason == pb.SIMULATION_END  # truncation: the episode's trace window ran out
            episodes.append((observations, rewards, exact, actions, infos))
        agent.rebind()  # the agent's reset() after the last episode: nobody comes (episodes=2)
        code, err = _finish(proc)
    finally:
        proc.kill()
        agent.close()
    assert code == 0, err
    summary_rows = pd.read_csv(tmp_path / "serve" / "episodes.csv")
    for episode, (observations, rewards, exact, actions, infos) in enumerate(episodes):
        ref_obs, ref_rewards, ref_infos = _in_process(SEED + episode, actions, env_id)
        ref_info = ref_infos[-1]
        assert len(observations) == STEPS + 1 and [i["step"] for i in infos] == list(range(1, STEPS + 1))
        np.testing.assert_array_equal(np.array(observations), np.array(ref_obs))  # float32 both: identical
        assert exact == ref_rewards  # the exact float64 rewards (info) ...
        assert rewards == [float(np.float32(r)) for r in ref_rewards]  # ... and the float32 reward field
        # per-step telemetry and the final summary travel in the info JSON
        for info, ref in zip(infos, ref_infos, strict=True):
            np.testing.assert_array_equal(info["telemetry"]["queue_bytes"], ref["telemetry"]["queue_bytes"])
            assert info["time_ns"] == ref["time_ns"]
        final = infos[-1]
        assert final["summary"]["trace_hash"] == ref_info["summary"]["trace_hash"]
        assert final["summary"]["flows_total"] == ref_info["summary"]["flows_total"]
        assert final["summary"]["queue_mean_bytes"] == ref_info["summary"]["queue_mean_bytes"]
        assert final["flow_records"]["fct_ns"] == [None if np.isnan(v) else v
                                                   for v in ref_info["flow_records"]["fct_ns"]]
        row = summary_rows.iloc[episode]
        assert (row["status"], row["steps"], row["seed"]) == ("finished", STEPS, SEED + episode)
        assert row["return"] == pytest.approx(sum(ref_rewards), rel=1e-12)
    assert "did not start episode 3" not in err  # episodes=2: it stops after two, without waiting


@pytest.mark.parametrize("bad", ["out_of_range", "wrong_type"])
def test_bad_action_gets_the_invalid_action_message_and_a_clean_stop(tmp_path, ctx, bad):
    agent = Ns3GymStyleAgent(ctx)
    proc = _serve(tmp_path, agent.port)
    try:
        agent.initialize()
        agent.rx_state()
        agent.send_action(0)
        obs_before, *_ = agent.rx_state()
        if bad == "out_of_range":
            agent.send_action(13)  # Discrete(13): 0 .. 12
        else:  # a Box of floats where the space is Discrete
            container = pb.DataContainer(type=pb.BOX)
            container.data.Pack(pb.BoxDataContainer(dtype=pb.FLOAT, shape=[1], floatData=[3.0]))
            agent.send_raw(container)
        obs, reward, over, reason, info = agent.rx_state()  # answers the game over with a stop
        code, err = _finish(proc)
    finally:
        proc.kill()
        agent.close()
    assert over and reason == pb.GAME_OVER and reward == 0.0
    np.testing.assert_array_equal(obs, obs_before)  # nothing was applied
    assert info["error"] == "InvalidAction" and info["step"] == 1
    if bad == "out_of_range":
        env = gym.make(ENV_ID, episode_steps=STEPS)
        env.reset(seed=SEED)
        with pytest.raises(InvalidAction) as in_process:
            env.step(13)
        env.close()
        assert info["message"] == str(in_process.value)  # the very message gymnasium.make's env gives
    else:
        assert "expected an OpenGym Discrete data container" in info["message"]
        assert "Discrete(13)" in info["message"] and "got type Box" in info["message"]
    assert code == 2 and info["message"] in err  # the command stops with the same message
    row = pd.read_csv(tmp_path / "serve" / "episodes.csv").iloc[0]
    assert (row["status"], row["steps"], row["error"]) == ("invalid_action", 1, info["message"])


def test_stop_request_then_reset_plays_the_next_episode_and_a_vanished_agent_times_out(tmp_path, ctx):
    agent = Ns3GymStyleAgent(ctx)
    # a generous time-out while the agent is alive (a loaded CI machine can stall it for seconds): its
    # disappearance is seen by the closed connection, not by the time-out, which the hung agent tests
    proc = _serve(tmp_path, agent.port, "episodes=3", "timeout_s=60")
    try:
        agent.initialize()
        agent.rx_state()
        for _ in range(3):
            agent.send_action(1)
            agent.rx_state()
        agent.send_stop()  # ns3-gym's reset() in the middle of an episode: close (stop) and rebind
        agent.rebind()
        agent.initialize()
        obs0, *_ = agent.rx_state()
        agent.send_action(2)
        obs1, *_ = agent.rx_state()
        agent.close()  # the agent dies without answering
        code, err = _finish(proc)
        # and one that hangs: alive, connected, silent
        hung = Ns3GymStyleAgent(ctx)
        (tmp_path / "hung").mkdir()
        proc = _serve(tmp_path / "hung", hung.port, "timeout_s=3")
        hung.initialize()
        hung.rx_state()
        code_hung, err_hung = _finish(proc)
        hung.close()
    finally:
        proc.kill()
    ref_obs, _, _ = _in_process(SEED + 1, [2] * STEPS)  # episode 2 is a fresh episode of seed + 1
    np.testing.assert_array_equal(obs0, ref_obs[0])
    np.testing.assert_array_equal(obs1, ref_obs[1])
    assert code == 2
    assert "closed its connection without a stop request (episode 2, step 1): it has probably exited" in err
    assert code_hung == 2 and "did not answer within 3 s (episode 1, reply to the initial state)" in err_hung
    rows = pd.read_csv(tmp_path / "serve" / "episodes.csv")  # the earlier results are kept
    assert list(rows["status"]) == ["stopped", "agent_gone"] and list(rows["steps"]) == [3, 1]
    assert json.loads((tmp_path / "serve" / "serve.json").read_text())["episodes"][0]["status"] == "stopped"


def _loopback_listener() -> tuple[socket.socket, int]:
    """A plain TCP listener (not ZMQ) on a free loopback port, and its port."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    return listener, listener.getsockname()[1]


def _serve_a_foreign_program(tmp_path, on_connection, *overrides: str) -> tuple[int, int, str]:
    """Run the server against a TCP program that handles each connection with ``on_connection``.

    Returns:
        The port, the server's exit status and its stderr.
    """
    listener, port = _loopback_listener()

    def accept() -> None:
        listener.settimeout(60)
        try:
            while True:
                on_connection(listener.accept()[0])
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    proc = _serve(tmp_path, port, *overrides)
    try:
        code, err = _finish(proc)
    finally:
        proc.kill()
        listener.close()
    return port, code, err


def test_port_held_by_another_program_is_a_clear_error(tmp_path):
    def answer_like_a_web_server(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        conn.close()

    port, code, err = _serve_a_foreign_program(tmp_path, answer_like_a_web_server, "timeout_s=30")
    assert code == 2
    assert f"tcp://127.0.0.1:{port} accepts TCP connections but the program there does not speak ZMQ" in err
    assert "in use by another program" in err


def test_a_silent_port_is_a_clear_error(tmp_path):
    # a TCP server that accepts and never says anything: no ZMQ greeting within handshake_s
    held: list[socket.socket] = []
    try:
        _, code, err = _serve_a_foreign_program(tmp_path, held.append, "timeout_s=60", "handshake_s=1")
    finally:
        for conn in held:
            conn.close()
    assert code == 2 and "does not speak ZMQ" in err, err


def test_a_listener_that_hangs_up_for_a_moment_is_tried_again(tmp_path, ctx):
    # what an agent's previous REP socket can do while it closes and the agent's reset() binds the port
    # anew: TCP connections are accepted and hung up without a ZMQ greeting. For less than handshake_s
    # (5 s) that is not "another program holds the port": the server must try again.
    listener, port = _loopback_listener()
    hangups = []

    def hang_up() -> None:
        listener.settimeout(0.05)
        end = None
        while end is None or time.monotonic() < end:  # from the first connection on, for 1 s
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            end = end or time.monotonic() + 1.0
            hangups.append(conn.getpeername())
            conn.close()
        listener.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    proc = _serve(tmp_path, port, "timeout_s=60")
    agent = None
    try:
        thread.join(timeout=120)
        agent = Ns3GymStyleAgent(ctx, port)
        agent.initialize()
        agent.rx_state()
        agent.send_stop()
        code, err = _finish(proc)
    finally:
        proc.kill()
        if agent is not None:
            agent.close()
    assert len(hangups) >= 2, hangups  # it did try again on the hung-up port
    assert code == 0, err
    assert pd.read_csv(tmp_path / "serve" / "episodes.csv")["status"].tolist() == ["stopped"]


@pytest.mark.parametrize(("override", "message"), [
    ("port=70000", "port: got"), ("timeout_s=0", "timeout_s: got"),
    # were a ValueError / OverflowError traceback (float('abc'), int(inf * 1000)) and an endless wait on 'tcp://:5555'
    ("timeout_s=abc", "timeout_s: expected a finite number, got 'abc'"),
    ("timeout_s=inf", "timeout_s: expected a finite number, got inf"),
    ("handshake_s=1e7", "handshake_s: got 10000000.0, allowed range is (0, 2147483.647]"),
    ("host=", "host: got '', expected the agent's host name or address")])
def test_bad_settings_name_the_field(tmp_path, override, message):
    code, err = _finish(_serve(tmp_path, 5555, override))  # refused before any connection is tried
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and f"error: {message}" in lines[0], err


def test_a_host_zmq_cannot_parse_is_named(tmp_path):
    # was ZMQError's traceback from connect()
    code, err = _finish(_serve(tmp_path, 5555, 'host="a b"', "timeout_s=5"))
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("ecngym serve-ns3gym: error: host: ZMQ cannot connect to "
                                                   "'tcp://a b:5555'"), err


def test_a_reply_that_is_no_protocol_message_is_named(tmp_path, ctx):
    agent = Ns3GymStyleAgent(ctx)
    proc = _serve(tmp_path, agent.port)
    try:
        agent.initialize()
        agent.rx_state()
        agent.sock.send(b"\xff\xff\xff garbage")  # not an EnvActMsg (was protobuf's DecodeError traceback)
        code, err = _finish(proc)
    finally:
        proc.kill()
        agent.close()
    assert code != 0 and "Traceback" not in err
    assert "reply to the initial state: the peer sent 11 bytes that are no EnvActMsg" in err


def test_parse_message_names_what_was_expected():
    assert pb.parse_message(pb.SimInitAck, pb.SimInitAck(done=True).SerializeToString(), "x").done
    with pytest.raises(pb.MalformedMessage, match=r"^SimInitAck: the peer sent 3 bytes that are no SimInitAck \("):
        pb.parse_message(pb.SimInitAck, b"\xff\xff\xff", "SimInitAck")
