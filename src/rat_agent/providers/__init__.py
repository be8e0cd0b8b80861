"""Model access: chat models by name, the bundled llama.cpp server, embeddings, run costs."""
