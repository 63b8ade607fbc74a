"""Which database object a segmented object is, and its pose in the base frame.

Identity: the object's seen points, put in a table frame on the support plane, make a top view
(the highest point in each square cell, metres): its area, its principal extents, its height
and the quantiles of its cell heights are compared with the same features of every model in
every stable pose (computed once per model by ``prepare_models``). A learned segmenter's label
is tried first when it names a model. The few best (model, stable pose) pairs are aligned in
the plane (centroid and principal axis of the top views, both flips; eight yaws when the
footprint is round), refined by ICP of the seen points (source) to the model's surface sample
(target, a KD-tree: ``trimesh.registration.icp``), brought back onto the stable pose (the ICP's
yaw and x, y; the resting height and tilt of the stable pose), and scored by the truncated RMS
distance of the seen points to the model (to its tangent planes) and the share of top-view
cells one of the two shows and the other lacks (a box fitted to a can has corners where the
camera sees table). The lowest cost wins; its confidence comes from the residual, that share,
the margin to the best other object and the margin to another pose of the same object.

Why trimesh and not Open3D: trimesh is maintained, light (numpy, with scipy for the KD-tree)
and already a dependency of the simulation; Open3D's wheel is about 400 MB and pulls in dash
and flask, too much for the robot PC for one ICP.

Symmetric objects: a cylinder's yaw is free, a box's is known up to half a turn. The residual
cannot tell such poses apart, and a grasp placed by either works the same, so the confidence
is about the grasp-relevant pose: the pose modulo the object's symmetry. ``ModelLibrary``
finds each model's rotational symmetries from its surface sample (rotations about its
principal axes that map the sample onto itself, a continuous one where every angle does), and
``ModelLibrary.pose_error`` measures a pose's error modulo them.

Frames: ``base`` (the robot's, z up), ``camera`` (the frame's optical frame), ``table``
(origin on the support plane below the object, z the plane's normal up, x the base x laid on
the plane), ``object`` (the model's frame, the grasp database's). Metres and radians.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from drivers.camera import RGBDFrame
from geometry import invert, pose, rotvec_to_matrix, transform_points

from ._camera import valid_depth
from ._types import ObjectMask, SupportPlane

CELL_M = 0.004          # top-view cell side: about the sample spacing of a 2000-point model
MIN_POINTS = 30         # fewer seen points than this: nothing to recognise
MIN_HEIGHT_M = 0.004    # seen points lower than this above the plane are the table's
TRUNCATE_M = 0.01       # residuals are clipped here: a few stray mask pixels must not decide
FIT_SIGMA_M = 0.0035    # the residual at which the fit alone gives confidence exp(-1/2); the
                        # simulated D400 at 0.75 m leaves 1.6-2.4 mm on the right model
MARGIN_FULL = 0.25      # relative cost margin to the best other object that counts in full
POSE_MARGIN_FULL = 0.15  # relative residual margin to another pose of the same object, in full
UNEXPLAINED_SCALE = 0.1  # top-view cells unexplained at which that term gives exp(-1/2): the
                         # right model leaves under 0.08, a can fitted as a box 0.15
DISTINCT_RAD = math.radians(20.0)  # fits this far apart, modulo symmetry, are other poses
DIVERGED_M = 0.1        # an ICP that carries the object this far from its start diverged: the
                        # start lays the top views' centroids together, so a fit moves mm to cm
SYMMETRY_STEP_DEG = 15  # a continuous symmetry axis, as data (Recognition.symmetries): every
                        # 15 degrees (24 yaws); see ModelLibrary.symmetry_rotations
QUANTILES = (0.1, 0.3, 0.5, 0.7, 0.9)


@dataclass(frozen=True)
class ObjectModel:
    """One database object, as onboard needs it to recognise it.

    points : (N, 3) float64 surface sample, object frame, metres. stable_poses : (S, 4, 4)
    float64 ``T_table_object`` resting poses (the table's z up, the object resting on z = 0).
    """

    name: str
    points: np.ndarray
    stable_poses: np.ndarray

    def __post_init__(self) -> None:
        p = np.ascontiguousarray(self.points, np.float64)
        if p.ndim != 2 or p.shape[1] != 3 or len(p) < 10 or not np.isfinite(p).all():
            raise ValueError(f"ObjectModel {self.name!r}: points must be a finite (N, 3) array "
                             f"with N >= 10, got shape {np.shape(self.points)}")
        s = np.ascontiguousarray(self.stable_poses, np.float64)
        if s.ndim != 3 or s.shape[1:] != (4, 4) or len(s) < 1:
            raise ValueError(f"ObjectModel {self.name!r}: stable_poses must be (S, 4, 4) with "
                             f"S >= 1, got shape {np.shape(self.stable_poses)}")
        object.__setattr__(self, "points", p)
        object.__setattr__(self, "stable_poses", s)


@dataclass(frozen=True)
class Recognition:
    """What a segmented object is and where.

    name : database object name; None when unknown (then ``why`` says why). T_base_object :
    (4, 4) pose in the base frame, metres. confidence : 0..1, about the pose modulo the
    object's symmetry; below recognise's min_confidence the object is reported unknown.
    stable_pose : index into ObjectModel.stable_poses. fit_rmse_m : RMS distance of the seen
    points to the model's surface (its tangent planes; each clipped at 1 cm), metres. why : one
    line, for an unknown object or a confidence under 0.8. symmetries : (G, 3, 3) float64
    rotations in the object frame (about its origin) that leave the model's shape unchanged,
    identity first (``ModelLibrary.symmetry_rotations``): ``T_base_object @ pose(R, 0)`` is an
    equally good pose for each; None when not known (an unknown object, another recogniser).
    """

    name: str | None
    T_base_object: np.ndarray | None
    confidence: float
    stable_pose: int | None
    fit_rmse_m: float | None
    why: str = ""
    symmetries: np.ndarray | None = None


@dataclass(frozen=True)
class _TopView:
    """Features of a top view: centroid (2,) and major-axis angle (rad) in the table plane,
    extents (2,) major and minor (2 std, metres), area (m^2), height (m), quantiles (5,) of the
    cells' heights (m); cells (K, 2) int64 indices of the cells in the table plane."""

    centre: np.ndarray
    angle: float
    extents: np.ndarray
    area_m2: float
    height_m: float
    quantiles: np.ndarray
    cells: np.ndarray


@dataclass(frozen=True)
class _View:
    """One model in one stable pose: its top view (table frame, the object's origin above
    the table's) and its yaw symmetry order about the vertical (0: continuous)."""

    model: int
    pose: int
    top: _TopView
    yaw_order: int


@dataclass
class ModelLibrary:
    """The models with what recognition needs of them, computed once: the top view of each
    stable pose, a KD-tree of each surface sample, and each model's rotational symmetries."""

    models: list[ObjectModel]
    views: list[_View] = field(default_factory=list)
    trees: list = field(default_factory=list)
    normals: list[np.ndarray] = field(default_factory=list)      # (N, 3) per sample point
    spacing_m: list[float] = field(default_factory=list)         # mean nearest-neighbour gap
    symmetries: list[np.ndarray] = field(default_factory=list)   # (G, 3, 3) object frame
    continuous: list[bool] = field(default_factory=list)  # whether one axis is continuous

    def __post_init__(self) -> None:
        from scipy.spatial import cKDTree

        names = [m.name for m in self.models]
        if len(set(names)) != len(names):
            raise ValueError(f"model names must be unique, got {names}")
        for i, m in enumerate(self.models):
            tree = cKDTree(m.points)
            self.trees.append(tree)
            self.normals.append(_normals(m.points, tree))
            tol = _symmetry_tolerance(tree, m.points)
            self.spacing_m.append(tol / 3.0)
            self.symmetries.append(_symmetry_group(m.points, tree, tol))
            self.continuous.append(len(self.symmetries[-1]) >= 360)  # 1 degree steps
            for s, T in enumerate(m.stable_poses):
                self.views.append(_View(i, s, _top_view(transform_points(T, m.points)),
                                        _yaw_order(m.points, tree, T, tol)))

    def distances(self, k: int, points_object: np.ndarray) -> np.ndarray:
        """(N,) distances, metres, of object-frame points to model k's surface: to the
        tangent plane at the nearest sample point when within two sample spacings of it (the
        sample's spacing would otherwise dominate the residual), else to that point."""
        d, i = self.trees[k].query(points_object)
        along = np.abs(np.einsum("ij,ij->i", points_object - self.models[k].points[i],
                                 self.normals[k][i]))
        return np.where(d < 2.0 * self.spacing_m[k], along, d)

    def index(self, name: str) -> int:
        """Position of the model named name."""
        for i, m in enumerate(self.models):
            if m.name == name:
                return i
        raise KeyError(f"no model {name!r}; there are {[m.name for m in self.models]}")

    def pose_error(self, name: str, T_est: np.ndarray, T_true: np.ndarray) -> tuple[float, float]:
        """(translation metres, rotation radians) between two poses of the model, modulo its
        symmetries: the smallest rotation over every pose the symmetry makes equivalent."""
        G = self.symmetries[self.index(name)]
        A = T_true[:3, :3].T @ T_est[:3, :3]
        # angle of A @ g for every g at once: trace(A g) = sum(A^T * g)
        tr = np.einsum("ji,gij->g", A, G)
        angle = float(np.arccos(np.clip((tr.max() - 1.0) / 2.0, -1.0, 1.0)))
        return float(np.linalg.norm(T_est[:3, 3] - T_true[:3, 3])), angle

    def symmetry_rotations(self, name: str, *,
                           step_deg: int = SYMMETRY_STEP_DEG) -> np.ndarray:
        """(G, 3, 3) float64 rotations in the model's object frame (about its origin) that map
        its surface sample onto itself, identity first: (1, 3, 3) for none, 4 for a box (half
        turns about its three axes), a continuous axis sampled every step_deg degrees (a
        divisor of 360) times the discrete ones (a cylinder: 2 * 360 / step_deg). The default
        15 degrees holds the poses recognise returns for a round object (its ICP starts 45
        degrees apart): at 30, such an estimate's samples fell half a step off the true pose's,
        and the filter kept 7 of the bottle's grasps instead of 30 (bench_db_cell). Found from
        the sample they are up to ~1.5 degrees off (enough to move a 126 mm finger's tip 3 mm),
        so each is snapped to the object frame (an axis within 3 degrees of a frame axis or
        plane onto it, angles within 3 degrees of a 15 degree multiple onto it): database
        models are built in frames aligned with their shape."""
        if not (isinstance(step_deg, int) and 1 <= step_deg <= 360 and 360 % step_deg == 0):
            raise ValueError(f"symmetry_rotations: step_deg must be an integer divisor of 360, "
                             f"got {step_deg!r}")
        k = self.index(name)
        G = self.symmetries[k]
        # _symmetry_group lays the continuous axis out outermost, one degree per block
        S = G.reshape(360, -1, 3, 3)[::step_deg].reshape(-1, 3, 3) if self.continuous[k] else G
        S = np.array([_snapped(R) for R in S])
        # a discrete half turn about the continuous axis repeats a sampled yaw: keep the first
        near = np.abs(S[:, None] - S[None, :]).max(axis=(2, 3)) < 0.05   # ~3 degrees
        first = ~np.any(np.tril(near, -1), axis=1)
        return np.ascontiguousarray(S[first])

    def symmetry(self, name: str) -> str:
        """The model's rotational symmetry in words: 'none', or how many rotations (and
        whether one axis is continuous)."""
        G = self.symmetries[self.index(name)]
        if len(G) == 1:
            return "none"
        return f"{len(G)} rotations" + (" (one axis continuous, 1 degree steps)" if len(G) >= 360 else "")


def prepare_models(models: Sequence[ObjectModel]) -> ModelLibrary:
    """A ModelLibrary of the models: do this once, recognise with it every frame."""
    models = list(models)
    for m in models:
        if not isinstance(m, ObjectModel):
            raise ValueError(f"prepare_models: every model must be an ObjectModel, got "
                             f"{type(m).__name__}")
    return ModelLibrary(models)


def models_from_database(db) -> list[ObjectModel]:
    """ObjectModel of every object of an open ``scoring.GraspDatabase`` (schema 3: the
    surface sample; an older file raises its GraspDatabaseError saying how to add it)."""
    return [ObjectModel(o.name, o.points, o.stable_poses) for o in db.object_models()]


# ----------------------------------------------------------------------- features
def _top_view(points_table: np.ndarray, cell_m: float = CELL_M) -> _TopView:
    """Top view of (N, 3) table-frame points (metres): the highest point per cell."""
    ij = np.floor(points_table[:, :2] / cell_m).astype(np.int64)
    key = (ij[:, 0] << 32) + ij[:, 1]
    order = np.lexsort((points_table[:, 2], key))          # by cell, then height
    last = np.r_[key[order][1:] != key[order][:-1], True]  # the highest point of each cell
    top = order[last]
    cells, h = ij[top], points_table[top, 2]
    centre = (cells.mean(0) + 0.5) * cell_m
    xy = (cells + 0.5) * cell_m - centre
    evals, evecs = np.linalg.eigh(np.cov(xy.T) if len(xy) > 2 else np.eye(2) * 1e-8)
    major = evecs[:, 1]
    return _TopView(centre=centre, angle=math.atan2(major[1], major[0]),
                    extents=2.0 * np.sqrt(np.maximum(evals[::-1], 0.0)),
                    area_m2=len(cells) * cell_m**2, height_m=float(h.max()),
                    quantiles=np.quantile(h, QUANTILES), cells=cells)


def _feature_distance(seen: _TopView, model: _TopView) -> float:
    """How unlike two top views are (dimensionless, 0 alike); inf when the height or an
    extent is off by more than a third (plus a few millimetres of noise)."""
    h = max(model.height_m, 0.01)
    dh = abs(seen.height_m - model.height_m)
    de = np.abs(seen.extents - model.extents)
    if dh > 0.3 * h + 0.01 or np.any(de > 0.35 * model.extents + 0.006):
        return math.inf
    return float(dh / h + np.sum(de / np.maximum(model.extents, 0.005))
                 + 0.5 * abs(seen.area_m2 - model.area_m2) / max(model.area_m2, 1e-4)
                 + np.mean(np.abs(seen.quantiles - model.quantiles)) / h)


def _normals(points: np.ndarray, tree, k: int = 8) -> np.ndarray:
    """(N, 3) unit normals (unsigned) of a surface sample: the least-spread direction of each
    point's k nearest neighbours."""
    _, nn = tree.query(points, k=k)
    local = points[nn] - points[nn].mean(axis=1, keepdims=True)     # (N, k, 3)
    _, vecs = np.linalg.eigh(np.einsum("nki,nkj->nij", local, local))
    return vecs[:, :, 0]


# ----------------------------------------------------------------------- symmetry
def _symmetry_tolerance(tree, points: np.ndarray) -> float:
    """Distance under which a rotated sample point counts as on the surface: three times the
    mean nearest-neighbour spacing of the sample, metres."""
    d, _ = tree.query(points, k=2)
    return 3.0 * float(d[:, 1].mean())


def _maps_onto_itself(points: np.ndarray, tree, R: np.ndarray, tol: float) -> bool:
    """Whether rotation R (object frame, about the origin) maps the sample onto its surface:
    fewer than 1 % of the rotated points farther than tol from the sample."""
    d, _ = tree.query(points @ R.T)
    return float(np.mean(d > tol)) < 0.01


def _axis_order(points: np.ndarray, tree, axis: np.ndarray, tol: float) -> int:
    """Symmetry order about an axis through the origin: 0 continuous, else n (1: none)."""
    if all(_maps_onto_itself(points, tree, rotvec_to_matrix(axis * a), tol) for a in (0.3, 1.1)):
        return 0
    for n in (6, 4, 3, 2):
        if _maps_onto_itself(points, tree, rotvec_to_matrix(axis * 2.0 * math.pi / n), tol):
            return n
    return 1


def _refined(points: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Symmetry rotation R made exact: R followed by the ICP that lays the rotated sample
    back onto the sample (a sampled sample's principal axes are a degree or two off)."""
    T = register_points(points @ R.T, points, np.eye(4))  # R p ~ T p', so T^-1 R p ~ p'
    return T[:3, :3].T @ R


def _symmetry_group(points: np.ndarray, tree, tol: float) -> np.ndarray:
    """(G, 3, 3) rotations (object frame) that map the sample onto itself, identity first:
    those about its principal axes, closed under products; a continuous axis in 1 degree
    steps."""
    from geometry import matrix_to_rotvec

    _, axes = np.linalg.eigh(points.T @ points)
    continuous = [np.eye(3)]
    gens = []
    for axis in axes.T:
        n = _axis_order(points, tree, axis, tol)
        if n == 0 and len(continuous) == 1:
            rv = matrix_to_rotvec(_refined(points, rotvec_to_matrix(axis * math.pi / 2)))
            axis = rv / np.linalg.norm(rv)
            continuous = [rotvec_to_matrix(axis * math.radians(k)) for k in range(360)]
        elif n > 1 or n == 0:
            R = rotvec_to_matrix(axis * (math.pi if n == 0 else 2.0 * math.pi / n))
            gens.append(_refined(points, R))
    group = [np.eye(3)]
    frontier = list(group)
    while frontier and len(group) < 48:
        new = []
        for A in frontier:
            for g in gens:
                B = g @ A
                if all(np.abs(B - C).max() > 0.05 for C in group):  # ~3 degrees apart
                    group.append(B)
                    new.append(B)
        frontier = new
    return np.array([c @ g for c in continuous for g in group])


def _snap_angle(a: float, step: float = math.radians(15.0),
                tol: float = math.radians(3.0)) -> float:
    """a (radians) onto the nearest multiple of step when within tol of it."""
    k = round(a / step)
    return k * step if abs(a - k * step) < tol else a


def _snapped(R: np.ndarray, tol: float = math.radians(3.0)) -> np.ndarray:
    """Rotation R (3, 3) with its axis snapped onto the object frame's axes or planes and
    its angle, and an in-plane axis's direction, onto 15 degree multiples, each when within
    tol radians; R unchanged when it needs none of that."""
    from geometry import matrix_to_rotvec

    rv = matrix_to_rotvec(R)
    angle = float(np.linalg.norm(rv))
    if angle < 1e-9:
        return R.copy() if angle == 0.0 else np.eye(3)
    axis = rv / angle
    axis = np.where(np.abs(axis) < math.sin(tol), 0.0, axis)
    axis /= np.linalg.norm(axis)
    zero = np.flatnonzero(axis == 0.0)
    if len(zero) == 1:   # in a frame plane: snap its direction within the plane
        i, j = [k for k in range(3) if k != zero[0]]
        phi = _snap_angle(math.atan2(axis[j], axis[i]))
        axis[i], axis[j] = math.cos(phi), math.sin(phi)
    return rotvec_to_matrix(axis * _snap_angle(angle))


def _yaw_order(points: np.ndarray, tree, T_table_object: np.ndarray, tol: float) -> int:
    """Symmetry order about the table's vertical through the object's origin in a stable
    pose: 0 continuous, else n (1: none)."""
    up = T_table_object[:3, :3].T @ np.array([0.0, 0.0, 1.0])
    return _axis_order(points, tree, up, tol)


# ----------------------------------------------------------------------- pose
def _rot_z(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _start_poses(seen: _TopView, view: _View, T_stable: np.ndarray) -> list[np.ndarray]:
    """T_table_object starts: the model's top view turned onto the seen one's principal axis
    (both ways), or eight yaws when either footprint is round, less the ones its yaw symmetry
    repeats; the model's top-view centroid on the seen one's."""
    base = seen.angle - view.top.angle
    round_ = min(seen.extents[1] / max(seen.extents[0], 1e-6),
                 view.top.extents[1] / max(view.top.extents[0], 1e-6)) > 0.85
    yaws = [base + k * math.pi / 4 for k in range(8)] if round_ else [base, base + math.pi]
    n = view.yaw_order
    if n == 0:
        yaws = yaws[:1]
    elif n > 1:
        period = 2.0 * math.pi / n
        kept: list[float] = []
        for y in yaws:
            if all(abs((y - k + period / 2) % period - period / 2) > 1e-6 for k in kept):
                kept.append(y)
        yaws = kept
    out = []
    for yaw in yaws:
        Rz = _rot_z(yaw)
        T = pose(Rz @ T_stable[:3, :3], Rz @ T_stable[:3, 3])
        T[:2, 3] += seen.centre - Rz[:2, :2] @ view.top.centre
        out.append(T)
    return out


def _onto_stable_pose(T: np.ndarray, T_stable: np.ndarray) -> np.ndarray:
    """The pose in the stable pose's family (a yaw about the table's z, x, y on the table)
    nearest T: T's yaw and x, y with the stable pose's tilt and resting height."""
    R = T[:3, :3] @ T_stable[:3, :3].T
    yaw = math.atan2(R[1, 0] - R[0, 1], R[0, 0] + R[1, 1])
    Rz = _rot_z(yaw)
    return pose(Rz @ T_stable[:3, :3], np.array([T[0, 3], T[1, 3], T_stable[2, 3]]))


@dataclass(frozen=True)
class _Fit:
    view: _View
    T_table_object: np.ndarray
    rmse_m: float
    unexplained: float  # fraction of top-view cells one view has and the other lacks
    cost: float
    alt_rmse_m: float  # the best fit in another pose of the same model (modulo symmetry)
    failed: str = ""   # why no start converged (then cost is inf)


def register_points(points: np.ndarray, model_points: np.ndarray, T_init: np.ndarray, *,
                    max_iterations: int = 30) -> np.ndarray:
    """``T_frame_object`` that lays the (N, 3) points (metres, any frame) onto the model's
    (M, 3) surface sample (object frame), by ICP from T_init (``trimesh.registration.icp``,
    the points the source and the sample the KD-tree target: every seen point has its match
    on the model, not the other way round, as the hidden side is not seen)."""
    from trimesh.registration import icp

    T_object_frame, _, _ = icp(np.asarray(points, np.float64), np.asarray(model_points, np.float64),
                               initial=invert(T_init), threshold=1e-7, max_iterations=max_iterations,
                               reflection=False, scale=False)  # a rigid motion: trimesh's
    # procrustes would otherwise also fit a scale and allow a mirror image
    return invert(T_object_frame)


def _registered(points: np.ndarray, model_points: np.ndarray,
                T_init: np.ndarray) -> tuple[np.ndarray | None, str]:
    """register_points from T_init, or (None, why) when the ICP did not converge: it raised
    (trimesh's ICP on degenerate points), gave a non-finite pose, or carried the object more
    than DIVERGED_M from its start."""
    try:
        T = register_points(points, model_points, T_init)
    except Exception as exc:  # noqa: BLE001 - a numerical library's failure on this object's
        # points must make it unknown, not stop the loop (trimesh, scipy and numpy raise
        # ValueError, LinAlgError, IndexError... on degenerate input)
        return None, f"ICP failed ({type(exc).__name__}: {exc})"
    if not np.all(np.isfinite(T)):
        return None, "ICP gave a non-finite pose"
    moved = float(np.linalg.norm(T[:3, 3] - T_init[:3, 3]))
    if moved > DIVERGED_M:
        return None, f"ICP diverged (moved the object {moved:.2f} m from its start)"
    return T, ""


def _cell_keys(cells: np.ndarray) -> np.ndarray:
    """(K,) int64 keys of (K, 2) cell indices (|index| < 2**20: 4 km at 4 mm cells)."""
    return (cells[:, 0] + (1 << 20)) * (1 << 21) + (cells[:, 1] + (1 << 20))


def _outside(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction of cells of a with no cell of b among their 3 x 3 neighbourhood."""
    near = np.concatenate([_cell_keys(b + (i, j)) for i in (-1, 0, 1) for j in (-1, 0, 1)])
    return float(np.mean(~np.isin(_cell_keys(a), near)))


def _fit(seen_pts: np.ndarray, seen: _TopView, view: _View, lib: ModelLibrary,
         icp: bool = True) -> _Fit:
    """Best fit of one (model, stable pose) to the seen points (table frame, metres); without
    icp, the best of the start poses as they are."""
    model = lib.models[view.model]
    T_stable = model.stable_poses[view.pose]
    fits, failures = [], []
    for T0 in _start_poses(seen, view, T_stable):
        T, why = _registered(seen_pts, model.points, T0) if icp else (T0, "")
        if T is None:
            failures.append(why)
            continue
        T = _onto_stable_pose(T, T_stable) if icp else T
        d = lib.distances(view.model, transform_points(invert(T), seen_pts))
        fits.append((float(np.sqrt(np.mean(np.minimum(d, TRUNCATE_M) ** 2))), T))
    if not fits:  # every start failed: this (model, pose) does not fit at all
        return _Fit(view, T_stable, math.inf, 1.0, math.inf, math.inf,
                    f"{model.name!r} (stable pose {view.pose}): {failures[0]}")
    rmse, T = min(fits, key=lambda f: f[0])
    # another start that settled in a pose the symmetry does not explain, as well: ambiguous
    # (a mug whose handle is hidden or was cut off by the segmenter)
    alt = min((r for r, T1 in fits if lib.pose_error(model.name, T1, T)[1] > DISTINCT_RAD),
              default=math.inf)
    # what one top view shows that the other does not (one cell of slack): a box fitted to
    # a can has corners where the camera sees table, which the residual alone barely notices
    model_cells = _top_view(transform_points(T, model.points)).cells
    unexplained = max(_outside(model_cells, seen.cells), _outside(seen.cells, model_cells))
    cost = (rmse / FIT_SIGMA_M) ** 2 + (unexplained / UNEXPLAINED_SCALE) ** 2
    return _Fit(view, T, rmse, unexplained, cost, alt)


# ----------------------------------------------------------------------- recognise
def _table_frame(normal_base: np.ndarray, offset_base: float, near_base: np.ndarray) -> np.ndarray:
    """T_base_table: origin on the plane below near_base, z the plane's normal, x the base x
    laid on the plane."""
    z = normal_base / np.linalg.norm(normal_base)
    x = np.array([1.0, 0.0, 0.0]) - z[0] * z
    if np.linalg.norm(x) < 1e-6:
        x = np.array([0.0, 1.0, 0.0]) - z[1] * z
    x /= np.linalg.norm(x)
    origin = near_base - (near_base @ z + offset_base) * z
    return pose(np.column_stack([x, np.cross(z, x), z]), origin)


def _unknown(why: str, best: _Fit | None = None, confidence: float = 0.0) -> Recognition:
    return Recognition(None, None, float(confidence), None,
                       None if best is None else best.rmse_m, why)


def recognise(frame: RGBDFrame, mask: ObjectMask, models: Sequence[ObjectModel] | ModelLibrary,
              *, support: SupportPlane | None, min_confidence: float = 0.5,
              max_candidates: int = 3, max_points: int = 400, seed: int | None = 0,
              max_range_m: float = 5.0, icp: bool = True) -> Recognition:
    """Which model the masked object is, and its pose ``T_base_object`` (metres, base frame).

    frame : needs T_base_camera. mask : the object's pixels (a label naming a model is tried
    first). models : ObjectModels, or better a ModelLibrary from prepare_models (else it is
    prepared on every call). support : the plane the object rests on (camera frame of this
    frame), None to fit one. min_confidence : below it the object is reported unknown, with
    the best guess in ``why``. max_candidates : (model, stable pose) pairs refined by ICP.
    max_points : seen points registered (a seeded subsample; the top view uses them all). icp : False skips the ICP and keeps
    the principal-axes start poses as they are (the benchmark's baseline).
    """
    from ._tabletop import fit_support_plane

    if frame.T_base_camera is None:
        raise ValueError("recognise: frame.T_base_camera is None; poses are given in the base "
                         "frame, so the camera must be calibrated")
    if not 0.0 <= min_confidence <= 1.0:
        raise ValueError(f"recognise: min_confidence must be in [0, 1], got {min_confidence!r}")
    lib = models if isinstance(models, ModelLibrary) else prepare_models(models)
    if not lib.models:
        return _unknown("no object models to recognise against")
    if support is None:
        support = fit_support_plane(frame)
        if support is None:
            return _unknown("no support plane found in the frame")
    depth = frame.depth_m
    v, u = np.nonzero(mask.mask & valid_depth(depth, max_range_m))
    pts_cam = frame.intrinsics.deproject_pixels(u, v, depth[v, u])
    pts_cam = pts_cam[support.height_m(pts_cam) > MIN_HEIGHT_M]
    if len(pts_cam) < MIN_POINTS:
        return _unknown(f"{len(pts_cam)} depth points above the support in the mask "
                        f"(need {MIN_POINTS})")
    pts_base = transform_points(frame.T_base_camera, pts_cam)
    n_base, off_base = support.in_base(frame.T_base_camera)
    if n_base[2] < 0:  # the normal points to the camera's side; the table's z is up
        n_base, off_base = -n_base, -off_base
    T_base_table = _table_frame(n_base, off_base, pts_base.mean(0))
    seen_pts = transform_points(invert(T_base_table), pts_base)
    seen = _top_view(seen_pts)  # from every point: a sparse top view leaves cells unexplained
    if len(seen_pts) > max_points:  # ICP and the residual need fewer
        keep = np.random.default_rng(seed).choice(len(seen_pts), max_points, replace=False)
        seen_pts = seen_pts[np.sort(keep)]

    names = [m.name for m in lib.models]
    tries = [[names.index(mask.label)], None] if mask.label in names else [None]
    result = None
    for only in tries:
        result = _recognise_among(seen_pts, seen, lib, only, max_candidates, T_base_table,
                                  min_confidence, icp)
        if result.name is not None:
            return result
    return result


def _recognise_among(seen_pts, seen: _TopView, lib: ModelLibrary, only: list[int] | None,
                     max_candidates: int, T_base_table: np.ndarray,
                     min_confidence: float, icp: bool = True) -> Recognition:
    """recognise() over the models listed in only (None: all)."""
    scored = [(_feature_distance(seen, v.top), k) for k, v in enumerate(lib.views)
              if only is None or v.model in only]
    scored = sorted((d, k) for d, k in scored if math.isfinite(d))
    if not scored:
        return _unknown(f"no model's stable pose has its footprint and height: seen "
                        f"{seen.extents[0]:.3f} x {seen.extents[1]:.3f} m (2 std), "
                        f"{seen.height_m:.3f} m high")
    # the few best views, and each other model's best view, so that the margin is measured
    picked = [k for _, k in scored[:max_candidates]]
    for _, k in scored:
        if lib.views[k].model not in {lib.views[j].model for j in picked}:
            picked.append(k)
    fits = sorted((_fit(seen_pts, seen, lib.views[k], lib, icp) for k in picked),
                  key=lambda f: f.cost)
    best = fits[0]
    if not math.isfinite(best.cost):
        return _unknown(f"the pose fit did not converge: {best.failed}")
    fits = [f for f in fits if math.isfinite(f.cost)]
    other = next((f for f in fits if f.view.model != best.view.model), None)
    fit_term = math.exp(-0.5 * (best.rmse_m / FIT_SIGMA_M) ** 2)
    shape_term = math.exp(-0.5 * (best.unexplained / UNEXPLAINED_SCALE) ** 2)
    margin = 1.0 if other is None else min(1.0, (other.cost - best.cost)
                                          / max(other.cost, 1e-9) / MARGIN_FULL)
    # the best fit of the same object in a pose its symmetry does not explain: from another
    # start in the same stable pose, or in another stable pose (a mug on its side, end for end)
    name = lib.models[best.view.model].name
    alt = min([best.alt_rmse_m] + [
        f.rmse_m for f in fits[1:] if f.view.model == best.view.model
        and lib.pose_error(name, f.T_table_object, best.T_table_object)[1] > DISTINCT_RAD])
    pose_margin = min(1.0, (alt - best.rmse_m) / alt / POSE_MARGIN_FULL) if math.isfinite(alt) else 1.0
    confidence = float(np.clip(fit_term * shape_term * (0.5 + 0.5 * margin)
                               * (0.5 + 0.5 * pose_margin), 0.0, 1.0))
    if confidence < min_confidence:
        return _unknown(f"best match {name!r} (stable pose {best.view.pose}) fits with "
                        f"{best.rmse_m * 1000:.1f} mm RMS, {best.unexplained:.0%} of its top "
                        f"view unexplained, margin to other objects {max(margin, 0):.2f}, to "
                        f"other poses {max(pose_margin, 0):.2f}: confidence {confidence:.2f} < "
                        f"{min_confidence}", best, confidence)
    why = "" if confidence >= 0.8 else (f"fit {best.rmse_m * 1000:.1f} mm RMS, "
                                        f"{best.unexplained:.0%} of the top view unexplained, "
                                        f"margin to other objects {max(margin, 0):.2f}, "
                                        f"to other poses {max(pose_margin, 0):.2f}")
    return Recognition(name, T_base_table @ best.T_table_object, confidence, best.view.pose,
                       best.rmse_m, why, lib.symmetry_rotations(name))
