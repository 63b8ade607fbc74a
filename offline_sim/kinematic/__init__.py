"""Kinematic grasp closing against a fixed object, and Weisz & Allen's P(force closure): the
hand approaches and its joints close by MuJoCo's collision queries alone (no dynamics; the
object never moves), and P(fc) is the share of an (x, y, θ) grid of object displacements on
which the contacts reached are force closure. mujoco is imported only when a closer is
built, and the Numba kernels of a closing step compile on its first use.
"""
from ._closer import KinematicCloser
from ._contacts import ClosedGrasp
from ._pfc import PfcResult
from ._settings import ClosingSettings

__all__ = ["ClosedGrasp", "ClosingSettings", "KinematicCloser", "PfcResult"]
