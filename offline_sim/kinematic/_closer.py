"""Kinematic grasp closing against a fixed object, and Weisz & Allen's P(force closure).

Weisz & Allen (sec. II-A) run GraspIt!'s grasping heuristic with the object held still: the
hand approaches along its approach direction and stops at the pre-grasp or at the first
contact, then every finger joint closes until it is blocked by contact or by its limit; ε of
the contacts reached decides force closure. Here MuJoCo does the geometry: the hand moves by
writing joint positions (mj_kinematics) and the gaps come from its collision detection with a
contact margin (mj_collision reports every pair closer than the margin, with its distance), so
no dynamics runs and the object never moves.

Motion is by conservative advancement: each step moves every free point of the hand by at
most the gap in front of it, so nothing passes through the object, and gaps shrink
geometrically to the contact tolerance instead of creeping in fixed small steps. The approach
(a translation) stops at the first position of a 0.25 mm lattice along it that is within the
tolerance of a contact; which positions are queried only changes the cost, so P(fc)'s poses
skip the queries that their neighbours' gaps make needless (_approach.approach_lattice), and
the contacts are those of a cold approach, bit for bit.

Where a P(fc) grid's time goes (docs/figures.md, "P(fc) by kinematic closing"): MuJoCo's collision queries, about 9 per
pose (an approach query costs about as much as a closing step), qhull on the poses whose
force closure no neighbour's hull settles, and the Python around both.

The modules: _settings (ClosingSettings), _model (the closer's copy of the world's model and
the start of a closing), _gaps (one collision query), _approach (the approach and its warm
start), _closing (the joints' closing), _contacts (the contacts reached), _force_closure (ε,
its shortcuts and the certificates neighbouring poses share), _pfc (P(fc) over a grid), and
_closing_kernels (the Numba arithmetic of one step). The reference paths the tests check them
against (the earlier stepped approach and the NumPy closing) are in
tests/offline_sim/kinematic_reference.py.

Departures from the paper (GraspIt! is not available; these are ours):
- Joints close at their drive speeds with no load (Kim eq. 1 at τ = 0), a tendon's speed split
  over its joints as compliant joints share it at rest (coefficient over stiffness). A joint
  stops when any link it carries touches the object or the table, so a BH8 finger whose
  proximal link is blocked curls its distal one on, as GraspIt!'s autograsp does.
- Joints coupled by an equality (a parallel jaw's mimic finger) start with the ratio of the
  coupling but stop independently: with the object fixed, a coupled jaw would otherwise stop
  at the first pad, where the real object would be pushed to the second.
- Phases 1a and 2a (withdrawing and re-opening the hand) collapse into starting the approach
  from the pre-grasp posture, which our candidates already hold open; phase 2b (approaching
  further for non-fingertip grasps) is left out, as in our dynamic simulation.
"""
from __future__ import annotations

import numpy as np

from ._approach import ApproachMemo, approach_lattice
from ._closing import close_joints
from ._contacts import ClosedGrasp, grasp_contacts
from ._force_closure import FcMemo, epsilon, force_closure
from ._model import ClosingModel
from ._pfc import PfcResult, pfc


class KinematicCloser(ClosingModel):
    """Kinematic closing of one world's hand on its object, fixed at any displaced pose.

    Holds its own copy of the world's model (hand geoms given a contact margin, object-table
    pairs switched off) and data, so the world's dynamic simulation is untouched: built as
    KinematicCloser(world, ClosingSettings()), set up by ClosingModel.
    """

    def close(self, T_object_hand: np.ndarray, T_displace: np.ndarray | None = None,
              preshape: np.ndarray | None = None, *,
              warm: ApproachMemo | None = None) -> ClosedGrasp:
        """Approach and close on the object displaced by T_displace (4, 4, world; None: at
        rest) with the hand planned at T_object_hand (TCP in the nominal object frame).
        warm : what earlier closings of the same grasp (T_object_hand, preshape) measured on
        their approach (an ApproachMemo; pfc keeps one per grasp); it saves collision
        queries and changes nothing else: the contacts are those of a cold closing (tested).
        """
        import mujoco

        d = self.data
        # the object and the hand's mount; approach_lattice moves the carrier to the start
        approach = self.set_start(T_object_hand, T_displace, preshape)
        if warm is not None:
            warm.start(T_object_hand, preshape, T_displace)
        # the gaps along the way need each pair's nearest points only: without MuJoCo's
        # extra contact points per pair (multiccd) a query costs about a third less; the
        # contacts of the result are queried with them, at the final posture
        m, flags = self.model, self.model.opt.disableflags
        m.opt.disableflags = flags | mujoco.mjtDisableBit.mjDSBL_MULTICCD
        try:
            steps, gap = approach_lattice(self, approach, warm)
            if gap is None:  # the displaced object sits where the hand starts
                return grasp_contacts(self, True, False, steps)
            reached, gap = gap
            steps = close_joints(self, gap, steps)
        finally:
            m.opt.disableflags = flags
        if not flags & mujoco.mjtDisableBit.mjDSBL_MULTICCD:
            mujoco.mj_collision(m, d)  # the kinematics are those of the last query
            steps += 1
        return grasp_contacts(self, False, reached, steps)

    def epsilon(self, grasp: ClosedGrasp, mu: float, torque_scale_m: float) -> float:
        """Ferrari-Canny ε of the contacts (0 without any)."""
        return epsilon(grasp, mu, torque_scale_m)

    def force_closure(self, grasp: ClosedGrasp, mu: float, torque_scale_m: float,
                      delta: float = 0.001, exact: bool = False,
                      memo: FcMemo | None = None) -> tuple[bool, float]:
        """(ε > delta, the ε that decided it), by the shortcuts and, with memo (what a
        neighbouring pose found), the certificates of _force_closure.force_closure."""
        return force_closure(grasp, mu, torque_scale_m, delta, exact, memo)

    def pfc(self, T_object_hand: np.ndarray, preshape: np.ndarray | None = None, *,
            grid: np.ndarray | None = None, mu: float = 0.8, torque_scale_m: float | None = None,
            delta: float = 0.001, exact_epsilons: bool = False, reuse_hulls: bool = True,
            warm_approach: bool = True, progress=None) -> PfcResult:
        """Weisz & Allen's P(fc) of one grasp over grid (default ±10 mm, ±20°, 1 mm / 1°:
        18,081 poses); the arguments are _pfc.pfc's."""
        return pfc(self, T_object_hand, preshape, grid=grid, mu=mu, torque_scale_m=torque_scale_m,
                   delta=delta, exact_epsilons=exact_epsilons, reuse_hulls=reuse_hulls,
                   warm_approach=warm_approach, progress=progress)
