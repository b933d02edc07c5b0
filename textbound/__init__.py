"""textbound: answers only from your documents, cited, or a refusal with a reason.

Everything around the graph lives here: settings, embeddings, the vector store, ingestion, the
audit log, the command line, the HTTP server and reader page, evaluation and analytics.
"""

__version__ = "0.1.0"
