"""Database grasps in the scene: placed by the object's estimated pose, filtered against the
scene (reach, collision with the height map, image-space consistency), ranked, and looked up
by nearest hand pose. Everything runs on whole arrays (numpy), no Python loop per grasp.

Frames: ``T_base_object`` the recognised object's pose; a database grasp is ``T_object_hand``
(the hand's TCP frame, z = approach, x = the closing line for two-sided hands), so the placed
grasp is ``T_base_hand = T_base_object @ T_object_hand``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import cKDTree

from drivers.camera import RGBDFrame
from geometry import matrix_to_quat
from scoring import GraspTable
from vision import Silhouette

from .._cellfile import DatabaseConfig

# reason codes, in the order the checks run (a grasp keeps the first reason that rejects it)
(KEPT, OUTSIDE_CONE, OUTSIDE_WORKSPACE, COLLISION, MISSES_OBJECT, FINGER_ON_OBJECT,
 NO_RANK) = range(7)
REJECT_REASONS: dict[int, str] = {
    KEPT: "kept",
    OUTSIDE_CONE: "approach outside the cone around straight down",
    OUTSIDE_WORKSPACE: "TCP outside the workspace",
    COLLISION: "hand hits the scene (height map) at the pre-grasp or along the approach",
    MISSES_OBJECT: "closing line misses the object's silhouette",
    FINGER_ON_OBJECT: "a fingertip lands on the object's silhouette (object wider than the hand)",
    NO_RANK: "no ranking value (P(fc) not computed for this grasp)",
}
# short names of the codes, for trial-log feature keys ("db_reject_collision")
REJECT_KEYS: dict[int, str] = {KEPT: "kept", OUTSIDE_CONE: "cone", OUTSIDE_WORKSPACE: "workspace",
                               COLLISION: "collision", MISSES_OBJECT: "misses_object",
                               FINGER_ON_OBJECT: "finger_on_object", NO_RANK: "no_rank"}
LINE_SAMPLES = 33  # points along a projected closing line (odd: one at the centre)


# ------------------------------------------------------------------ placing
@dataclass(frozen=True)
class PlacedGrasps:
    """Database grasps placed in the base frame, struct of arrays, one row per grasp and
    equivalent pose: row ``g * len(table) + j`` is the table's row j placed by the object's
    pose turned by its g-th symmetry rotation (g = 0 the identity: rows 0..len(table)-1 are the
    table's rows in its order, placed by the pose as given).

    T_base_hand : (M, 4, 4) metres; approach_base : (M, 3) unit; quality, pfc : (M,) (pfc
    NaN where not computed); candidate : (M,) the database's candidate index; table_row : (M,)
    the row of the table; equivalent : (M,) g, the index into symmetries; symmetries : (G, 3, 3)
    the object-frame rotations the rows were placed under (identity first).
    """

    T_base_hand: np.ndarray
    approach_base: np.ndarray
    quality: np.ndarray
    pfc: np.ndarray
    candidate: np.ndarray
    table_row: np.ndarray
    equivalent: np.ndarray
    symmetries: np.ndarray

    def __len__(self) -> int:
        return len(self.candidate)


def place_grasps(table: GraspTable, T_base_object: np.ndarray,
                 symmetries: np.ndarray | None = None) -> PlacedGrasps:
    """The table's grasps placed by the object's pose T_base_object (4 x 4, metres) and, when
    symmetries ((G, 3, 3) object-frame rotations that leave its shape unchanged, identity
    first, e.g. Recognition.symmetries) are given, by every pose they make equivalent,
    ``T_base_object @ pose(R_g, 0)``: G * N rows, one batched matmul. The approach is the
    hand frame's z axis (the database's definition)."""
    T_bo = np.asarray(T_base_object, np.float64)
    if T_bo.shape != (4, 4) or not np.all(np.isfinite(T_bo)):
        raise ValueError(f"T_base_object must be a finite 4 x 4 pose, got shape {T_bo.shape}")
    R = np.eye(3)[None] if symmetries is None else np.asarray(symmetries, np.float64)
    if R.ndim != 3 or R.shape[1:] != (3, 3) or len(R) < 1 or not np.all(np.isfinite(R)) \
            or not np.allclose(R[0], np.eye(3), atol=1e-6):
        raise ValueError(f"symmetries must be finite (G, 3, 3) rotations with the identity "
                         f"first, got shape {R.shape}")
    G = len(R)
    T_oh = np.asarray(table.T_object_hand, np.float64).reshape(-1, 4, 4)
    n = len(T_oh)
    T = np.empty((G, n, 4, 4))
    T[0] = np.matmul(T_bo, T_oh)   # the pose as given: the rows as without symmetries, exactly
    if G > 1:
        T_eq = np.tile(T_bo, (G - 1, 1, 1))                          # (G - 1, 4, 4)
        T_eq[:, :3, :3] = np.matmul(T_bo[:3, :3], R[1:])
        T[1:] = np.matmul(T_eq[:, None], T_oh[None])
    T = T.reshape(G * n, 4, 4)
    return PlacedGrasps(T_base_hand=T, approach_base=np.ascontiguousarray(T[:, :3, 2]),
                        quality=np.tile(np.asarray(table.quality, np.float64), G),
                        pfc=np.tile(np.asarray(table.pfc, np.float64), G),
                        candidate=np.tile(np.asarray(table.candidate, np.int64), G),
                        table_row=np.tile(np.arange(n, dtype=np.int64), G),
                        equivalent=np.repeat(np.arange(G, dtype=np.int64), n),
                        symmetries=R.copy())


# ------------------------------------------------------------------ the hand's volume
@dataclass(frozen=True)
class HandVolume:
    """The hand as a few boxes in its TCP frame (z = approach), for the collision check,
    and its closing line for the image check.

    centre, half : (B, 3) box centres and half extents, metres, axis-aligned in the hand
    frame; each box covers a part of the open hand (palm, a finger's sweep over its preshapes),
    capsules taken as their bounding boxes. closing_half_m : half the span between opposing
    fingertips along the hand's x axis, at the TCP (z = 0).
    """

    name: str
    centre: np.ndarray
    half: np.ndarray
    closing_half_m: float

    @staticmethod
    def from_extents(name: str, boxes: list[tuple[tuple[float, float, float],
                                                  tuple[float, float, float]]],
                     closing_half_m: float) -> HandVolume:
        """A hand from boxes given as (lo, hi) corners in the hand frame, metres."""
        lo = np.array([b[0] for b in boxes], np.float64).reshape(-1, 3)
        hi = np.array([b[1] for b in boxes], np.float64).reshape(-1, 3)
        if len(lo) == 0 or np.any(hi <= lo):
            raise ValueError(f"hand volume {name!r}: each box needs lo < hi, got {boxes!r}")
        return HandVolume(name, 0.5 * (lo + hi), 0.5 * (hi - lo), float(closing_half_m))

    @staticmethod
    def for_hand(name: str) -> HandVolume:
        """The volume of a built-in hand of the offline simulation at its default dimensions
        (offline_sim.hands: parallel, three_finger, underactuated), open; ValueError else."""
        if name not in _BUILTIN_VOLUMES:
            raise ValueError(f"no hand volume for hand {name!r}: built-in ones are "
                             f"{', '.join(sorted(_BUILTIN_VOLUMES))}; give a HandVolume for "
                             f"another hand")
        boxes, half = _BUILTIN_VOLUMES[name]
        return HandVolume.from_extents(name, boxes, half)


# The built-in hands' open volumes, from offline_sim/hands/_hands.py at their defaults, in
# the TCP frame (z = approach, fingers pointing +z, palm behind at -z).
# three_finger (BH8-like): palm cylinder r 60 mm, 30 mm thick, 82 mm behind the TCP; two
# fingers on +x swinging about pivots at (25, +-25) mm by their spread (0..90 degrees: the box
# covers every spread), the thumb on -x; straight open fingers 126 mm long from 70 mm behind
# the TCP, capsules of 11 mm radius.
_BUILTIN_VOLUMES = {
    "three_finger": ([((-0.06, -0.06, -0.142), (0.06, 0.06, -0.082)),
                      ((0.014, -0.087, -0.082), (0.087, 0.087, 0.0665)),
                      ((-0.087, -0.012, -0.082), (-0.063, 0.012, 0.0665))], 0.075),
    # underactuated (ReFlex-like): palm 130 x 90 x 40 mm, fingers 115 mm from 65 mm behind the TCP
    "underactuated": ([((-0.065, -0.045, -0.11), (0.065, 0.045, -0.07)),
                       ((0.057, -0.047, -0.065), (0.073, 0.047, 0.05)),
                       ((-0.073, -0.012, -0.065), (-0.057, 0.012, 0.05))], 0.065),
    # parallel jaw: palm 133 x 42 x 30 mm, fingers 60 mm long, 85 mm open
    "parallel": ([((-0.0665, -0.021, -0.0725), (0.0665, 0.021, -0.0425)),
                  ((0.0425, -0.011, -0.0425), (0.0565, 0.011, 0.0175)),
                  ((-0.0565, -0.011, -0.0425), (-0.0425, 0.011, 0.0175))], 0.0425),
}
_BUILTIN_VOLUMES["parallel_jaw"] = _BUILTIN_VOLUMES["parallel"]


# ------------------------------------------------------------------ the height map
TABLE_BAND_M = 0.010   # a cell no higher than this above the support holds only the table
@dataclass(frozen=True)
class HeightMap:
    """The scene as a base-frame grid of the highest point seen in each cell (the target
    object left out), with a range-maximum table for O(1) box queries.

    heights : (H, W) float64, metres (base z); row r covers y in origin_y + [r, r+1) cell_m,
    column c covers x in origin_x + [c, c+1) cell_m. Cells holding only the table (nothing
    seen higher than the support's band) or nothing seen hold -inf: not obstacles; the support
    itself, at floor_z_m, is a plane the filter checks on its own.
    """

    heights: np.ndarray
    origin_xy: tuple[float, float]
    cell_m: float
    floor_z_m: float
    _table: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_table", _sparse_table(np.asarray(self.heights, np.float64)))

    def max_over(self, lo_xy: np.ndarray, hi_xy: np.ndarray) -> np.ndarray:
        """(K,) highest obstacle over each base-frame rectangle lo_xy..hi_xy ((K, 2) metres);
        -inf where the rectangle holds only the table, or none of it lies on the map."""
        H, W = self.heights.shape
        ox, oy = self.origin_xy
        c0 = np.floor((lo_xy[:, 0] - ox) / self.cell_m).astype(np.int64)
        c1 = np.floor((hi_xy[:, 0] - ox) / self.cell_m).astype(np.int64)
        r0 = np.floor((lo_xy[:, 1] - oy) / self.cell_m).astype(np.int64)
        r1 = np.floor((hi_xy[:, 1] - oy) / self.cell_m).astype(np.int64)
        off = (c1 < 0) | (r1 < 0) | (c0 >= W) | (r0 >= H)
        c0, c1 = np.clip(c0, 0, W - 1), np.clip(c1, 0, W - 1)
        r0, r1 = np.clip(r0, 0, H - 1), np.clip(r1, 0, H - 1)
        out = _range_max(self._table, r0, r1, c0, c1)
        out[off] = -np.inf
        return out


def _sparse_table(h: np.ndarray) -> np.ndarray:
    """(LY, LX, H, W) table[ky, kx, r, c] = max of h[r : r + 2^ky, c : c + 2^kx] (clipped)."""
    H, W = h.shape
    LY, LX = max(1, int(math.floor(math.log2(H))) + 1), max(1, int(math.floor(math.log2(W))) + 1)
    t = np.empty((LY, LX, H, W), np.float64)
    t[0, 0] = h
    for kx in range(1, LX):
        s = 1 << (kx - 1)
        t[0, kx] = t[0, kx - 1]
        t[0, kx, :, :W - s] = np.maximum(t[0, kx - 1, :, :W - s], t[0, kx - 1, :, s:])
    for ky in range(1, LY):
        s = 1 << (ky - 1)
        t[ky] = t[ky - 1]
        t[ky, :, :H - s] = np.maximum(t[ky - 1, :, :H - s], t[ky - 1, :, s:])
    return t


def _range_max(t: np.ndarray, r0, r1, c0, c1) -> np.ndarray:
    """Max over the inclusive cell rectangles [r0..r1] x [c0..c1] from a sparse table: four
    overlapping power-of-two blocks per rectangle."""
    ny, nx = r1 - r0 + 1, c1 - c0 + 1
    ky = np.floor(np.log2(ny)).astype(np.int64)
    kx = np.floor(np.log2(nx)).astype(np.int64)
    rb, cb = r1 - (1 << ky) + 1, c1 - (1 << kx) + 1
    return np.maximum(np.maximum(t[ky, kx, r0, c0], t[ky, kx, rb, c0]),
                      np.maximum(t[ky, kx, r0, cb], t[ky, kx, rb, cb]))


def height_map(frame: RGBDFrame, *, bounds_xy: np.ndarray, cell_m: float = 0.005,
               exclude: np.ndarray | None = None, exclude_grow_px: int = 3,
               floor_z_m: float = 0.0, stride_px: int = 2,
               table_band_m: float = TABLE_BAND_M) -> HeightMap:
    """The height map of a depth frame over the base-frame rectangle bounds_xy ([[xmin, ymin],
    [xmax, ymax]], metres): each cell the highest base-frame z seen in it. exclude : (H, W)
    bool image mask (the target object) left out, grown by exclude_grow_px pixels so that its
    edge pixels do not stand as a wall around it. Cells whose highest point lies within
    table_band_m of the support's height floor_z_m hold only the table, and cells with no
    reading (the target's own, shadows) are taken as the table: both hold -inf (no obstacle),
    since the support is checked as a plane, free of the depth noise that the highest of a
    hand footprint's table points carries (4 mm at the 90th percentile on the simulated D400
    at 0.75 m, where the margin comes on top). stride_px : every stride_px-th pixel each way (2: at 0.7 m a D435's 640 x 480 pixel is
    about 1.2 mm, so 2.4 mm steps still put several points in each 5 mm cell)."""
    depth = np.asarray(frame.depth_m, np.float64)
    ok = np.isfinite(depth) & (depth > 0)
    if exclude is not None:
        ok &= ~_grow(np.asarray(exclude, bool), exclude_grow_px)
    v, u = np.nonzero(ok[::stride_px, ::stride_px])
    v, u = v * stride_px, u * stride_px
    p_cam = frame.intrinsics.deproject_pixels(u, v, depth[v, u])
    T = frame.T_base_camera
    p = p_cam @ T[:3, :3].T + T[:3, 3]
    b = np.asarray(bounds_xy, np.float64)
    W = max(1, int(math.ceil((b[1, 0] - b[0, 0]) / cell_m)))
    H = max(1, int(math.ceil((b[1, 1] - b[0, 1]) / cell_m)))
    c = np.floor((p[:, 0] - b[0, 0]) / cell_m).astype(np.int64)
    r = np.floor((p[:, 1] - b[0, 1]) / cell_m).astype(np.int64)
    inside = (c >= 0) & (c < W) & (r >= 0) & (r < H)
    heights = np.full(H * W, -np.inf, np.float64)
    np.maximum.at(heights, r[inside] * W + c[inside], p[inside, 2])  # the highest point per cell
    heights[heights < floor_z_m + table_band_m] = -np.inf   # the table, or nothing seen
    return HeightMap(heights.reshape(H, W), (float(b[0, 0]), float(b[0, 1])), float(cell_m),
                     float(floor_z_m))


def _grow(mask: np.ndarray, px: int) -> np.ndarray:
    """mask dilated by a (2 px + 1) square (on the mask's bounding box only: fast)."""
    rows, cols = np.nonzero(np.any(mask, axis=1))[0], np.nonzero(np.any(mask, axis=0))[0]
    if px <= 0 or rows.size == 0:
        return mask
    from scipy.ndimage import binary_dilation

    H, W = mask.shape
    r0, r1 = max(rows[0] - px, 0), min(rows[-1] + px + 1, H)
    c0, c1 = max(cols[0] - px, 0), min(cols[-1] + px + 1, W)
    out = np.zeros_like(mask)
    out[r0:r1, c0:c1] = binary_dilation(mask[r0:r1, c0:c1],
                                        structure=np.ones((2 * px + 1, 2 * px + 1), bool))
    return out


# ------------------------------------------------------------------ filtering and ranking
@dataclass(frozen=True)
class DatabaseFilterSettings:
    """What a placed grasp must satisfy. approach_cone_rad : largest angle between its
    approach and straight down (base -z); workspace_lo/hi : (3,) base-frame box its TCP must
    lie in, metres; collision_margin_m : clearance the hand keeps above the height map's
    obstacles; table_tolerance_m : how far below the support plane the hand's lowest point may
    reach (the database's simulation kept the open hand off the table in the grasp's own
    resting pose: this allows for the pose estimate's error, and rejects a grasp that the
    resting pose buries); pregrasp_m : distance back along the approach the straight approach starts from;
    rank_by : "quality" or "pfc"."""

    approach_cone_rad: float = math.radians(30.0)
    workspace_lo: tuple[float, float, float] = (-0.4, -0.3, 0.0)
    workspace_hi: tuple[float, float, float] = (0.4, 0.3, 0.5)
    collision_margin_m: float = 0.005
    table_tolerance_m: float = 0.005
    pregrasp_m: float = 0.10
    rank_by: str = "quality"

    def __post_init__(self) -> None:
        if self.rank_by not in ("quality", "pfc"):
            raise ValueError(f"rank_by must be 'quality' or 'pfc', got {self.rank_by!r}")

    @staticmethod
    def from_config(db: DatabaseConfig, *, pregrasp_m: float) -> DatabaseFilterSettings:
        """The settings of a cell file's database section (and arm.pregrasp_m)."""
        return DatabaseFilterSettings(math.radians(db.approach_cone_deg),
                                      tuple(db.workspace_m[0]), tuple(db.workspace_m[1]),
                                      db.collision_margin_m, pregrasp_m=pregrasp_m,
                                      rank_by=db.rank_by)


@dataclass(frozen=True)
class FilterResult:
    """keep : (N,) bool; reason : (N,) int code (0 kept; REJECT_REASONS: code -> text);
    order : kept indices, best first; rank_value : (N,) the ranking value in 0..1 (quality or
    P(fc), NaN where missing); consistency : (N,) image consistency in 0..1 (1 the object
    centred between the fingertips; NaN unchecked)."""

    keep: np.ndarray
    reason: np.ndarray
    order: np.ndarray
    rank_value: np.ndarray
    consistency: np.ndarray

    def counts(self) -> dict[int, int]:
        """Number of grasps per reason code (codes that occur)."""
        codes, n = np.unique(self.reason, return_counts=True)
        return {int(c): int(k) for c, k in zip(codes, n)}

    def summary(self) -> str:
        """One line: kept and rejected counts by reason."""
        c = self.counts()
        parts = [f"{n} {REJECT_REASONS[k]}" for k, n in sorted(c.items()) if k != KEPT]
        return f"{c.get(KEPT, 0)} of {len(self.reason)} kept" + (
            f"; rejected: {', '.join(parts)}" if parts else "")


def filter_grasps(placed: PlacedGrasps, *, settings: DatabaseFilterSettings,
                  height_map: HeightMap | None, hand: HandVolume,
                  silhouette: Silhouette | None = None,
                  pose_confidence: float | np.ndarray = 1.0) -> FilterResult:
    """Keep the placed grasps that (a) approach within the cone around straight down with the
    TCP inside the workspace, (b) keep the hand's boxes collision_margin_m above the height
    map's obstacles at the pre-grasp and all along the straight approach, and no lower than
    table_tolerance_m under the support plane (height_map None: unchecked), (c)
    close across the object in the image: the closing line, projected along the grasp's own
    approach into the silhouette's plane, crosses the target with both fingertips off it
    (silhouette None: unchecked); then rank the kept ones by settings.rank_by, ties broken by
    image consistency, then pose confidence (scalar or (N,))."""
    n = len(placed)
    reason = np.zeros(n, np.int64)
    a = placed.approach_base
    # (a) reach: the cone about -z, the workspace box
    cos_cone = math.cos(settings.approach_cone_rad)
    reason[-a[:, 2] < cos_cone - 1e-12] = OUTSIDE_CONE
    p = placed.T_base_hand[:, :3, 3]
    outside = np.any((p < np.asarray(settings.workspace_lo))
                     | (p > np.asarray(settings.workspace_hi)), axis=1)
    reason[(reason == 0) & outside] = OUTSIDE_WORKSPACE
    # (b) collision, only for the grasps still in
    live = np.flatnonzero(reason == 0)
    if height_map is not None and live.size:
        hit = _collides(placed.T_base_hand[live], hand, height_map, settings)
        reason[live[hit]] = COLLISION
    # (c) the image
    consistency = np.full(n, np.nan)
    live = np.flatnonzero(reason == 0)
    if silhouette is not None and live.size:
        code, cons = _image_check(placed.T_base_hand[live], hand, silhouette)
        reason[live] = code
        consistency[live] = cons
    rank_value = placed.pfc if settings.rank_by == "pfc" else placed.quality
    reason[(reason == 0) & ~np.isfinite(rank_value)] = NO_RANK
    keep = reason == 0
    kept = np.flatnonzero(keep)
    conf = np.broadcast_to(np.asarray(pose_confidence, np.float64), (n,))
    cons0 = np.nan_to_num(consistency, nan=0.0)
    # lexsort: last key first; negate for best first; the database's row order breaks full ties
    order = kept[np.lexsort((kept, -conf[kept], -cons0[kept], -rank_value[kept]))]
    return FilterResult(keep, reason, order, np.asarray(rank_value, np.float64), consistency)


def _collides(T: np.ndarray, hand: HandVolume, hmap: HeightMap,
              s: DatabaseFilterSettings) -> np.ndarray:
    """(M,) whether the hand's boxes, swept from the pre-grasp straight to the grasp T (M, 4, 4),
    come within the margin of the height map's obstacles or reach more than the tolerance below
    the support plane. Each box's base-frame axis-aligned bounding box
    at both ends is joined (exact for the straight sweep of an AABB); the map's highest point
    under that footprint must stay below the box's lowest point minus the margin (conservative
    for tilted boxes: the footprint's highest point is compared with the box's lowest)."""
    M = len(T)
    R, t = np.ascontiguousarray(T[:, :3, :3]).reshape(M * 3, 3), T[:, :3, 3]
    # one (3M x 3) @ (3 x B) product each: c[m, b] = R_m @ centre_b, e[m, b] = |R_m| @ half_b
    c = (R @ hand.centre.T).reshape(M, 3, -1).transpose(0, 2, 1) + t[:, None, :]   # (M, B, 3)
    e = (np.abs(R) @ hand.half.T).reshape(M, 3, -1).transpose(0, 2, 1)            # (M, B, 3)
    back = (-s.pregrasp_m * T[:, :3, 2])[:, None, :]                      # grasp -> pre-grasp
    lo = np.minimum(c - e, c - e + back)
    hi = np.maximum(c + e, c + e + back)
    B = c.shape[1]
    top = hmap.max_over(lo[..., :2].reshape(-1, 2), hi[..., :2].reshape(-1, 2)).reshape(M, B)
    return np.any((top + s.collision_margin_m > lo[..., 2])
                  | (lo[..., 2] < hmap.floor_z_m - s.table_tolerance_m), axis=1)


def _image_check(T: np.ndarray, hand: HandVolume, sil: Silhouette) -> tuple[np.ndarray, np.ndarray]:
    """(code (M,), consistency (M,)) of grasps T (M, 4, 4) in a silhouette: the closing line
    (hand x, +-closing_half_m at the TCP) projected along each grasp's approach onto the
    silhouette's plane, sampled at LINE_SAMPLES points. MISSES_OBJECT when no point is on the
    target; FINGER_ON_OBJECT when an end is; else consistency = 1 - |offset of the target's
    crossing's middle from the line's centre| / half the line (Tan's D_t, for point fingers)."""
    T_pb = np.linalg.inv(sil.T_base_plane)
    # the line's ends and the approach in the plane's frame
    x, t = T[:, :3, 0], T[:, :3, 3]
    s = np.linspace(-1.0, 1.0, LINE_SAMPLES) * hand.closing_half_m
    pts = t[:, None, :] + s[None, :, None] * x[:, None, :]                   # (M, S, 3)
    q = pts @ T_pb[:3, :3].T + T_pb[:3, 3]
    a = T[:, :3, 2] @ T_pb[:3, :3].T                                         # (M, 3)
    # slide each point along the grasp's approach onto the plane z = 0 (the fingertip plane)
    az = np.where(np.abs(a[:, 2]) < 1e-6, np.nan, a[:, 2])
    q = q - (q[..., 2] / az[:, None])[..., None] * a[:, None, :]
    q = np.nan_to_num(q, nan=-1e9)  # an approach along the plane projects nowhere: off the image
    col = np.rint(q[..., 0] / sil.metres_per_px).astype(np.int64)
    row = np.rint(q[..., 1] / sil.metres_per_px).astype(np.int64)
    H, W = sil.target.shape
    inside = (col >= 0) & (col < W) & (row >= 0) & (row < H)
    on = np.zeros(col.shape, bool)
    on[inside] = np.asarray(sil.target, bool)[row[inside], col[inside]]
    any_on = on.any(axis=1)
    ends_on = on[:, 0] | on[:, -1]
    code = np.where(~any_on, MISSES_OBJECT, np.where(ends_on, FINGER_ON_OBJECT, KEPT))
    S = LINE_SAMPLES
    first = np.argmax(on, axis=1)
    last = S - 1 - np.argmax(on[:, ::-1], axis=1)
    mid = 0.5 * (first + last) - 0.5 * (S - 1)
    cons = np.where(any_on, 1.0 - np.abs(mid) / (0.5 * (S - 1)), 0.0)
    return code.astype(np.int64), cons


# ------------------------------------------------------------------ nearest database grasp
class GraspIndex:
    """The nearest database grasp to any hand pose in the object frame (scipy cKDTree).

    A pose is embedded as its position (metres) and its unit quaternion times rot_scale_m
    (metres per unit of quaternion distance): q and -q are the same rotation, so each grasp
    is stored twice, once with each sign, and a query finds whichever is nearer. The
    distance returned is that of the embedding: sqrt(|dp|^2 + rot_scale_m^2 |dq|^2), where
    |dq| = min(|q1 - q2|, |q1 + q2|) (about the rotation angle in radians for small angles,
    2 sin(angle / 4) exactly).
    """

    def __init__(self, table: GraspTable, *, rot_scale_m: float = 0.1) -> None:
        if not rot_scale_m > 0:
            raise ValueError(f"rot_scale_m must be > 0, got {rot_scale_m!r}")
        self.table = table
        self.rot_scale_m = float(rot_scale_m)
        e = embed_poses(np.asarray(table.T_object_hand, np.float64).reshape(-1, 4, 4), rot_scale_m)
        flipped = e.copy()
        flipped[:, 3:] *= -1.0
        self._n = len(e)
        self._tree = cKDTree(np.vstack([e, flipped])) if self._n else None

    def nearest(self, T_object_hand: np.ndarray) -> tuple[int, float]:
        """(row of the table, embedding distance) of the grasp nearest a hand pose (4 x 4,
        object frame); ValueError for an empty table."""
        if self._tree is None:
            raise ValueError("the grasp table is empty: no nearest grasp")
        T = np.asarray(T_object_hand, np.float64)
        if T.shape != (4, 4):
            raise ValueError(f"T_object_hand must be 4 x 4, got shape {T.shape}")
        d, i = self._tree.query(embed_poses(T[None], self.rot_scale_m)[0])
        return int(i) % self._n, float(d)

    def scores(self, row: int) -> dict[str, float]:
        """The database's scores of a row: quality, pfc, success_rate, a/b/c means."""
        t = self.table
        return {k: float(getattr(t, k)[row])
                for k in ("quality", "pfc", "success_rate", "a_mean", "b_mean", "c_mean")}


def embed_poses(T: np.ndarray, rot_scale_m: float) -> np.ndarray:
    """(N, 7) embedding of poses (N, 4, 4): position, quaternion (w >= 0 sign) x rot_scale_m."""
    # once per table (the index's build) or per query: a loop over rotations is fine here
    q = np.array([matrix_to_quat(R) for R in T[:, :3, :3]]).reshape(-1, 4)
    q = q / np.linalg.norm(q, axis=1, keepdims=True).clip(1e-12)
    q = np.where(q[:, :1] < 0, -q, q)
    return np.hstack([T[:, :3, 3], rot_scale_m * q])


# ------------------------------------------------------------------ the slow reference
def filter_grasps_reference(placed: PlacedGrasps, *, settings: DatabaseFilterSettings,
                            height_map: HeightMap | None, hand: HandVolume,
                            silhouette: Silhouette | None = None,
                            pose_confidence: float | np.ndarray = 1.0) -> FilterResult:
    """filter_grasps written as a plain loop over grasps, one check after another: the
    readable reference the tests compare filter_grasps with, and the benchmark's baseline."""
    n = len(placed)
    reason = np.zeros(n, np.int64)
    consistency = np.full(n, np.nan)
    rank_value = placed.pfc if settings.rank_by == "pfc" else placed.quality
    for j in range(n):
        reason[j], consistency[j] = _check_one(placed.T_base_hand[j], settings, height_map,
                                               hand, silhouette)
        if reason[j] == KEPT and not math.isfinite(rank_value[j]):
            reason[j] = NO_RANK
    conf = np.broadcast_to(np.asarray(pose_confidence, np.float64), (n,))
    kept = [j for j in range(n) if reason[j] == KEPT]
    cons0 = np.nan_to_num(consistency, nan=0.0)
    kept.sort(key=lambda j: (-rank_value[j], -cons0[j], -conf[j], j))
    return FilterResult(reason == KEPT, reason, np.array(kept, np.int64),
                        np.asarray(rank_value, np.float64), consistency)


def _check_one(T: np.ndarray, s: DatabaseFilterSettings, hmap: HeightMap | None,
               hand: HandVolume, sil: Silhouette | None) -> tuple[int, float]:
    """(reason code, consistency) of one placed grasp T (4 x 4), check by check."""
    if -T[2, 2] < math.cos(s.approach_cone_rad) - 1e-12:
        return OUTSIDE_CONE, math.nan
    for k in range(3):
        if not s.workspace_lo[k] <= T[k, 3] <= s.workspace_hi[k]:
            return OUTSIDE_WORKSPACE, math.nan
    if hmap is not None:
        back = -s.pregrasp_m * T[:3, 2]
        for c_h, e_h in zip(hand.centre, hand.half):
            c = T[:3, :3] @ c_h + T[:3, 3]
            e = np.abs(T[:3, :3]) @ e_h
            lo, hi = np.minimum(c - e, c - e + back), np.maximum(c + e, c + e + back)
            top = hmap.max_over(lo[None, :2], hi[None, :2])[0]
            if top + s.collision_margin_m > lo[2] or lo[2] < hmap.floor_z_m - s.table_tolerance_m:
                return COLLISION, math.nan
    if sil is None:
        return KEPT, math.nan
    T_pb = np.linalg.inv(sil.T_base_plane)
    a = T_pb[:3, :3] @ T[:3, 2]
    on = []
    for s_m in np.linspace(-1.0, 1.0, LINE_SAMPLES) * hand.closing_half_m:
        q = T_pb[:3, :3] @ (T[:3, 3] + s_m * T[:3, 0]) + T_pb[:3, 3]
        if abs(a[2]) < 1e-6:
            on.append(False)
            continue
        q = q - q[2] / a[2] * a
        col, row = int(np.rint(q[0] / sil.metres_per_px)), int(np.rint(q[1] / sil.metres_per_px))
        H, W = sil.target.shape
        on.append(bool(0 <= row < H and 0 <= col < W and sil.target[row, col]))
    if not any(on):
        return MISSES_OBJECT, 0.0
    first, last = on.index(True), len(on) - 1 - on[::-1].index(True)
    cons = 1.0 - abs(0.5 * (first + last) - 0.5 * (len(on) - 1)) / (0.5 * (len(on) - 1))
    if on[0] or on[-1]:
        return FINGER_ON_OBJECT, cons
    return KEPT, cons
