"""Value types of the vision stage: object masks, the support plane and silhouettes."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from scoring import DepthParams, DepthView, GripperProjection, check_pose, check_positive


def check_mask(mask: object, name: str, shape: tuple[int, int] | None = None) -> np.ndarray:
    """Return ``mask`` as an (H, W) bool array, checking its type and (optionally) its shape."""
    if not isinstance(mask, np.ndarray):
        raise ValueError(f"{name} must be a numpy array, got {type(mask).__name__}")
    if mask.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {mask.shape}")
    if mask.dtype != np.bool_:
        raise ValueError(f"{name} must have dtype bool, got {mask.dtype}")
    if shape is not None and mask.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {mask.shape}")
    return mask


@dataclass
class ObjectMask:
    """One object found in a frame.

    mask : (H, W) bool, the object's pixels in the frame's image, not changed in place once
    the ObjectMask is made (box_px is computed once). label : class name, or None for
    class-agnostic backends. confidence : in [0, 1], the backend's own measure (documented by
    each backend). backend : name of the backend that produced it ("tabletop", ...).
    """

    mask: np.ndarray
    label: str | None
    confidence: float
    backend: str

    def __post_init__(self) -> None:
        check_mask(self.mask, "ObjectMask.mask")
        c = float(self.confidence)
        if not 0.0 <= c <= 1.0:
            raise ValueError(f"ObjectMask.confidence must be in [0, 1], got {self.confidence!r}")
        self.confidence = c

    @property
    def area_px(self) -> int:
        """Number of pixels in the mask."""
        return int(np.count_nonzero(self.mask))

    @cached_property
    def box_px(self) -> tuple[int, int, int, int]:
        """(column, row, width, height) of the mask's bounding box, pixels (cv2.boundingRect;
        zero width and height for an empty mask). Computed on first use, once: the stages
        after segmentation read it several times a frame, and each computing it was a pass
        over the whole frame. A segmenter that knows it may set it."""
        c0, r0, w, h = cv2.boundingRect(self.mask.view(np.uint8))
        return int(c0), int(r0), int(w), int(h)


@dataclass(frozen=True)
class SupportPlane:
    """The surface objects rest on, in the camera frame of the frame it was fitted to.

    normal : (3,) unit vector pointing to the camera's side of the plane. offset_m : so that
    ``normal @ p + offset_m`` is the height of a camera-frame point p above the plane, metres
    (the camera itself is at height offset_m > 0). n_inliers : points within the fit
    tolerance; rms_m : their RMS distance to the plane, metres.
    """

    normal: np.ndarray
    offset_m: float
    n_inliers: int
    rms_m: float

    def height_m(self, points_camera: np.ndarray) -> np.ndarray:
        """Heights above the plane, metres, of (..., 3) camera-frame points (metres)."""
        return np.asarray(points_camera) @ self.normal + self.offset_m

    def in_base(self, T_base_camera: np.ndarray) -> tuple[np.ndarray, float]:
        """(normal, offset_m) of the same plane for base-frame points."""
        T = np.asarray(T_base_camera, np.float64)
        n = T[:3, :3] @ self.normal
        return n, float(self.offset_m - n @ T[:3, 3])


@dataclass
class Silhouette:
    """What a parallel gripper approaching along one axis meets of an object (Tan's cross-section
    remark): the object's points above the fingertips, projected orthographically along the
    approach axis into a binary image.

    image : (H, W) bool, everything the fingers meet at that depth: the target and any
        obstacle points above the fingertips; score grasps on this.
    target : (H, W) bool, the target object's own part of ``image`` (``search_grasps(target=)``).
    metres_per_px : side of one square pixel, metres.
    T_base_plane : 4 x 4 pose of the projection plane in the base frame. Its origin is the
        CENTRE of pixel (0, 0) at the fingertip level; x runs along image columns (u), y along
        rows (v), z is the approach direction (from the gripper into the object). The centre of
        pixel (u, v) is the plane point (u * metres_per_px, v * metres_per_px, 0); points of the
        silhouette lie at plane z <= 0 (above the fingertips, towards the gripper).
    grasp_height_m : fingertip height: base-frame z of the fingertip plane at the image centre
        (for a vertical approach the whole plane is at this height).
    insertion_depth_m : how far the fingertips are past the object's first point along the
        approach, metres (the asked-for depth, less any clamp that keeps them off the support).
    height_m : (H, W) float32, height of the first surface met in each pixel (target or
        obstacle) above the fingertip plane, metres (negative below it); NaN where no depth
        sample falls. None when not measured.
    floor_m : distance from the fingertip plane down to the support along the approach under
        the object, metres; NaN without a support plane.
    volume_m3, centre_of_mass_px : the target's volume taken as solid under its seen surface
        down to the support, and that volume's centre in (column, row) pixels (NaN without a
        support plane): the mass estimate and the lever of the gravity torque; with the
        ``attached`` pixels' volume joined in when silhouette() was given some.
    footprint : (H, W) bool, the whole target seen along the approach, below the fingertips
        too (what runs on under a contact tilts it).
    footprint_height_m : (H, W) float32, the height of the whole target's seen surface above
        the fingertip plane, metres, negative below it (NaN off the footprint): whether what
        runs on under a contact reaches the pad's lower edge.
    target_read : (H, W) bool, the target as its depth readings alone draw it: without the
        sensor's holes at its edge, which the segmenter claims and ``target`` fills with the
        object's depth (a band 1-4 mm wide, widest on the side facing the camera); where the
        loop centres the jaw. None: not drawn.
    unseen : (H, W) bool, the plane's pixels the camera does not see, at the fingertips' depth
        or at the object's top: past the edge of its view, where an object cut off by the
        image's border runs on. They are drawn into ``image`` as an obstacle as tall as the
        object's top (``height_m`` = insertion_depth_m), so that no finger is planned to land
        where nothing was seen. None: not drawn.
    holes_left_out : whether the whole silhouette is drawn from the readings alone, the
        sensor's holes at the object's edge left out (``ProjectedObject.readings_only``):
        then ``target`` is ``target_read``.
    """

    image: np.ndarray
    target: np.ndarray
    metres_per_px: float
    T_base_plane: np.ndarray
    grasp_height_m: float
    insertion_depth_m: float
    height_m: np.ndarray | None = None
    floor_m: float = math.nan
    volume_m3: float = 0.0
    centre_of_mass_px: np.ndarray | None = None
    footprint: np.ndarray | None = None
    footprint_height_m: np.ndarray | None = None
    target_read: np.ndarray | None = None
    unseen: np.ndarray | None = None
    holes_left_out: bool = False

    def __post_init__(self) -> None:
        check_mask(self.image, "Silhouette.image")
        check_mask(self.target, "Silhouette.target", self.image.shape)
        if self.target_read is not None:
            check_mask(self.target_read, "Silhouette.target_read", self.image.shape)
        if self.unseen is not None:
            check_mask(self.unseen, "Silhouette.unseen", self.image.shape)
        self.metres_per_px = check_positive(self.metres_per_px, "metres_per_px", "Silhouette")
        self.T_base_plane = check_pose(self.T_base_plane, "Silhouette.T_base_plane")
        if self.height_m is not None and np.shape(self.height_m) != self.image.shape:
            raise ValueError(f"Silhouette.height_m must have the image's shape {self.image.shape}, "
                             f"got {np.shape(self.height_m)}")

    @property
    def shape(self) -> tuple[int, int]:
        """(H, W) of the image, pixels."""
        return self.image.shape

    @property
    def approach(self) -> np.ndarray:
        """(3,) unit approach direction in the base frame (the plane's z axis)."""
        return self.T_base_plane[:3, 2].copy()

    @property
    def runs_out_of_view(self) -> bool:
        """Whether the target meets the unseen plane (``unseen``): the image's border cuts
        the object, and what lies beyond the cut is not seen."""
        if self.unseen is None or not self.unseen.any():
            return False
        grown = cv2.dilate(self.target.view(np.uint8), np.ones((3, 3), np.uint8))
        return bool(np.any(grown.view(bool) & self.unseen))

    def points_m(self, x_px: np.ndarray, y_px: np.ndarray) -> np.ndarray:
        """(N, 3) base-frame points, metres, on the fingertip plane at pixel coordinates
        x_px (column) and y_px (row); pixel centres are at integer coordinates."""
        x = np.atleast_1d(np.asarray(x_px, np.float64)) * self.metres_per_px
        y = np.atleast_1d(np.asarray(y_px, np.float64)) * self.metres_per_px
        T = self.T_base_plane
        return T[:3, 3] + np.outer(x, T[:3, 0]) + np.outer(y, T[:3, 1])

    def tcp_poses(self, x_px: np.ndarray, y_px: np.ndarray, theta: np.ndarray, *,
                  tcp_to_tip_m: float = 0.0) -> np.ndarray:
        """(N, 4, 4) gripper poses ``T_base_tcp`` of image-space grasps (x, y, θ).

        The TCP frame: z = approach, x = closing direction (cos θ, sin θ) in image axes (from
        the left finger to the right one, as in scoring), y = z × x. Its origin is on the
        approach line through pixel (x, y), tcp_to_tip_m metres back (against the approach)
        from the fingertip plane: 0 puts the TCP at the fingertips.
        """
        x, y, t = np.broadcast_arrays(*(np.atleast_1d(np.asarray(a, np.float64))
                                        for a in (x_px, y_px, theta)))
        if not (np.isfinite(x).all() and np.isfinite(y).all() and np.isfinite(t).all()):
            raise ValueError("x_px, y_px and theta must be finite")
        R = self.T_base_plane[:3, :3]
        c, s = np.cos(t), np.sin(t)
        x_axis = np.outer(c, R[:, 0]) + np.outer(s, R[:, 1])
        y_axis = np.outer(-s, R[:, 0]) + np.outer(c, R[:, 1])
        out = np.zeros((x.size, 4, 4))
        out[:, :3, 0] = x_axis
        out[:, :3, 1] = y_axis
        out[:, :3, 2] = R[:, 2]
        out[:, :3, 3] = self.points_m(x, y) - float(tcp_to_tip_m) * R[:, 2]
        out[:, 3, 3] = 1.0
        return out

    def tcp_pose(self, x_px: float, y_px: float, theta: float, *,
                 tcp_to_tip_m: float = 0.0) -> np.ndarray:
        """4 x 4 ``T_base_tcp`` of one image-space grasp (see ``tcp_poses``)."""
        return self.tcp_poses(x_px, y_px, theta, tcp_to_tip_m=tcp_to_tip_m)[0]

    def grasp_of(self, T_base_tcp: np.ndarray, *,
                 angle_tol_rad: float = 1e-6) -> tuple[float, float, float]:
        """(x_px, y_px, θ) of a TCP pose, θ in [0, 2π): the inverse of ``tcp_pose``.

        The TCP's z axis must be the approach within angle_tol_rad radians; its origin may be at
        any depth along the approach (the pixel is where that line crosses the plane).
        """
        T = check_pose(T_base_tcp, "T_base_tcp")
        R = self.T_base_plane[:3, :3]
        tilt = math.acos(min(1.0, max(-1.0, float(T[:3, 2] @ R[:, 2]))))
        if tilt > angle_tol_rad:
            raise ValueError(f"T_base_tcp's z axis must be the silhouette's approach, got "
                             f"{math.degrees(tilt):.3g} deg away from it")
        q = R.T @ (T[:3, 3] - self.T_base_plane[:3, 3])
        xc = R.T @ T[:3, 0]
        theta = math.atan2(xc[1], xc[0]) % (2.0 * math.pi)
        return q[0] / self.metres_per_px, q[1] / self.metres_per_px, theta

    def depth_view(self, mass_kg: float | None = None,
                   density_kg_m3: float = DepthParams().density_kg_m3,
                   max_guessed_mass_kg: float = DepthParams().max_guessed_mass_kg) -> DepthView:
        """The depth terms' view of the target (``scoring.DepthView``): its mass is mass_kg
        when known (a database's or a label's), else its seen volume times density_kg_m3, at
        most max_guessed_mass_kg (NaN without a support plane). Raises ValueError when
        height_m was not measured."""
        if self.height_m is None:
            raise ValueError("this Silhouette has no height_m: make it with vision.silhouette "
                             "from an RGB-D frame")
        if mass_kg is None:
            mass_kg = min(self.volume_m3 * density_kg_m3, max_guessed_mass_kg) \
                if self.volume_m3 > 0 else math.nan
        centre = self.centre_of_mass_px
        if centre is not None and not np.all(np.isfinite(centre)):
            centre = None
        return DepthView(self.height_m, self.metres_per_px,
                         None if centre is None else (float(centre[0]), float(centre[1])),
                         float(mass_kg), self.footprint,
                         footprint_height_m=self.footprint_height_m)

    def gripper_projection(self, finger_width_m: float, open_width_m: float,
                           n_lines: int | None = None) -> GripperProjection:
        """The gripper in this image's pixels: finger width and opening (metres) divided by
        metres_per_px; n_lines defaults to one grasp line per pixel of finger width (Tan:
        n in [1, w]), at least 1."""
        check_positive(finger_width_m, "finger_width_m", "gripper_projection")
        check_positive(open_width_m, "open_width_m", "gripper_projection")
        w = finger_width_m / self.metres_per_px
        r = open_width_m / self.metres_per_px
        if n_lines is None:
            n_lines = max(1, int(math.floor(w)))
        return GripperProjection(finger_width_px=w, open_width_px=r, n_lines=n_lines)
