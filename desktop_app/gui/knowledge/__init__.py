"""The knowledge panel: documents table, drop zone, collections, indexing progress, the folder watcher."""
