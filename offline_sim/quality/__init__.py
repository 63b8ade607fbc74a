"""Grasp quality and its robustness to pose error, independent of any simulator: measure A
(Ferrari-Canny ε over linearised friction cones), Kim et al.'s Monte Carlo over half-normal
pose errors with early discard, and Weisz & Allen's P(force closure) grid. Both dynamic
(dynamics/) and kinematic (kinematic/) trials feed them through callbacks; scipy is imported
only where qhull or rotations are needed.
"""
from ._uncertainty import (MonteCarloResult, MonteCarloSettings, PoseErrorModel, TrialMeasures,
                           evaluate_batched, evaluate_under_uncertainty, grid_transforms, pfc_grid,
                           probability_of_force_closure, sample_pose_errors)
from ._wrench import contact_wrenches, ferrari_canny

__all__ = ["MonteCarloResult", "MonteCarloSettings", "PoseErrorModel", "TrialMeasures",
           "contact_wrenches", "evaluate_batched", "evaluate_under_uncertainty", "ferrari_canny",
           "grid_transforms", "pfc_grid", "probability_of_force_closure", "sample_pose_errors"]
