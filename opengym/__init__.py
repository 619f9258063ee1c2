"""ns3-gym compatibility: ecngym envs speak the OpenGym protocol (ZMQ + protobuf).

``ecngym serve-ns3gym`` (:mod:`ecngym.opengym.server`) plays the simulation-script side of
ns3-gym for any ecngym env, so an agent written against ``ns3gym.ns3env.Ns3Env`` drives it
unchanged; :mod:`ecngym.opengym.protocol` holds the messages (``messages.proto``, compiled by
protoc into ``messages_pb2``) and the space mapping; :mod:`ecngym.opengym.agent` is a minimal
agent side (used by ``ecngym bench env --ns3gym``).
"""
