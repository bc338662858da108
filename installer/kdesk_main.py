"""PyInstaller entry point: the bundled `kdesk` executable (same as the `kdesk` console script)."""

import multiprocessing
import sys

from desktop_app.cli.main import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # torch/tokenizers may spawn helpers in a frozen app
    sys.exit(main())
