"""``python -m tvm_tgraph`` runs the ``tgraph`` command."""

import sys

from .cli import main

sys.exit(main())
