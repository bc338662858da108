"""The knowledge base: the knowledge folder, its sync into Chroma, BM25 and dense indexes, and search."""
