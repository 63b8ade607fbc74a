"""``python -m onboard`` runs the graspline command line."""
import sys

from .cli import main

sys.exit(main())
