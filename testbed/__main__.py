"""``python -m testbed``: the ``testbed`` command line."""
import sys

from testbed.cli import main

sys.exit(main())
