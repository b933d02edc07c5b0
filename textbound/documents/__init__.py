"""Documents and storage.

The vector store, ingestion, PDF parsing, upload jobs and their journal, upload names, and
which course profile is in force for a collection.
"""
