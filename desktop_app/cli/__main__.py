"""`python -m desktop_app.cli`: the same as `kdesk`."""

import sys

from desktop_app.cli.main import main

sys.exit(main())
