"""The TrinityLake format version this implementation reads and writes.

Imports from format/: nothing.
"""

#: The format major version. A lakehouse definition with another major version
#: is refused (``UnsupportedFormatVersionError``) rather than misread.
FORMAT_MAJOR_VERSION = 0
