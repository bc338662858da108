"""Models: what the models folder holds and what serves each role, fetching them, chat and embedding clients."""
