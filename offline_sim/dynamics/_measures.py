"""Measures of a simulated grasp: hand-object contacts, Kim's measures B and C, BLEM hold diagnostics.

Like the controller, these read a MuJoCo model+data through ids (the object body, the table
geom, the TCP site, a body -> hand-link map), not through a particular world, so a cell with
several objects measures each grasp the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from geometry import invert, pose, rotation_angle
from ._sim_settings import SimSettings


@dataclass(frozen=True)
class ContactSet:
    """Contacts between hand links and the object, in the object frame.

    positions : (K, 3) metres; normals : (K, 3) unit, pointing into the object; forces : (K, 3)
    newtons exerted on the object; links : (K,) int32 index into HandModel.links.
    """

    positions: np.ndarray
    normals: np.ndarray
    forces: np.ndarray
    links: np.ndarray


@dataclass(frozen=True)
class HoldDiagnostics:
    """BLEM contact-stability scores over the hold (0 is best): force variation (eq. 7,
    dimensionless), contact position variation (eq. 8, metres), normal variation (eq. 9);
    NaN where no link touched the object in two samples or more."""

    force_variation: float
    position_variation_m: float
    normal_variation: float
    n_samples: int


@dataclass(frozen=True)
class GraspProbe:
    """Where a grasp's measures look in a model: the object's body, the TCP site, the table
    geom, and link_of_body : (nbody,) the hand-link index of each body, -1 for none."""

    object_body: int
    tcp_site: int
    table_geom: int
    link_of_body: np.ndarray

    def T_world_object(self, data) -> np.ndarray:
        """(4, 4) pose of the object's body frame in the world, now."""
        return pose(data.xmat[self.object_body].reshape(3, 3), data.xpos[self.object_body])

    def T_hand_object(self, data) -> np.ndarray:
        """(4, 4) pose of the object's body frame in the TCP frame, now."""
        T_w_tcp = pose(data.site_xmat[self.tcp_site].reshape(3, 3), data.site_xpos[self.tcp_site])
        return invert(T_w_tcp) @ self.T_world_object(data)

    def com_in_hand(self, data) -> np.ndarray:
        """(3,) the object's centre of mass in the TCP frame, metres, now."""
        R = data.site_xmat[self.tcp_site].reshape(3, 3)
        return R.T @ (data.xipos[self.object_body] - data.site_xpos[self.tcp_site])

    def contacts(self, model, data, with_force: bool) -> tuple[ContactSet, bool]:
        """Hand-link/object contacts now, in the object frame (forces zero unless with_force);
        and whether the object touches the table."""
        return object_contacts(model, data, self, invert(self.T_world_object(data)), with_force)


def object_contacts(model, data, probe: GraspProbe, T_object_world: np.ndarray,
                    with_force: bool) -> tuple[ContactSet, bool]:
    """Hand-link/object contacts now: links, positions, normals into the object, forces on it,
    in the object frame (T_object_world (4, 4)); and whether the object touches the table."""
    import mujoco

    m, d = model, data
    n = d.ncon
    empty = ContactSet(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, np.int32))
    if n == 0:
        return empty, False
    con = d.contact
    g1, g2 = con.geom1[:n], con.geom2[:n]
    b1, b2 = m.geom_bodyid[g1], m.geom_bodyid[g2]
    obj1, obj2 = b1 == probe.object_body, b2 == probe.object_body
    on_table = bool(np.any((obj1 & (g2 == probe.table_geom)) | (obj2 & (g1 == probe.table_geom))))
    link = np.where(obj1, probe.link_of_body[b2], probe.link_of_body[b1])
    keep = np.flatnonzero((obj1 | obj2) & (link >= 0))
    if keep.size == 0:
        return empty, on_table
    R_ow, p_ow = T_object_world[:3, :3], T_object_world[:3, 3]
    frames = con.frame[keep].reshape(-1, 3, 3)  # rows: normal (geom1 -> geom2), tangents
    sgn = np.where(obj2[keep], 1.0, -1.0)[:, None]  # +1 when the object is geom2
    normals = sgn * frames[:, 0, :]
    forces = np.zeros((keep.size, 3))
    if with_force:
        f6 = np.zeros(6)
        for j, i in enumerate(keep):
            mujoco.mj_contactForce(m, d, int(i), f6)
            forces[j] = f6[:3] @ frames[j]  # contact frame -> world: force on geom2
        forces *= sgn
    pos = con.pos[keep] @ R_ow.T + p_ow
    return ContactSet(pos, normals @ R_ow.T, forces @ R_ow.T, link[keep].astype(np.int32)), on_table


class HoldSampler:
    """Per-link samples over the hold (resultant force, mean position, mean normal), and the
    BLEM scores (eqs. 7-9) they give."""

    def __init__(self) -> None:
        self.samples: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self.n = 0

    def add(self, c: ContactSet) -> None:
        """Take one sample of the contacts c."""
        self.n += 1
        for k in np.unique(c.links):
            sel = c.links == k
            nk = c.normals[sel].mean(axis=0)
            self.samples.setdefault(int(k), []).append(
                (c.forces[sel].sum(axis=0), c.positions[sel].mean(axis=0),
                 nk / max(np.linalg.norm(nk), 1e-12)))

    def diagnostics(self) -> HoldDiagnostics:
        """BLEM eqs. 7-9 averaged over the links sampled twice or more (NaN where none was)."""
        return blem_scores(self.samples, self.n)


def blem_scores(samples: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]], n: int) -> HoldDiagnostics:
    """BLEM eqs. 7-9 from per-link samples (resultant force, mean position, mean normal)."""
    sf, sp, sn = [], [], []
    for rows in samples.values():
        if len(rows) < 2:
            continue
        f, x, nn = (np.array([r[i] for r in rows]) for i in range(3))
        # ||Var[v]||_F of a vector signal: the Frobenius norm of its covariance matrix
        var = lambda v: float(np.linalg.norm(np.cov(v.T, bias=True), "fro"))  # noqa: E731
        mean_f = float(np.mean(np.linalg.norm(f, axis=1)))
        sf.append(math.sqrt(var(f)) / mean_f if mean_f > 0 else math.nan)
        sp.append(math.sqrt(var(x)))
        sn.append(math.sqrt(var(nn)))
    mean = lambda v: float(np.mean(v)) if v else math.nan  # noqa: E731
    return HoldDiagnostics(mean(sf), mean(sp), mean(sn), n)


def area_link(points: np.ndarray, min_spread_m: float) -> bool:
    """Whether contact points (K, 3) span an area (not a point or a line) of RMS width >= min."""
    if len(points) < 3:
        return False
    s = np.linalg.svd(points - points.mean(axis=0), compute_uv=False)
    return bool(s[1] / math.sqrt(len(points)) >= min_spread_m)


def support_count(c: ContactSet, settings: SimSettings) -> tuple[int, int]:
    """(links touching the object, those of them pressing an area) of the contacts c."""
    links = np.unique(c.links)
    n_area = sum(area_link(c.positions[c.links == k], settings.area_contact_min_m) for k in links) \
        if settings.area_contact_counts_two else 0
    return int(links.size), int(n_area)


def measure_b(n_links: int, n_area: int, lifted: bool) -> float:
    """Kim measure B: >= 3 supporting links -> 1, 2 -> 0.5 (may dangle), else 0; 0 unless lifted.

    Our reading of Kim's footnote 1: a link pressing an area (a pad on a face) resists rotation
    about the contact like two point contacts, so it counts twice (area_contact_counts_two).
    """
    support = n_links + n_area
    return (1.0 if support >= 3 else 0.5 if support == 2 else 0.0) if lifted else 0.0


def deviation(com_ref: np.ndarray, com_end: np.ndarray, T_ref: np.ndarray,
              T_end: np.ndarray) -> tuple[float, float]:
    """Kim eq. 3: (m) the object's COM shift in the hand, (rad) its rotation in the hand,
    between the hand-frame poses T_ref and T_end (4, 4)."""
    dp = float(np.linalg.norm(com_end - com_ref))
    return dp, rotation_angle(T_ref[:3, :3].T @ T_end[:3, :3])


def measure_c(dp_m: float, dR_rad: float, lifted: bool, settings: SimSettings) -> float:
    """Kim measure C (eq. 2): the mean of the position and orientation scores of the deviation
    against the settings' limits, in [0, 1]; 0 unless lifted."""
    qp = max(0.0, 1.0 - dp_m / settings.deviation_limit_m)
    qr = max(0.0, 1.0 - dR_rad / settings.deviation_limit_rad)
    return 0.5 * (qp + qr) if lifted else 0.0
