from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LakehouseDef(_message.Message):
    __slots__ = ("name", "major_version", "order", "namespace_name_max_size_bytes", "table_name_max_size_bytes", "file_name_max_size_bytes", "node_file_max_size_bytes", "properties", "maximum_version_age_millis", "minimum_versions_to_keep", "maximum_version_age_millis_overrides", "exported_snapshots", "required_writer_features", "required_reader_features", "txn_ttl_millis", "txn_isolation_level", "branches")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class MaximumVersionAgeMillisOverridesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    class ExportedSnapshotsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class RequiredWriterFeaturesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class RequiredReaderFeaturesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class BranchesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: BranchDef
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[BranchDef, _Mapping]] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    MAJOR_VERSION_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_NAME_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    FILE_NAME_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    NODE_FILE_MAX_SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_VERSION_AGE_MILLIS_FIELD_NUMBER: _ClassVar[int]
    MINIMUM_VERSIONS_TO_KEEP_FIELD_NUMBER: _ClassVar[int]
    MAXIMUM_VERSION_AGE_MILLIS_OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    EXPORTED_SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_WRITER_FEATURES_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_READER_FEATURES_FIELD_NUMBER: _ClassVar[int]
    TXN_TTL_MILLIS_FIELD_NUMBER: _ClassVar[int]
    TXN_ISOLATION_LEVEL_FIELD_NUMBER: _ClassVar[int]
    BRANCHES_FIELD_NUMBER: _ClassVar[int]
    name: str
    major_version: int
    order: int
    namespace_name_max_size_bytes: int
    table_name_max_size_bytes: int
    file_name_max_size_bytes: int
    node_file_max_size_bytes: int
    properties: _containers.ScalarMap[str, str]
    maximum_version_age_millis: int
    minimum_versions_to_keep: int
    maximum_version_age_millis_overrides: _containers.ScalarMap[int, int]
    exported_snapshots: _containers.ScalarMap[str, str]
    required_writer_features: _containers.ScalarMap[str, str]
    required_reader_features: _containers.ScalarMap[str, str]
    txn_ttl_millis: int
    txn_isolation_level: str
    branches: _containers.MessageMap[str, BranchDef]
    def __init__(self, name: _Optional[str] = ..., major_version: _Optional[int] = ..., order: _Optional[int] = ..., namespace_name_max_size_bytes: _Optional[int] = ..., table_name_max_size_bytes: _Optional[int] = ..., file_name_max_size_bytes: _Optional[int] = ..., node_file_max_size_bytes: _Optional[int] = ..., properties: _Optional[_Mapping[str, str]] = ..., maximum_version_age_millis: _Optional[int] = ..., minimum_versions_to_keep: _Optional[int] = ..., maximum_version_age_millis_overrides: _Optional[_Mapping[int, int]] = ..., exported_snapshots: _Optional[_Mapping[str, str]] = ..., required_writer_features: _Optional[_Mapping[str, str]] = ..., required_reader_features: _Optional[_Mapping[str, str]] = ..., txn_ttl_millis: _Optional[int] = ..., txn_isolation_level: _Optional[str] = ..., branches: _Optional[_Mapping[str, BranchDef]] = ...) -> None: ...

class ChainSegment(_message.Message):
    __slots__ = ("first_version", "folder")
    FIRST_VERSION_FIELD_NUMBER: _ClassVar[int]
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    first_version: int
    folder: str
    def __init__(self, first_version: _Optional[int] = ..., folder: _Optional[str] = ...) -> None: ...

class BranchDef(_message.Message):
    __slots__ = ("folder", "base_version", "base_root", "lineage", "created_at_millis", "merged_roots")
    class MergedRootsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FOLDER_FIELD_NUMBER: _ClassVar[int]
    BASE_VERSION_FIELD_NUMBER: _ClassVar[int]
    BASE_ROOT_FIELD_NUMBER: _ClassVar[int]
    LINEAGE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_MILLIS_FIELD_NUMBER: _ClassVar[int]
    MERGED_ROOTS_FIELD_NUMBER: _ClassVar[int]
    folder: str
    base_version: int
    base_root: str
    lineage: _containers.RepeatedCompositeFieldContainer[ChainSegment]
    created_at_millis: int
    merged_roots: _containers.ScalarMap[str, str]
    def __init__(self, folder: _Optional[str] = ..., base_version: _Optional[int] = ..., base_root: _Optional[str] = ..., lineage: _Optional[_Iterable[_Union[ChainSegment, _Mapping]]] = ..., created_at_millis: _Optional[int] = ..., merged_roots: _Optional[_Mapping[str, str]] = ...) -> None: ...

class TransactionDef(_message.Message):
    __slots__ = ("id", "isolation_level", "beginning_root_node_file_path", "running_root_node_file_path", "began_at_millis", "expire_at_millis", "writes", "deleted_keys", "read_keys", "read_ranges", "required_keys", "required_ranges", "staged_files", "branch", "beginning_version", "saved_at_millis", "commit_message", "merged_keys")
    class WritesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    ISOLATION_LEVEL_FIELD_NUMBER: _ClassVar[int]
    BEGINNING_ROOT_NODE_FILE_PATH_FIELD_NUMBER: _ClassVar[int]
    RUNNING_ROOT_NODE_FILE_PATH_FIELD_NUMBER: _ClassVar[int]
    BEGAN_AT_MILLIS_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_AT_MILLIS_FIELD_NUMBER: _ClassVar[int]
    WRITES_FIELD_NUMBER: _ClassVar[int]
    DELETED_KEYS_FIELD_NUMBER: _ClassVar[int]
    READ_KEYS_FIELD_NUMBER: _ClassVar[int]
    READ_RANGES_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_KEYS_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_RANGES_FIELD_NUMBER: _ClassVar[int]
    STAGED_FILES_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    BEGINNING_VERSION_FIELD_NUMBER: _ClassVar[int]
    SAVED_AT_MILLIS_FIELD_NUMBER: _ClassVar[int]
    COMMIT_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MERGED_KEYS_FIELD_NUMBER: _ClassVar[int]
    id: str
    isolation_level: str
    beginning_root_node_file_path: str
    running_root_node_file_path: str
    began_at_millis: int
    expire_at_millis: int
    writes: _containers.ScalarMap[str, str]
    deleted_keys: _containers.RepeatedScalarFieldContainer[str]
    read_keys: _containers.RepeatedScalarFieldContainer[str]
    read_ranges: _containers.RepeatedCompositeFieldContainer[KeyRange]
    required_keys: _containers.RepeatedScalarFieldContainer[str]
    required_ranges: _containers.RepeatedCompositeFieldContainer[KeyRange]
    staged_files: _containers.RepeatedScalarFieldContainer[str]
    branch: str
    beginning_version: int
    saved_at_millis: int
    commit_message: str
    merged_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., isolation_level: _Optional[str] = ..., beginning_root_node_file_path: _Optional[str] = ..., running_root_node_file_path: _Optional[str] = ..., began_at_millis: _Optional[int] = ..., expire_at_millis: _Optional[int] = ..., writes: _Optional[_Mapping[str, str]] = ..., deleted_keys: _Optional[_Iterable[str]] = ..., read_keys: _Optional[_Iterable[str]] = ..., read_ranges: _Optional[_Iterable[_Union[KeyRange, _Mapping]]] = ..., required_keys: _Optional[_Iterable[str]] = ..., required_ranges: _Optional[_Iterable[_Union[KeyRange, _Mapping]]] = ..., staged_files: _Optional[_Iterable[str]] = ..., branch: _Optional[str] = ..., beginning_version: _Optional[int] = ..., saved_at_millis: _Optional[int] = ..., commit_message: _Optional[str] = ..., merged_keys: _Optional[_Iterable[str]] = ...) -> None: ...

class KeyRange(_message.Message):
    __slots__ = ("lo", "hi")
    LO_FIELD_NUMBER: _ClassVar[int]
    HI_FIELD_NUMBER: _ClassVar[int]
    lo: str
    hi: str
    def __init__(self, lo: _Optional[str] = ..., hi: _Optional[str] = ...) -> None: ...

class NamespaceDef(_message.Message):
    __slots__ = ("name", "properties")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    name: str
    properties: _containers.ScalarMap[str, str]
    def __init__(self, name: _Optional[str] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class DataType(_message.Message):
    __slots__ = ("kind", "precision", "scale", "length", "fields", "key", "value", "element")
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        KIND_UNSPECIFIED: _ClassVar[DataType.Kind]
        BOOLEAN: _ClassVar[DataType.Kind]
        INT2: _ClassVar[DataType.Kind]
        INT4: _ClassVar[DataType.Kind]
        INT8: _ClassVar[DataType.Kind]
        DECIMAL: _ClassVar[DataType.Kind]
        FLOAT4: _ClassVar[DataType.Kind]
        FLOAT8: _ClassVar[DataType.Kind]
        CHAR: _ClassVar[DataType.Kind]
        VARCHAR: _ClassVar[DataType.Kind]
        DATE: _ClassVar[DataType.Kind]
        TIME: _ClassVar[DataType.Kind]
        TIMETZ: _ClassVar[DataType.Kind]
        TIMESTAMP: _ClassVar[DataType.Kind]
        TIMESTAMPTZ: _ClassVar[DataType.Kind]
        FIXED: _ClassVar[DataType.Kind]
        BINARY: _ClassVar[DataType.Kind]
        STRUCT: _ClassVar[DataType.Kind]
        MAP: _ClassVar[DataType.Kind]
        LIST: _ClassVar[DataType.Kind]
    KIND_UNSPECIFIED: DataType.Kind
    BOOLEAN: DataType.Kind
    INT2: DataType.Kind
    INT4: DataType.Kind
    INT8: DataType.Kind
    DECIMAL: DataType.Kind
    FLOAT4: DataType.Kind
    FLOAT8: DataType.Kind
    CHAR: DataType.Kind
    VARCHAR: DataType.Kind
    DATE: DataType.Kind
    TIME: DataType.Kind
    TIMETZ: DataType.Kind
    TIMESTAMP: DataType.Kind
    TIMESTAMPTZ: DataType.Kind
    FIXED: DataType.Kind
    BINARY: DataType.Kind
    STRUCT: DataType.Kind
    MAP: DataType.Kind
    LIST: DataType.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    ELEMENT_FIELD_NUMBER: _ClassVar[int]
    kind: DataType.Kind
    precision: int
    scale: int
    length: int
    fields: _containers.RepeatedCompositeFieldContainer[Column]
    key: Column
    value: Column
    element: Column
    def __init__(self, kind: _Optional[_Union[DataType.Kind, str]] = ..., precision: _Optional[int] = ..., scale: _Optional[int] = ..., length: _Optional[int] = ..., fields: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., key: _Optional[_Union[Column, _Mapping]] = ..., value: _Optional[_Union[Column, _Mapping]] = ..., element: _Optional[_Union[Column, _Mapping]] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("id", "name", "type", "nullable", "properties", "comment")
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    NULLABLE_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    type: DataType
    nullable: bool
    properties: _containers.ScalarMap[str, str]
    comment: str
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., type: _Optional[_Union[DataType, _Mapping]] = ..., nullable: _Optional[bool] = ..., properties: _Optional[_Mapping[str, str]] = ..., comment: _Optional[str] = ...) -> None: ...

class TableDef(_message.Message):
    __slots__ = ("name", "schema", "distribution_keys", "primary_key", "sort_keys", "unique_columns", "table_type", "table_format", "format_properties", "properties")
    class TableType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        MANAGED: _ClassVar[TableDef.TableType]
        EXTERNAL: _ClassVar[TableDef.TableType]
        FEDERATED: _ClassVar[TableDef.TableType]
    MANAGED: TableDef.TableType
    EXTERNAL: TableDef.TableType
    FEDERATED: TableDef.TableType
    class FormatPropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    DISTRIBUTION_KEYS_FIELD_NUMBER: _ClassVar[int]
    PRIMARY_KEY_FIELD_NUMBER: _ClassVar[int]
    SORT_KEYS_FIELD_NUMBER: _ClassVar[int]
    UNIQUE_COLUMNS_FIELD_NUMBER: _ClassVar[int]
    TABLE_TYPE_FIELD_NUMBER: _ClassVar[int]
    TABLE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    FORMAT_PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    name: str
    schema: _containers.RepeatedCompositeFieldContainer[Column]
    distribution_keys: _containers.RepeatedScalarFieldContainer[int]
    primary_key: _containers.RepeatedScalarFieldContainer[int]
    sort_keys: _containers.RepeatedScalarFieldContainer[int]
    unique_columns: _containers.RepeatedScalarFieldContainer[int]
    table_type: TableDef.TableType
    table_format: str
    format_properties: _containers.ScalarMap[str, str]
    properties: _containers.ScalarMap[str, str]
    def __init__(self, name: _Optional[str] = ..., schema: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., distribution_keys: _Optional[_Iterable[int]] = ..., primary_key: _Optional[_Iterable[int]] = ..., sort_keys: _Optional[_Iterable[int]] = ..., unique_columns: _Optional[_Iterable[int]] = ..., table_type: _Optional[_Union[TableDef.TableType, str]] = ..., table_format: _Optional[str] = ..., format_properties: _Optional[_Mapping[str, str]] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ViewDef(_message.Message):
    __slots__ = ("name", "schema_binding", "schema", "sql_representations", "referenced_object_ids", "properties")
    class SqlRepresentation(_message.Message):
        __slots__ = ("dialect", "sql")
        DIALECT_FIELD_NUMBER: _ClassVar[int]
        SQL_FIELD_NUMBER: _ClassVar[int]
        dialect: str
        sql: str
        def __init__(self, dialect: _Optional[str] = ..., sql: _Optional[str] = ...) -> None: ...
    class ObjectIdentifier(_message.Message):
        __slots__ = ("namespace", "name")
        NAMESPACE_FIELD_NUMBER: _ClassVar[int]
        NAME_FIELD_NUMBER: _ClassVar[int]
        namespace: str
        name: str
        def __init__(self, namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...
    class PropertiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_BINDING_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    SQL_REPRESENTATIONS_FIELD_NUMBER: _ClassVar[int]
    REFERENCED_OBJECT_IDS_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    name: str
    schema_binding: bool
    schema: _containers.RepeatedCompositeFieldContainer[Column]
    sql_representations: _containers.RepeatedCompositeFieldContainer[ViewDef.SqlRepresentation]
    referenced_object_ids: _containers.RepeatedCompositeFieldContainer[ViewDef.ObjectIdentifier]
    properties: _containers.ScalarMap[str, str]
    def __init__(self, name: _Optional[str] = ..., schema_binding: _Optional[bool] = ..., schema: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., sql_representations: _Optional[_Iterable[_Union[ViewDef.SqlRepresentation, _Mapping]]] = ..., referenced_object_ids: _Optional[_Iterable[_Union[ViewDef.ObjectIdentifier, _Mapping]]] = ..., properties: _Optional[_Mapping[str, str]] = ...) -> None: ...
