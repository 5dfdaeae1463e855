"""The checked-in trinity_pb2.py must match trinity.proto.

protoc compiles the .proto into a FileDescriptorProto, which is compared with
the descriptor embedded in the generated module. The comparison is semantic:
details that depend on the protoc version (``json_name``, source info) are
cleared first, so regenerating with another protoc does not break the test.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

from trinity_dbapi.format.proto import trinity_pb2

protoc = pytest.importorskip(
    "grpc_tools.protoc",
    reason="grpcio-tools is not installed (pip install grpcio-tools) so protoc cannot run",
)

PROTO_DIR = Path(trinity_pb2.__file__).parent
REGENERATE = (
    "python -m grpc_tools.protoc -I trinity_dbapi/format/proto "
    "--python_out=trinity_dbapi/format/proto --pyi_out=trinity_dbapi/format/proto "
    "trinity_dbapi/format/proto/trinity.proto"
)


def _normalize_message(message: descriptor_pb2.DescriptorProto) -> None:
    for field in (*message.field, *message.extension):
        field.ClearField("json_name")
    for nested in message.nested_type:
        _normalize_message(nested)


def _normalize(fdp: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    fdp.ClearField("source_code_info")
    for message in fdp.message_type:
        _normalize_message(message)
    for field in fdp.extension:
        field.ClearField("json_name")
    return fdp


def _compile(tmp_path: Path) -> descriptor_pb2.FileDescriptorProto:
    out = tmp_path / "trinity.desc"
    includes = importlib.resources.files("grpc_tools") / "_proto"
    status = protoc.main(
        [
            "protoc",
            f"-I{PROTO_DIR}",
            f"-I{includes}",
            f"--descriptor_set_out={out}",
            str(PROTO_DIR / "trinity.proto"),
        ]
    )
    assert status == 0, "protoc failed to compile trinity.proto"
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    assert len(files) == 1
    return files[0]


def test_generated_module_matches_proto(tmp_path: Path) -> None:
    compiled = _normalize(_compile(tmp_path))
    embedded = descriptor_pb2.FileDescriptorProto()
    trinity_pb2.DESCRIPTOR.CopyToProto(embedded)
    _normalize(embedded)
    assert compiled == embedded, (
        "trinity_pb2.py is out of date with trinity.proto; regenerate it from the "
        f"repository root with: {REGENERATE}"
    )


def test_proto_file_documents_the_command() -> None:
    assert REGENERATE in (PROTO_DIR / "trinity.proto").read_text(encoding="utf-8")
