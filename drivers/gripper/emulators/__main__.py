"""The emulator child process started by EmulatorProcess (not a user entry point)."""
import sys

from ._process import _child_main

_child_main(sys.argv[1:])
