"""The ORM on a lakehouse: declarative models, sessions, relationships.

The models are declared the way both SQLAlchemy lines take (``declarative_base``
and ``Column``; 1.4 has no ``DeclarativeBase`` or ``mapped_column``), so the
same tests run on 1.4 and 2.x.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy import Column, ForeignKey, Integer, String, select
from sqlalchemy.orm import (
    Session,
    declarative_base,
    foreign,
    relationship,
    selectinload,
)

from tests.sqlalchemy.helpers import latest_version, rows, statements


def new_id() -> str:
    return str(uuid.uuid4())


Base = declarative_base()


class Author(Base):  # type: ignore[misc,valid-type]
    __tablename__ = "authors"
    __table_args__ = {"schema": "ns", "comment": "people who write"}  # noqa: RUF012

    id = Column(String(36), primary_key=True, default=new_id)
    name = Column(String(50), nullable=False)
    country = Column(String(2))
    books = relationship(
        "Book", back_populates="author", order_by="Book.title", cascade="all, delete-orphan"
    )
    # No foreign key behind it: the join is spelled out, as for reflected tables.
    reviews = relationship(
        "Review",
        primaryjoin="Author.id == foreign(Review.author_id)",
        order_by="Review.stars",
        viewonly=True,
    )


class Book(Base):  # type: ignore[misc,valid-type]
    __tablename__ = "books"
    __table_args__ = {"schema": "ns"}  # noqa: RUF012

    id = Column(String(36), primary_key=True, default=new_id)
    title = Column(String(100), nullable=False)
    # Accepted in the DDL, not recorded in the lakehouse.
    author_id = Column(ForeignKey("ns.authors.id"), nullable=False)
    author = relationship("Author", back_populates="books")


class Review(Base):  # type: ignore[misc,valid-type]
    __tablename__ = "reviews"
    __table_args__ = {"schema": "ns"}  # noqa: RUF012

    id = Column(String(36), primary_key=True, default=new_id)
    author_id = Column(String(36), nullable=False)
    stars = Column(Integer, nullable=False)


@pytest.fixture
def orm(engine: sa.Engine) -> Iterator[sa.Engine]:
    """``engine`` with the models' tables created."""
    Base.metadata.create_all(engine)
    yield engine


@pytest.fixture
def library(orm: sa.Engine) -> dict[str, str]:
    """Two authors with books and reviews; their names mapped to their ids."""
    with Session(orm) as session:
        ana = Author(name="ana", country="pt", books=[Book(title="b"), Book(title="a")])
        bob = Author(name="bob", books=[Book(title="c")])
        session.add_all([ana, bob])
        session.flush()
        session.add_all([Review(author_id=ana.id, stars=5), Review(author_id=ana.id, stars=3)])
        session.commit()
        return {"ana": ana.id, "bob": bob.id}


def test_create_all(orm: sa.Engine) -> None:
    inspector = sa.inspect(orm)
    assert inspector.get_table_names("ns") == ["authors", "books", "reviews"]
    assert inspector.get_pk_constraint("books", "ns") == {
        "constrained_columns": ["id"],
        "name": None,
    }
    assert inspector.get_foreign_keys("books", "ns") == []  # the key was not recorded
    assert inspector.get_table_comment("authors", "ns") == {"text": "people who write"}
    assert [
        (c["name"], repr(c["type"]), c["nullable"]) for c in inspector.get_columns("authors", "ns")
    ] == [
        ("id", "VARCHAR(length=36)", False),
        ("name", "VARCHAR(length=50)", False),
        ("country", "VARCHAR(length=2)", True),
    ]


def test_add_all_and_commit(orm: sa.Engine) -> None:
    before = latest_version(orm)
    with Session(orm) as session:
        authors = [Author(name=f"author {i}") for i in range(3)]
        session.add_all(authors)
        session.commit()
        ids = [author.id for author in authors]
    assert latest_version(orm) == before + 1
    assert all(uuid.UUID(value).version == 4 for value in ids)
    assert sorted(rows(orm, "SELECT id, name FROM ns.authors")) == sorted(
        (value, f"author {i}") for i, value in enumerate(ids)
    )


def test_select_and_get(orm: sa.Engine, library: dict[str, str]) -> None:
    with Session(orm) as session:
        found = session.scalars(select(Author).where(Author.country == "pt")).all()
        assert [(a.id, a.name) for a in found] == [(library["ana"], "ana")]
        bob = session.get(Author, library["bob"])
        assert bob is not None and (bob.name, bob.country) == ("bob", None)
        assert session.get(Author, library["bob"]) is bob  # from the identity map
        assert session.get(Author, new_id()) is None
        names = session.scalars(select(Author.name).order_by(Author.name.desc())).all()
        assert names == ["bob", "ana"]


def test_update_an_attribute(orm: sa.Engine, library: dict[str, str]) -> None:
    sent = statements(orm)
    before = latest_version(orm)
    with Session(orm) as session:
        ana = session.get(Author, library["ana"])
        assert ana is not None
        ana.name = "anna"
        session.commit()
    assert [s for s in sent if s.startswith("UPDATE")] == [
        "UPDATE ns.authors SET name=? WHERE ns.authors.id = ?"
    ]
    assert latest_version(orm) == before + 1
    assert rows(orm, "SELECT name FROM ns.authors ORDER BY name") == [("anna",), ("bob",)]


def test_bulk_update_and_delete_statements(orm: sa.Engine, library: dict[str, str]) -> None:
    with Session(orm) as session:
        result = session.execute(
            sa.update(Book).where(Book.author_id == library["ana"]).values(title=Book.title + "!")
        )
        assert result.rowcount == 2
        result = session.execute(sa.delete(Book).where(Book.title == "c"))
        assert result.rowcount == 1
        session.commit()
    assert rows(orm, "SELECT title FROM ns.books ORDER BY title") == [("a!",), ("b!",)]


def test_delete(orm: sa.Engine, library: dict[str, str]) -> None:
    sent = statements(orm)
    with Session(orm) as session:
        bob = session.get(Author, library["bob"])
        assert bob is not None
        session.delete(bob)  # and, by the cascade, his book
        session.commit()
    assert [s for s in sent if s.startswith("DELETE")] == [
        "DELETE FROM ns.books WHERE ns.books.id = ?",
        "DELETE FROM ns.authors WHERE ns.authors.id = ?",
    ]
    assert rows(orm, "SELECT name FROM ns.authors") == [("ana",)]
    assert rows(orm, "SELECT title FROM ns.books ORDER BY title") == [("a",), ("b",)]


def test_relationship_through_the_foreign_key(orm: sa.Engine, library: dict[str, str]) -> None:
    with Session(orm) as session:
        ana = session.get(Author, library["ana"])
        assert ana is not None
        assert [book.title for book in ana.books] == ["a", "b"]
        assert [book.author.name for book in ana.books] == ["ana", "ana"]
        titles = session.scalars(
            select(Book.title).join(Book.author).where(Author.name == "bob")
        ).all()
        assert titles == ["c"]
        loaded = session.scalars(
            select(Author).options(selectinload(Author.books)).order_by(Author.name)
        ).all()
        assert [(a.name, [b.title for b in a.books]) for a in loaded] == [
            ("ana", ["a", "b"]),
            ("bob", ["c"]),
        ]


def test_relationship_with_an_explicit_join(orm: sa.Engine, library: dict[str, str]) -> None:
    with Session(orm) as session:
        ana = session.get(Author, library["ana"])
        bob = session.get(Author, library["bob"])
        assert ana is not None and bob is not None
        assert [review.stars for review in ana.reviews] == [3, 5]
        assert bob.reviews == []
        joined = session.execute(
            select(Author.name, Review.stars)
            .join(Review, Author.id == foreign(Review.author_id))
            .order_by(Review.stars)
        ).all()
        assert [tuple(row) for row in joined] == [("ana", 3), ("ana", 5)]
        counts = session.execute(
            select(Author.name, sa.func.count(Review.id))
            .outerjoin(Author.reviews)
            .group_by(Author.name)
            .order_by(Author.name)
        ).all()
        assert [tuple(row) for row in counts] == [("ana", 2), ("bob", 0)]


def test_rollback_leaves_nothing(orm: sa.Engine, library: dict[str, str]) -> None:
    before = latest_version(orm)
    with Session(orm) as session:
        session.add(Author(name="zed"))
        ana = session.get(Author, library["ana"])
        assert ana is not None
        ana.name = "changed"
        session.delete(session.get(Author, library["bob"]))
        session.flush()  # sent to the lakehouse, inside the transaction
        names = session.scalars(select(Author.name).order_by(Author.name)).all()
        assert names == ["changed", "zed"]
        session.rollback()
        assert session.scalars(select(Author.name).order_by(Author.name)).all() == ["ana", "bob"]
        assert ana.name == "ana"  # expired and reloaded
    assert latest_version(orm) == before
    assert rows(orm, "SELECT name FROM ns.authors ORDER BY name") == [("ana",), ("bob",)]


def test_failed_flush_rolls_back(orm: sa.Engine, library: dict[str, str]) -> None:
    before = latest_version(orm)
    with Session(orm) as session:
        session.add(Author(name="ok"))
        session.add(Author(name=None))  # NOT NULL
        with pytest.raises(sa.exc.IntegrityError, match="name"):
            session.commit()
        session.rollback()
    assert latest_version(orm) == before
    assert rows(orm, "SELECT count(*) FROM ns.authors") == [(2,)]
