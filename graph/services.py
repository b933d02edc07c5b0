"""The outside dependencies of one graph, built once from settings (`build_services`).

`Services` is the composition root's record of what it built: the CLI and the server use it to
check health and to close the store. Nodes never see it: graph.builder hands each node only the
pieces it names (a store, an embedder, a chat client, the course profile, the reader, the reply).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textbound import course
from textbound.answer.answerability import ReaderSlot
from textbound.answer.lead import lead_weights
from textbound.documents.store import Store
from textbound.providers.chat import ChatClient
from textbound.records.audit import AuditLog
from textbound.records.shared import records_of
from textbound.seams import AnswerReader, AuditSink, ChatModel, Embedder, ProfileSource
from textbound.settings import Settings

__all__ = ["ReaderSlot", "Services", "build_services"]


@dataclass
class Services:
    """What `build_services` built for one graph; tests pass fakes for any of it."""

    settings: Settings
    embeddings: Embedder
    store: Store
    profiles: ProfileSource
    readers: ReaderSlot
    chat: ChatClient | None = None
    audit: AuditSink = field(default_factory=lambda: AuditLog(None))

    @property
    def chat_model(self) -> ChatModel | None:
        """The chat model, or None when none is configured."""
        return self.chat.model if self.chat is not None else None

    @property
    def reader(self) -> AnswerReader | None:
        """The answerability reader, or None while it is not loaded."""
        return self.readers.reader

    @property
    def scope(self) -> course.Profile:
        """The course profile in force now."""
        return self.profiles.current()


def build_services(
    *,
    settings: Settings | None = None,
    chat_model: ChatModel | None = None,
    embeddings: Embedder | None = None,
    store: Store | None = None,
    reader: AnswerReader | None = None,
    profile: course.Profile | None = None,
) -> Services:
    """Create the services from settings, keeping any dependency passed in.

    With `settings.answerability` on and no reader passed, the answerability model is loaded
    here, once per process: a missing or corrupt model fails at start-up (SetupError naming the
    file and TEXTBOUND_ANSWERABILITY), never per request. Without `profile`, the collection's
    course profile is resolved on each use (textbound.documents.profile); its file, if any, is
    checked here so a bad one fails at start-up (ProfileError naming the file), as are the
    extractive answer's lead weights (calibration/lead.json: ConfigError naming the file).
    """
    from textbound.documents.store import open_store
    from textbound.providers.embeddings import build_embeddings
    from textbound.settings import get_settings

    settings = settings or get_settings()
    embeddings = embeddings or build_embeddings(settings)
    if store is None:
        store = open_store(settings, embeddings)  # type: ignore[arg-type]
    if chat_model is None and settings.chat_model:
        from textbound.providers.chat import build_chat_model

        chat_model = build_chat_model(settings)
    if chat_model is None and settings.tunable_values().generator == "chat":
        from textbound.errors import NO_CHAT_MODEL, ConfigError

        raise ConfigError(f"TEXTBOUND_GENERATOR=chat but {NO_CHAT_MODEL}")
    lead_weights()  # a missing or broken calibration/lead.json fails here, naming the file
    readers = ReaderSlot(reader, getattr(settings, "answerability_model_dir", None))
    if reader is None and settings.tunable_values().answerability:
        readers.get()
    profiles: ProfileSource
    if profile is None:
        from textbound.documents.profile import ProfileResolver, check_profile

        check_profile(settings, store.collection)
        profiles = ProfileResolver(settings, store.collection, store.table_of_contents)
    else:
        from textbound.documents.profile import FixedProfile

        profiles = FixedProfile(profile)
    chat = ChatClient.from_settings(chat_model, settings) if chat_model is not None else None
    return Services(settings=settings, embeddings=embeddings, store=store, profiles=profiles,
                    readers=readers, chat=chat, audit=records_of(settings).audit)
