"""``python -m onboard.cli`` runs the graspline command line."""
import sys

from onboard.cli import main

sys.exit(main())
