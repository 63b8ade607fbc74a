"""Pre-grasp candidates for an object and a hand: approaches along the principal axes and sampled
surface normals, at a grasp depth and roll, collision-free at the start (Kim §III-A, the hand
starts at the pre-grasp with its fingers open)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geometry import frame_from_approach, invert, pose
from ..dynamics import GraspWorld, hand_collides, place_hand
from ..dynamics._grasp_world import OBJECT_GEOM_GROUP

SOURCE_PRINCIPAL_AXIS = 0
SOURCE_SURFACE_NORMAL = 1
NORMALS_PER_ROUND = 32   # sampled normals of the first round (and of each further one)
MAX_NORMAL_ROUNDS = 64   # at most this many rounds of sampled normals (2,048 normals)


@dataclass(frozen=True)
class GraspCandidates:
    """N pre-grasps. T_object_hand : (N, 4, 4) TCP poses in the object frame (metres);
    approach : (N, 3) unit approach directions in the object frame; depth_m : (N,) how far
    the TCP sits below the surface point along the approach; roll_rad : (N,); source : (N,)
    int8, SOURCE_PRINCIPAL_AXIS or SOURCE_SURFACE_NORMAL; preshape : (N, P) values of the
    hand's P preshape joints (rad or m), one of its preshapes (HandModel.preshapes), the one
    the candidate was found collision-free in."""

    T_object_hand: np.ndarray
    approach: np.ndarray
    depth_m: np.ndarray
    roll_rad: np.ndarray
    source: np.ndarray
    preshape: np.ndarray

    def __len__(self) -> int:
        return len(self.T_object_hand)


def _surface_hit(world: GraspWorld, outward: np.ndarray, through: np.ndarray):
    """(point, outward normal) in world coordinates where a ray coming from far along
    ``outward`` towards ``through`` first meets the object, or None."""
    import mujoco

    groups = np.zeros(6, np.uint8)
    groups[OBJECT_GEOM_GROUP] = 1  # the object alone: neither table nor hand blocks the ray
    far = 1.0
    start = through + far * outward
    geomid = np.full(1, -1, np.int32)
    normal = np.zeros(3)
    dist = mujoco.mj_ray(world.model, world.data, start, -outward, groups, 1, -1, geomid, normal)
    if dist < 0:
        return None
    return start - dist * outward, normal / max(np.linalg.norm(normal), 1e-12)


def pregrasp_candidates(world: GraspWorld, n: int, *, seed: int | None = 0,
                        n_normals: int | None = None, n_rolls: int = 4,
                        depths_m: tuple[float, ...] | None = None,
                        collision_tolerance_m: float = 1e-4, max_standoff_m: float = 0.03,
                        standoff_step_m: float = 0.005,
                        max_rounds: int = MAX_NORMAL_ROUNDS) -> GraspCandidates:
    """Up to n collision-free pre-grasps of the world's hand on its object.

    Approaches: the 6 directions along the object's principal axes of inertia (through the
    centre of mass) first, then the inward normals at n_normals surface points sampled by rays
    from random directions, in a seeded random order. Each approach gets n_rolls rolls about
    it (evenly spaced over pi; from the next principal axis for an axis approach, from a random
    offset otherwise) and each depth in depths_m (default: the hand's grasp_depth_m, half of it
    and 0). Where the open hand penetrates the object or the table by more than
    collision_tolerance_m at that depth (MuJoCo's contacts), it backs off along the approach in
    standoff_step_m steps, up to max_standoff_m beyond the surface (an object wider than the
    open hand is met by the fingertips, which the simulation then judges).

    Preshapes: each approach and roll gets one of the hand's preshapes (HandModel.preshapes),
    in turn along the principal-axis approaches and rolls, drawn with the seed for the sampled
    normals; where the hand collides in it at every standoff, the other preshapes are tried in
    their order, so a grasp that only fits with the fingers together is not lost to the wider
    spread. If every preshape collides, or the candidate lands where an earlier one of the same
    approach, roll and preshape stands, it is left out, so fewer than n may come back. Same
    world and seed, same candidates.

    n_normals None (the default): the sampled normals grow with n. A first round of
    NORMALS_PER_ROUND normals is drawn and used as above; while fewer than n candidates are
    found, a further round of NORMALS_PER_ROUND normals is drawn from the same random stream
    (its pool shuffled on its own), up to max_rounds rounds, stopping early after a round that
    adds no candidate. So the first candidates do not depend on n: asking for more appends to
    what a smaller n gives. An explicit n_normals is one round of that many (no growth).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    grow = n_normals is None
    if grow:
        n_normals = NORMALS_PER_ROUND
    if n_rolls < 1 or n_normals < 0:
        raise ValueError(f"n_rolls must be >= 1 and n_normals >= 0, got {n_rolls!r} and {n_normals!r}")
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, (int, np.integer)) or max_rounds < 1:
        raise ValueError(f"max_rounds must be an integer >= 1, got {max_rounds!r}")
    g = world.hand.grasp_depth_m
    # default depths: the hand's nominal one, half of it and the TCP on the surface (a short
    # object leaves the long fingers of a three-finger hand no room for the nominal depth)
    depths = (g, 0.5 * g, 0.0) if depths_m is None else tuple(float(x) for x in depths_m)
    rng = np.random.default_rng(seed)
    preshapes = np.array(world.hand.preshapes, np.float64).reshape(len(world.hand.preshapes),
                                                                    world.preshape_value.size)
    n_pre = len(preshapes)
    d = world.data
    place_hand(world, pose(np.eye(3), (0.0, 0.0, 10.0)))  # hand far away, object resting
    T_wo = world.T_world_object
    com = d.xipos[world.object_body].copy()
    R_inertia = d.ximat[world.object_body].reshape(3, 3)

    # (outward direction in world, source, closing axis to align): principal axes through the COM;
    # random directions aimed at the COM whose surface normal becomes the approach; along a
    # principal axis the rolls start with the closing direction on the next principal axis
    # (a box's faces squarely between the fingers), elsewhere at a random offset
    rays = [(s * R_inertia[:, k], SOURCE_PRINCIPAL_AXIS, R_inertia[:, (k + 1) % 3])
            for k in range(3) for s in (1.0, -1.0)]
    T_ow = invert(T_wo)
    out = []
    taken = set()
    n_axis_rolls = [0]  # principal-axis (approach, roll) pairs so far: they take preshapes in turn
    for round_ in range(max_rounds if grow else 1):
        if len(out) >= n:
            break
        dirs = rng.normal(size=(n_normals, 3))
        rays += [(v / np.linalg.norm(v), SOURCE_SURFACE_NORMAL, None) for v in dirs]
        pool = _pool(world, rays, com, rng, n_rolls, depths, n_pre, n_axis_rolls)
        rays = []  # the principal axes only in the first round
        # principal axes in their given order, then the sampled normals shuffled
        n_axis = sum(1 for p in pool if p[4] == SOURCE_PRINCIPAL_AXIS)
        order = list(range(n_axis)) + list(n_axis + rng.permutation(len(pool) - n_axis))
        before = len(out)
        _take(world, pool, order, n, T_ow, preshapes, collision_tolerance_m, max_standoff_m,
              standoff_step_m, out, taken)
        if round_ > 0 and len(out) == before:
            break  # a whole round found nothing new: the object has no more to give
    k = len(out)
    return GraspCandidates(
        np.array([o[0] for o in out]).reshape(k, 4, 4), np.array([o[1] for o in out]).reshape(k, 3),
        np.array([o[2] for o in out], np.float64), np.array([o[3] for o in out], np.float64),
        np.array([o[4] for o in out], np.int8),
        np.array([o[5] for o in out], np.float64).reshape(k, preshapes.shape[1]))


def _pool(world: GraspWorld, rays: list, com: np.ndarray, rng, n_rolls: int, depths: tuple,
          n_pre: int, n_axis_rolls: list[int]) -> list[tuple]:
    """(surface point, approach, depth, roll, source, first preshape) for every ray that meets
    the object, roll and depth; draws the rolls' offsets and preshapes from rng in ray order.
    n_axis_rolls : [count] of principal-axis (approach, roll) pairs so far, updated."""
    pool = []
    for outward, source, x_axis in rays:
        hit = _surface_hit(world, outward, com)
        if hit is None:
            continue
        point, normal = hit
        approach = -outward if source == SOURCE_PRINCIPAL_AXIS else -normal
        if x_axis is None:
            offset = rng.uniform(0.0, math.pi / n_rolls)
        else:
            R0 = frame_from_approach(approach, 0.0)
            offset = math.atan2(x_axis @ R0[:, 1], x_axis @ R0[:, 0])
        for r in range(n_rolls):
            if source == SOURCE_PRINCIPAL_AXIS:
                first = n_axis_rolls[0] % n_pre
                n_axis_rolls[0] += 1
            else:  # a one-preshape hand draws nothing: its candidates stay as they were
                first = int(rng.integers(n_pre)) if n_pre > 1 else 0
            for depth in depths:
                pool.append((point, approach, depth, offset + r * math.pi / n_rolls, source, first))
    return pool


def _take(world: GraspWorld, pool: list, order: list, n: int, T_ow: np.ndarray,
          preshapes: np.ndarray, collision_tolerance_m: float, max_standoff_m: float,
          standoff_step_m: float, out: list, taken: set) -> None:
    """Append to out (up to n in all) the collision-free pre-grasps of pool's entries in order,
    each at its first preshape and depth that fits (see pregrasp_candidates); taken holds the
    keys of those already in out and is updated."""
    n_pre = len(preshapes)
    n_back = int(round(max_standoff_m / standoff_step_m)) if standoff_step_m > 0 else 0
    for idx in order:
        if len(out) >= n:
            break
        point, approach, depth, roll, source, first = pool[idx]
        R_world_hand = frame_from_approach(approach, roll)
        found = None
        for j in range(n_pre):  # its own preshape first, then the others in their order
            pre = (first + j) % n_pre
            # deepest first, then back off: the first collision-free depth is the pre-grasp
            for back in range(n_back + 1):
                d_try = min(depth, depth - back * standoff_step_m) if back else depth
                T = T_ow @ pose(R_world_hand, point + d_try * approach)
                if not hand_collides(world, T, preshapes[pre], collision_tolerance_m):
                    found = (T, d_try, pre)
                    break
            if found is not None:
                break
        if found is None:
            continue
        T, d_try, pre = found
        key = (tuple(np.round(point, 6)), tuple(np.round(approach, 6)), round(roll, 6), round(d_try, 6), pre)
        if key in taken:
            continue
        taken.add(key)
        out.append((T, T_ow[:3, :3] @ approach, d_try, roll, source, preshapes[pre]))
