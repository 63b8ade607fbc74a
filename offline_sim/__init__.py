"""Offline simulation: MuJoCo worlds, hand and object models, the dynamic grasp simulation (Kim
et al.), kinematic closing and P(fc) (Weisz & Allen), pose uncertainty, and the build of the
simulation-ranked grasp database. Import the subpackage that does what you need:

  hands/      hand models: built-in parallel jaw, three-finger and underactuated hands, a user's
              MJCF hand (HandModel, Drive, builtin_hand, load_mjcf_hand)
  objects/    objects to grasp (GraspObject: built-in set, scanned meshes with convex
              decomposition), tabletop scenes (ObjectSpec, build_tabletop_scene), the vision
              figures' scenes (figure_scene, scene_footprint)
  dynamics/   the dynamic grasp simulation: the grasp world, the torque-limited closing
              controller, lift/hold/shake, measures B and C, native motor-curve closing
              rolled out in batches, SimSettings (build_grasp_world, simulate_grasp, ...)
  quality/    simulator-free grasp quality and its robustness: measure A (ferrari_canny),
              Monte Carlo pose error with early discard, the P(fc) grid
  kinematic/  kinematic closing against a fixed object and P(fc) (KinematicCloser)
  database/   pre-grasp candidates, the evaluators, the parallel resumable build and the
              SQLite writer (build_database, SimEvaluatorFactory, GraspDatabaseWriter)
  cell/       the simulated picking cell behind the drivers' interfaces (SimCell), loaded by
              name by onboard

Imports run one way: dynamics uses hands and objects; kinematic uses dynamics, objects and
quality; database uses all of these; cell uses hands, objects and dynamics. Subpackages use
each other's public names; the few helpers they share beyond those are imported from the defining module (hands._hands.SOLREF,
objects._meshes.assemble_object, objects._tabletop.primitive_geom_xml,
dynamics._grasp_world.OBJECT_GEOM_GROUP and bodies_below, dynamics._native.check_closing).
mujoco, trimesh, coacd and ray are imported only inside the functions that use them:
importing any subpackage loads none of them.
"""
