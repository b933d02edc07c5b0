"""Every choice and threshold textbound uses, read from defaults, then `.env`, then the environment.

Scores and thresholds are **raw cosine similarity** in [-1, 1] as Qdrant returns it for a cosine
collection (`similarity_search_with_score`), never LangChain's rescaled (s + 1) / 2 "relevance".
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from textbound.errors import ConfigError
from textbound.setting_errors import allowed_values, describe_error, split_list
from textbound.tunables import TUNABLE_NAMES, TUNABLES, TunableValues

__all__ = ["Settings", "default_data_dir", "get_settings", "load_settings", "PACKAGE_ROOT"]

COURSE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
"""What a collection (so a course) may be called: the `collection` setting's pattern."""

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
"""The checkout (or install) root: `corpus/` and `calibration/` live beside the packages."""


def default_data_dir() -> Path:
    """Return where collections, the audit log and caches live unless configured otherwise."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "textbound"


class _Settings(BaseSettings):
    """textbound's settings; each one is `TEXTBOUND_<NAME>` in the environment or `.env`.

    The per-run tunables are added from their declaration (`textbound.tunables.TunableValues`)
    to make `Settings`; mypy sees them through `tunable_values()`.
    """

    model_config = SettingsConfigDict(
        env_prefix="TEXTBOUND_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        validate_default=True,
    )

    # --- where things live -------------------------------------------------------------------
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Folder for the embedded Qdrant store, the audit log and the model cache.",
    )
    qdrant_path: Path | None = Field(
        default=None,
        description="Embedded (on-disk) Qdrant folder; defaults to <data_dir>/qdrant. The Edge "
        "store keeps one shard per collection in its edge/ subfolder. Ignored when qdrant_url "
        "is set.",
    )
    store: Literal["edge", "local"] = Field(
        default="edge",
        description="Embedded store engine: 'edge' (Qdrant Edge, Qdrant's Rust engine "
        "in-process, HNSW) or 'local' (qdrant-client's pure-Python local mode, the previous "
        "default, kept for one release; `textbound migrate-store` converts its collections). "
        "Ignored when qdrant_url is set.",
    )
    qdrant_url: str | None = Field(
        default=None,
        description="URL of a Qdrant server or cluster, e.g. http://localhost:6333. "
        "When set, the embedded store is not used.",
    )
    qdrant_api_key: SecretStr | None = Field(
        default=None, description="API key for the Qdrant server (never logged)."
    )
    qdrant_timeout_s: float = Field(
        default=10.0, gt=0, le=300, description="Timeout for one Qdrant server request, seconds."
    )
    collection: str = Field(
        default="textbook",
        pattern=rf"^{COURSE_NAME.pattern}$",
        description="Qdrant collection holding the document chunks.",
    )
    courses: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Further courses one server serves beside the collection's, each a "
        "collection of its own, at /c/<course>/ (page and API), comma-separated "
        "(physics,chemistry) or as a JSON list; empty: one course. Each keeps its own keys, "
        "conversations, audit log, feedback and report, and a command's --collection naming "
        "one means that course (docs/deployment.md).",
    )
    corpus_dir: Path = Field(
        default=PACKAGE_ROOT / "corpus",
        description="Folder ingested by `textbound ingest` with no path and by `make run`.",
    )
    profile: Path | None = Field(
        default=None,
        description="Course profile YAML (title, scope, chapters, out-of-scope topics, "
        "greeting) for the collection served; wins over <data_dir>/profiles/<collection>.yaml, "
        "which `textbound init` writes. Unset: that file, else the built-in default "
        "(docs/course-profile.md).",
    )
    audit_log: Path | None = Field(
        default=None,
        description="JSON-lines audit log, one line per response, and the ratings beside it "
        "(feedback.jsonl); defaults to <data_dir>/audit.jsonl. With "
        "TEXTBOUND_CHECKPOINTER=postgres both are rows of that database instead, shared by "
        "every server process. Set to an empty string to disable.",
    )

    # --- conversations -----------------------------------------------------------------------
    checkpointer: Literal["sqlite", "postgres", "memory", "off"] = Field(
        default="sqlite",
        description="Where conversations (threads) are kept: 'sqlite' (<data_dir>/threads.sqlite), "
        "'postgres' (checkpoint_url; several server processes share it), 'memory' (until the "
        "process ends) or 'off' (every question stands alone). LangGraph Studio keeps its own.",
    )
    checkpoint_url: SecretStr | None = Field(
        default=None,
        description="PostgreSQL connection string (postgresql://user:password@host:5432/db) for "
        "checkpointer=postgres.",
    )
    history_turns: int = Field(
        default=8, ge=1, le=200,
        description="Turns of a conversation kept for follow-up questions (older ones are "
        "dropped).",
    )
    history_chars: int = Field(
        default=4000, ge=200, le=200_000,
        description="Characters of a conversation kept (questions and answers); the oldest turns "
        "are dropped first.",
    )

    # --- embeddings --------------------------------------------------------------------------
    embedding_provider: Literal["local", "openai"] = Field(
        default="local",
        description="'local': all-MiniLM-L6-v2 on ONNX Runtime, offline, no key. "
        "'openai': OpenAI (or compatible) embeddings API.",
    )
    embedding_model: str | None = Field(
        default=None,
        description="Embedding model name; defaults to all-MiniLM-L6-v2 (local) or "
        "text-embedding-3-small (openai).",
    )
    embedding_base_url: str | None = Field(
        default=None, description="Base URL of an OpenAI-compatible embeddings server."
    )
    embedding_batch_size: int = Field(
        default=16, ge=1, le=512, description="Texts per embedding batch during ingestion."
    )
    sentence_vectors: bool = Field(
        default=True,
        description="Also embed each chunk's sentences at ingestion and store them with it, so an "
        "extractive answer needs no embedding but the question's (ingestion embeds about twice "
        "as much).",
    )

    # --- generation --------------------------------------------------------------------------
    chat_model: str | None = Field(
        default=None,
        description="init_chat_model string, e.g. 'openai:gpt-4o-mini'. None by default.",
    )
    chat_base_url: str | None = Field(
        default=None,
        description="Base URL of an OpenAI-compatible chat server (vLLM, Ollama, llama.cpp).",
    )
    chat_api_key: SecretStr | None = Field(
        default=None,
        description="API key for chat_base_url servers; OpenAI itself reads OPENAI_API_KEY.",
    )
    chat_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="Timeout for one chat model call, seconds."
    )
    chat_max_tokens: int = Field(
        default=512, ge=16, le=32_000,
        description="Most tokens one chat answer may use (a server keeps generating after a "
        "client timeout, so an unbounded answer delays the requests behind it).",
    )
    chat_max_retries: int = Field(
        default=1, ge=0, le=5, description="Retries after a failed chat model call."
    )
    chat_structured_method: Literal["json_schema", "function_calling", "json_mode"] | None = Field(
        default=None,
        description="How the chat model is asked for structured output; None keeps LangChain's "
        "default for the model (json_schema for ChatOpenAI). llama-cpp-python's server needs "
        "'function_calling' (it rejects response_format json_schema).",
    )

    # --- the gates (raw cosine unless said otherwise) ------------------------------------------
    # the per-run tunables (policy, top_k, the thresholds, the generator, ...) are not written
    # here: `Settings` adds them, after every field below, from textbound/tunables.py
    calibration_file: Path | None = Field(
        default=None,
        description="Calibration JSON written by `textbound calibrate`; defaults to the one "
        "shipped for the bundled embedding model.",
    )
    max_question_chars: int = Field(
        default=2000, ge=16, le=100_000, description="Longer questions are refused as invalid."
    )
    max_selected_text_chars: int = Field(
        default=20_000, ge=100, le=1_000_000, description="Longer selections are refused."
    )
    answerability_model_dir: Path | None = Field(
        default=None,
        description="Folder holding the answerability reader (model.onnx, tokenizer.json, "
        "config.json); defaults to the shipped <checkout>/models/answerability.",
    )
    allow_gate_override: bool = Field(
        default=False,
        description="Let HTTP clients loosen thresholds per request (they can always tighten).",
    )

    # --- server ------------------------------------------------------------------------------
    api_key: SecretStr | None = Field(
        default=None,
        description="The default course's teacher key (X-API-Key), beside the keys `textbound "
        "keys create` makes. With no key at all, every HTTP route is open (docs/deployment.md).",
    )
    ask_per_minute: int = Field(
        default=30, ge=0, le=100_000,
        description="Questions one key may send a minute (/chat/*); more get 429 with "
        "Retry-After. 0: no limit.",
    )
    rate_per_minute: int = Field(
        default=30, ge=0, le=100_000,
        description="Ratings one key may send a minute (POST /feedback); more get 429 with "
        "Retry-After. 0: no limit.",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Origins allowed by CORS on the HTTP server, "
        "comma-separated (https://a.example,https://b.example) or as a JSON list; empty for none.",
    )
    max_request_bytes: int = Field(
        default=1_000_000, ge=1_000, le=50_000_000, description="Largest HTTP request body."
    )
    max_upload_bytes: int = Field(
        default=50_000_000, ge=1_000, le=1_000_000_000,
        description="Largest document a teacher may upload to PUT /api/documents/{name} (larger "
        "ones get 413); it must also arrive within request_read_timeout_s.",
    )
    ingest_time_limit_s: float = Field(
        default=300.0, gt=0, le=86_400,
        description="Most seconds one document may take to read and embed when uploaded or "
        "re-ingested over HTTP; a slower one fails its job with the reason, so the next upload "
        "is not held behind it.",
    )
    max_batch_size: int = Field(
        default=32, ge=1, le=1_000,
        description="Most inputs one /chat/batch request may hold (larger ones get 413).",
    )
    batch_concurrency: int = Field(
        default=2, ge=1, le=64,
        description="Batch inputs answered at once, across all /chat/batch requests, so a batch "
        "never starves single questions.",
    )
    chat_max_concurrency: int = Field(
        default=4, ge=1, le=256,
        description="Chat model calls in flight at once; a question beyond it is refused at once "
        "(generation_error) instead of queueing behind a slow model.",
    )
    chat_deadline_s: float = Field(
        default=30.0, gt=0, le=1_200,
        description="Most seconds one question may wait for the chat model, retries included: "
        "each attempt's client timeout is the smaller of chat_timeout_s and this divided by "
        "the attempts.",
    )
    request_read_timeout_s: float = Field(
        default=10.0, gt=0, le=300,
        description="Most seconds a client may take to send a request's headers and body; "
        "a slower connection is closed (408).",
    )

    @property
    def qdrant_folder(self) -> Path:
        """The embedded store's folder: `qdrant_path`, which validation always fills in."""
        return self.qdrant_path if self.qdrant_path is not None else self.data_dir / "qdrant"

    @field_validator("cors_origins", "courses", mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        return split_list(value)

    @field_validator("courses")
    @classmethod
    def _course_names(cls, value: list[str]) -> list[str]:
        # each is a collection name; listed twice is listed once
        for name in value:
            if COURSE_NAME.fullmatch(name) is None:
                raise ValueError(f"{name!r} is not a course name: a collection name, 1 to 128 "
                                 "letters, digits, '_', '.' or '-'")
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _fill_derived(self) -> _Settings:
        # the collection is the default course: listed among the further ones too, it is not one
        if self.collection in self.courses:
            self.courses = [c for c in self.courses if c != self.collection]
        if self.qdrant_path is None:
            self.qdrant_path = self.data_dir / "qdrant"
        if self.audit_log is None:
            self.audit_log = self.data_dir / "audit.jsonl"
        elif str(self.audit_log) in ("", "."):
            self.audit_log = None
        if self.embedding_model is None:
            local = self.embedding_provider == "local"
            self.embedding_model = "all-MiniLM-L6-v2" if local else "text-embedding-3-small"
        if self.calibration_file is None:
            self.calibration_file = PACKAGE_ROOT / "calibration" / f"{self.embedding_model}.json"
        return self

    @property
    def audit_enabled(self) -> bool:
        """Whether responses are appended to the audit log."""
        return self.audit_log is not None

    def tunable_values(self) -> TunableValues[float | None]:
        """Return the per-run tunables as these settings set them (None: the calibration's)."""
        return TunableValues(**{name: getattr(self, name) for name in TUNABLE_NAMES})


def _tunable_fields() -> dict[str, Any]:
    """Return the `Settings` field of each tunable: its type, default, bounds and description.

    A tunable the calibration supplies is optional and defaults to None (the policy's value).
    """
    return {t.name: (t.settings_annotation,
                     Field(default=None if t.from_calibration else t.default, ge=t.ge, le=t.le,
                           description=t.description))
            for t in TUNABLES}


if TYPE_CHECKING:
    Settings = _Settings
else:
    Settings = create_model("Settings", __base__=_Settings, __module__=__name__,
                            __doc__=_Settings.__doc__, **_tunable_fields())


def load_settings(**values: Any) -> Settings:
    """Return Settings, or raise ConfigError with one line per bad value (no traceback)."""
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise ConfigError(describe_error(exc, Settings.model_fields)) from None
    except SettingsError as exc:  # a value the environment source could not even parse
        found = re.search(r'field "(\w+)"', str(exc))
        name = found.group(1) if found else ""
        if name not in Settings.model_fields:
            raise ConfigError(f"invalid setting: {exc}") from None
        raw = os.environ.get(f"TEXTBOUND_{name.upper()}", "")
        allowed = allowed_values(Settings.model_fields[name])
        raise ConfigError(f"invalid setting: TEXTBOUND_{name.upper()}={raw}: "
                          + (f"expected {allowed}" if allowed else "cannot be read")) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Return the process-wide settings (read once; tests build their own `Settings`)."""
    return load_settings()
