"""Everything the window, `kdesk` and the benchmarks share; never imports Qt (docs/architecture.md)."""
