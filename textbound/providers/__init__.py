"""Model providers: embeddings, chat clients, the local chat model."""
