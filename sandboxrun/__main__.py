"""`python -m sandboxrun` is the `sandboxrun` command."""

import sys

from ._client import main

sys.exit(main())
