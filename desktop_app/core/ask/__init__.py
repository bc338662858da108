"""Asking: route a question, retrieve, answer with citations (LLM or extractive), as typed events."""
