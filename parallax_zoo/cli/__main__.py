"""`python -m parallax_zoo.cli`, the same as `parallax-zoo`."""

import sys

from parallax_zoo.cli import main

sys.exit(main())
