"""Required features: what a release must know to read or change a lakehouse.

protobuf ignores fields it does not know, so without this a release would
happily change a lakehouse a newer release wrote, and damage it: garbage
collection would delete a branch's files as unreachable, a commit would drop
what a newer field records. The lakehouse definition therefore names the
features a lakehouse uses that change what is reachable or how it is written
(the next ones: branches, tags, clones, saved transactions), each with the
first release that knows it, in two maps (docs/format.md, "Required
features"):

* ``required_writer_features``: needed to change the lakehouse (commit,
  rollback, compaction, export, expiration, garbage collection); a release
  that does not know one still reads the lakehouse.
* ``required_reader_features``: needed to read it at all (a change to how
  nodes or data are read); each is needed to change it too.

This release knows ``branches``: a lakehouse with branches or tags on a
branch (docs/format.md, "Branches") requires it, since a release that does not
know branches would collect their files as garbage and expire the versions
they were created from. It knows ``saved_transactions`` too: the first
``SAVE TRANSACTION`` on a lakehouse requires it (docs/format.md, "Saved
transaction"), since a release that does not know saved transactions would
expire the versions and collect the files an unexpired one needs.

Imports from format/: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from trinity_dbapi.errors import UnsupportedFeatureError


class RequiresFeatures(Protocol):
    """What a lakehouse definition requires of a release, as this module reads it.

    ``definitions/lakehouse.py`` checks its reader features here when it is
    decoded, so this module sits below it and knows it only by these two
    fields.
    """

    @property
    def required_writer_features(self) -> Mapping[str, str]: ...

    @property
    def required_reader_features(self) -> Mapping[str, str]: ...


#: For each feature this release knows, the first release that knows it: what
#: a definition records beside the feature when this release starts to
#: require it. A feature this release does not know is named in its errors by
#: what the definition records (a release cannot know its future).
FIRST_RELEASE: Mapping[str, str] = MappingProxyType(
    {"branches": "trinity-dbapi 0.2.0", "saved_transactions": "trinity-dbapi 0.2.0"}
)

#: The feature a lakehouse with branches requires of a writer.
BRANCHES = "branches"
#: The feature a lakehouse where a transaction was saved requires of a writer:
#: a release that does not know ``_transactions/`` would expire the versions
#: and collect the files an unexpired saved transaction needs.
SAVED_TRANSACTIONS = "saved_transactions"

#: The features this release knows.
KNOWN_FEATURES: frozenset[str] = frozenset(FIRST_RELEASE)


def unknown_features(required: Mapping[str, str]) -> list[tuple[str, str]]:
    """The ``(feature, first release)`` pairs of ``required`` this release does not know, sorted."""
    return sorted((f, r) for f, r in required.items() if f not in KNOWN_FEATURES)


def check_readable(required_reader_features: Mapping[str, str]) -> None:
    """Refuse to read a lakehouse whose definition requires an unknown reader feature.

    Raises:
        UnsupportedFeatureError: naming the first such feature and its release.
    """
    for feature, release in unknown_features(required_reader_features):
        raise UnsupportedFeatureError(
            feature,
            release,
            operation="reading this lakehouse",
            this_release=this_release(),
            reading=True,
        )


def check_writable(definition: RequiresFeatures, operation: str) -> None:
    """Refuse ``operation``, a change to a lakehouse of ``definition``, on an unknown feature.

    A reader feature counts too: what a release cannot read it must not change.

    Raises:
        UnsupportedFeatureError: naming the first such feature and its release.
    """
    required = {**definition.required_writer_features, **definition.required_reader_features}
    for feature, release in unknown_features(required):
        raise UnsupportedFeatureError(
            feature, release, operation=operation, this_release=this_release(), reading=False
        )


def this_release() -> str:
    """This release as errors name it: ``trinity-dbapi 0.1.0``.

    Read from the installed distribution: the package root holding
    ``__version__`` is a layer above this one.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"trinity-dbapi {version('trinity-dbapi')}"
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "this release of trinity-dbapi"


__all__ = [
    "BRANCHES",
    "FIRST_RELEASE",
    "KNOWN_FEATURES",
    "RequiresFeatures",
    "check_readable",
    "check_writable",
    "this_release",
    "unknown_features",
]
