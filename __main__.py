"""``python -m ecngym`` is the ``ecngym`` command."""

import sys

from ecngym.cli import main

sys.exit(main())
