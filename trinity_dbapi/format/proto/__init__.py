"""Protobuf schemas of the TrinityLake object definitions (``.binpb`` files).

``trinity.proto`` is the source; ``trinity_pb2.py`` and ``trinity_pb2.pyi`` are
generated from it and checked in. Regenerate them from the repository root with::

    python -m grpc_tools.protoc -I trinity_dbapi/format/proto --python_out=trinity_dbapi/format/proto --pyi_out=trinity_dbapi/format/proto trinity_dbapi/format/proto/trinity.proto

``tests/format/test_proto_drift.py`` fails when the two drift apart. The
generated module needs a protobuf runtime at least as new as the protoc that
produced it (see the ``Protobuf Python Version`` line in ``trinity_pb2.py``).
Only :mod:`trinity_dbapi.format.definitions` should import the generated module.
"""
