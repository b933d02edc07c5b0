"""Answerability features on top of MiniLM retrieval: the 2026-11-22 study (see README.md)."""
