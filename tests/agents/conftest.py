"""A tiny RoCEv2 incast scenario for the learning agents' fast tests."""

import pytest

#: 6 hosts on one switch (6 controlled ports = 6 port agents), short episodes.
TINY = {"topology": {"kind": "incast_star", "hosts": 6, "link_rate": "100Gbps", "link_delay": "1us"},
        "workload": {"workload": "websearch", "load": 0.5,
                     "incast": {"degree": 4, "size": "64KB", "interval": "100us", "arrival": "poisson"}},
        "episode_steps": 12}


@pytest.fixture
def tiny_env():
    """The scenario's EnvConfig fields (a fresh dict)."""
    import copy

    return copy.deepcopy(TINY)
