"""Chat models: the OpenAI-compatible client, the in-process GGUF server, and the factory that picks one."""
