"""The TrinityLake format version this implementation reads and writes."""

#: The format major version. A lakehouse definition with another major version
#: is refused (``UnsupportedFormatVersionError``) rather than misread.
FORMAT_MAJOR_VERSION = 0
