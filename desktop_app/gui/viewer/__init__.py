"""The source viewer: a cited PDF page or text passage."""
