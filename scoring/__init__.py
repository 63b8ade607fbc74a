"""Pure computation: the image-space antipodal grasp measure and the candidate search.

numpy and numba only; nothing of graspline is imported from here.
"""
from ._measure import PreparedSilhouette, prepare_silhouette, score_candidates
from ._normals import contact_normal, disc_weights, normal_field
from ._types import GripperProjection, MeasureParams, Scores

__all__ = [
    "GripperProjection",
    "MeasureParams",
    "PreparedSilhouette",
    "Scores",
    "contact_normal",
    "disc_weights",
    "normal_field",
    "prepare_silhouette",
    "score_candidates",
]
