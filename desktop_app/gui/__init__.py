"""The PySide6 window: presentation and threading glue over core/ (one feature per folder)."""
