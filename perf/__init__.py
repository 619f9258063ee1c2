"""The ``ecngym bench`` commands, one module each: the figures of speed and fidelity.

Not the benchmark suite that scores controllers (:mod:`ecngym.benchmark`): these measure what the
simulator, the env and training cost, and how close the fabric is to its references.

``fabric`` (the HPCC reference scenarios), ``scale`` (fabric cost vs size and load), ``tcp`` (our
DCTCP hosts vs ns-3's TcpDctcp), ``env`` (env steps per second; ``--ns3gym``: :mod:`ns3gym`, the
OpenGym protocol's cost) and ``train`` (training steps/s as a share of env-only steps/s).
"""
