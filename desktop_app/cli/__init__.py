"""`kdesk`: the command line over the same core as the desktop app (entry point: cli/main.py)."""
