"""Benchmarks as plain functions over the app's own code paths; `kdesk bench ...` prints their figures."""
