"""`python -m sandboxrun` is the `sandboxrun` command."""

import sys

from ._cli import main

sys.exit(main())
