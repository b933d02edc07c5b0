"""Evaluate the graph on labelled question sets: how often it answers, refuses and leaks.

A question file holds one `{id, question, expected, answers, doc_id, kind}` per line (the SQuAD 2.0
and ClapNQ benchmarks in shared/data, and corpus/questions.jsonl for the bundled textbook). Every
question goes through the real compiled graph, once per policy compared, and the report counts per
kind how many were answered, refused (and why), and for answerable questions how many answers hold
a gold answer.

One module per job: `metrics` (the correctness rule and the per-kind rates, pure), `data`
(question files, corpus fingerprints), `conversations` (conversation files: each conversation in
its own thread, scored per turn, with its standalone rewrites), `runner` (ingest, run the graph,
collect records), `report` (Markdown), `plots` (PNG), `experiments` (the same questions as a
LangSmith experiment) and `command` (`textbound eval`). This package re-exports their public names.
"""

from textbound.quality.evaluation.command import eval_command, eval_settings, run_experiments
from textbound.quality.evaluation.conversations import (
    REWRITE_F1,
    REWRITE_RECOVERED,
    is_conversation_file,
    load_conversations,
    rewrite_overlap,
    rewrite_recovered,
    rewrite_right,
    run_conversations,
    summarize_conversations,
)
from textbound.quality.evaluation.data import (
    corpus_fingerprint,
    file_sha256,
    load_questions,
    sample_questions,
)
from textbound.quality.evaluation.experiments import (
    ExperimentSummary,
    require_langsmith_key,
    run_langsmith_experiment,
)
from textbound.quality.evaluation.metrics import (
    LONG_FORM_WORDS,
    RECALL_CUTOFF,
    answer_matches,
    normalize_answer,
    percentile,
    refusal_label,
    summarize,
    tradeoff_curve,
)
from textbound.quality.evaluation.plots import write_plots
from textbound.quality.evaluation.report import write_markdown
from textbound.quality.evaluation.runner import (
    MemoEmbeddings,
    evaluate,
    make_record,
    prepared_graph,
    progress_bar,
    run_questions,
)

__all__ = [
    "LONG_FORM_WORDS",
    "RECALL_CUTOFF",
    "REWRITE_F1",
    "REWRITE_RECOVERED",
    "ExperimentSummary",
    "MemoEmbeddings",
    "answer_matches",
    "corpus_fingerprint",
    "eval_command",
    "eval_settings",
    "evaluate",
    "file_sha256",
    "is_conversation_file",
    "load_conversations",
    "load_questions",
    "make_record",
    "normalize_answer",
    "percentile",
    "prepared_graph",
    "progress_bar",
    "refusal_label",
    "require_langsmith_key",
    "rewrite_overlap",
    "rewrite_recovered",
    "rewrite_right",
    "run_conversations",
    "run_experiments",
    "run_langsmith_experiment",
    "run_questions",
    "sample_questions",
    "summarize",
    "summarize_conversations",
    "tradeoff_curve",
    "write_markdown",
    "write_plots",
]
