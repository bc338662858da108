"""The identification card shown in the chat for a photo."""
