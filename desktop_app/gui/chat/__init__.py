"""The chat column: questions, streamed answers with citation chips, photo drops."""
