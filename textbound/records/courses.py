"""Courses side by side: which courses a server serves, and where each one's own things live.

A course is a collection with everything a teacher keeps for it. The server's own collection
(`TEXTBOUND_COLLECTION`) is its **default course**: it keeps today's places and answers at `/`
as before. `TEXTBOUND_COURSES` names further courses, each another collection of the same store,
served at `/c/<course>/` (the default course answers there too). Another course `<name>` keeps:

- its documents in collection `<name>`, and its profile in `<data_dir>/profiles/<name>.yaml`
  (`TEXTBOUND_PROFILE` is the default course's only);
- its audit log in `courses/<name>/audit.jsonl` beside the default course's audit log (so
  `<data_dir>/courses/<name>/` by default), its ratings beside it (`feedback.jsonl`) and its
  report in `report/` there (`textbound report --course <name>`);
- its keys: those made with `--course <name>` (`TEXTBOUND_API_KEY` is the default course's);
- its conversations in the same store as the default course's, under thread ids kept as
  `<name>/<id>` (`Course.threads`, `CourseKeys`): no thread id can hold a `/`, so the same id
  in two courses is two conversations, with two owners.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textbound.errors import ConfigError
from textbound.records.keystore import KeyStore

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from textbound.settings import Settings

__all__ = ["COURSE_PATH", "COURSES_DIR", "Course", "CourseKeys", "course_for", "course_of",
           "courses_of"]

COURSE_PATH = "/c"
"""Where the courses' pages and routes are: `/c/<course>/...`."""
COURSES_DIR = "courses"
"""The folder, beside the default course's audit log, that holds the other courses' logs."""


@dataclass(frozen=True)
class Course:
    """One course a server serves: its name, its settings, and its own folder (None: default)."""

    name: str
    settings: Settings
    folder: Path | None = None
    """Where another course's audit log, feedback and report are (`courses/<name>/`)."""

    @property
    def default(self) -> bool:
        """Whether this is the server's own collection, served at `/` too."""
        return self.folder is None

    @property
    def path(self) -> str:
        """Where the course's page and routes are (`/c/<name>`); the default is also at `/`."""
        return f"{COURSE_PATH}/{self.name}"

    @property
    def thread_prefix(self) -> str:
        """What the course's thread ids are kept under ("" for the default course)."""
        return "" if self.folder is None else f"{self.name}/"

    @property
    def report_dir(self) -> Path:
        """Where `textbound report` writes the course's report unless told otherwise."""
        return (Path(self.settings.data_dir) if self.folder is None else self.folder) / "report"

    def threads(self, saver: BaseCheckpointSaver[Any] | None) -> BaseCheckpointSaver[Any] | None:
        """Return `saver` as this course sees it: its own threads only (the default: as is)."""
        if saver is None or self.default:
            return saver
        from textbound.records.course_threads import CourseThreads

        return CourseThreads(saver, self.thread_prefix)

    def keys(self, store: KeyStore) -> KeyStore:
        """Return the key store as this course sees it: thread owners under its prefix."""
        return store if self.default else CourseKeys(store, self.thread_prefix)


def _other_course(base: Settings, name: str) -> Course:
    """Return course `name`, served beside `base`'s collection, with its own files."""
    folder = (Path(base.audit_log).parent if base.audit_log is not None
              else Path(base.data_dir)) / COURSES_DIR / name
    audit = folder / "audit.jsonl" if base.audit_log is not None else None
    # TEXTBOUND_PROFILE is the default course's profile; another reads its own file
    settings = base.model_copy(update={"collection": name, "audit_log": audit, "profile": None})
    return Course(name, settings, folder)


def course_for(settings: Settings) -> Course:
    """Return the course a command's settings are of (`course_of(...).settings`, or any).

    Settings are a further course's when their own `courses` name their collection: those
    `course_of` derives do (a default course's never do: `Settings` drops its collection
    from that list), so `open_checkpointer` and `textbound report` find the course's threads
    and report folder from the settings alone.
    """
    name = settings.collection
    if name not in settings.courses:
        return Course(name, settings)
    if settings.audit_log is not None:
        return Course(name, settings, Path(settings.audit_log).parent)
    return Course(name, settings, Path(settings.data_dir) / COURSES_DIR / name)


def courses_of(base: Settings) -> list[Course]:
    """Return the courses the settings serve: the default course first, then TEXTBOUND_COURSES."""
    found = [Course(base.collection, base)]
    found += [_other_course(base, name) for name in base.courses]
    return found


def course_of(base: Settings, name: str | None) -> Course:
    """Return the course `name` (None: the default course), or raise ConfigError naming them."""
    served = courses_of(base)
    if name is None:
        return served[0]
    for course in served:
        if course.name == name:
            return course
    listed = ", ".join([f"{served[0].name} (the default, TEXTBOUND_COLLECTION)"]
                       + [c.name for c in served[1:]])
    raise ConfigError(f"no course {name!r} here: the courses are {listed}; a further course is "
                      "named in TEXTBOUND_COURSES")


class CourseKeys(KeyStore):
    """The server's key store as one course sees it: the same keys, its own thread owners.

    A thread id is recorded as `<prefix><id>`, so the same id in two courses names two
    conversations with two owners. The store itself is the server's (closed by it).
    """

    def __init__(self, store: KeyStore, prefix: str) -> None:
        self.store, self.prefix = store, prefix
        self.placeholder = store.placeholder

    def _run(self, sql: str, params: Sequence[Any] = (), *, fetch: bool = False
             ) -> list[tuple[Any, ...]]:
        return self.store._run(sql, params, fetch=fetch)

    def owner(self, thread_id: str) -> str | None:
        """Return the key that opened the course's thread `thread_id`, if any."""
        return super().owner(self.prefix + thread_id)

    def claim(self, thread_id: str, key_id: str) -> str:
        """Make `key_id` the owner of the course's thread unless it has one; return the owner."""
        return super().claim(self.prefix + thread_id, key_id)

    def forget(self, thread_id: str) -> None:
        """Drop the owner of the course's deleted thread."""
        super().forget(self.prefix + thread_id)

    def close(self) -> None:
        """Leave the server's store open: the server closes it."""

