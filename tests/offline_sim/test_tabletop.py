"""Tabletop scenes: objects rest on the table without overlapping; meshes load; bad specs fail."""
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from offline_sim.objects import ObjectSpec, build_tabletop_scene, ycb_specs  # noqa: E402

YCB = Path(__file__).resolve().parents[3] / "shared" / "data" / "ycb"


def test_random_scene_is_seeded_and_objects_do_not_overlap():
    a = build_tabletop_scene(n_objects=8, seed=11)
    b = build_tabletop_scene(n_objects=8, seed=11)
    np.testing.assert_array_equal(a.poses, b.poses)
    assert a.object_names == b.object_names and len(a.object_names) == 8
    xy = a.poses[:, :2, 3]
    for i in range(8):
        for j in range(i):
            assert np.linalg.norm(xy[i] - xy[j]) > 0.02


def test_objects_rest_on_the_table_top():
    import mujoco

    scene = build_tabletop_scene([ObjectSpec("b", "box", (0.05, 0.05, 0.08)),
                                  ObjectSpec("c", "cylinder", (0.03, 0.12))], seed=0)
    for k in (1, 2):
        gid = int(np.flatnonzero(scene.geom_instance == k)[0])
        lowest = scene.data.geom_xpos[gid][2] - scene.model.geom_size[gid][{1: 2, 2: 1}[k]]
        assert lowest == pytest.approx(scene.table_height_m, abs=1e-6)
    # nothing penetrates: MuJoCo finds no contact deeper than a millimetre
    mujoco.mj_forward(scene.model, scene.data)
    assert all(scene.data.contact[i].dist > -1e-3 for i in range(scene.data.ncon))


@pytest.mark.skipif(not YCB.is_dir(), reason=f"YCB meshes not found at {YCB} (../shared/data/ycb)")
def test_ycb_meshes_load_and_rest_on_the_table():
    specs = ycb_specs(YCB)
    assert {s.name for s in specs} >= {"banana", "cracker_box", "master_chef_can"}
    scene = build_tabletop_scene(specs[:3], seed=2)
    assert scene.model.nmesh == 3
    for k in range(1, 4):
        gid = int(np.flatnonzero(scene.geom_instance == k)[0])
        mid = scene.model.geom_dataid[gid]
        start, n = scene.model.mesh_vertadr[mid], scene.model.mesh_vertnum[mid]
        verts = scene.model.mesh_vert[start:start + n]
        world = verts @ scene.data.geom_xmat[gid].reshape(3, 3).T + scene.data.geom_xpos[gid]
        assert world[:, 2].min() == pytest.approx(scene.table_height_m, abs=2e-3)


@pytest.mark.parametrize("spec,message", [
    (dict(name="x", kind="sphere", size=(0.1,)), r"kind must be box, cylinder or mesh, got 'sphere'"),
    (dict(name="x", kind="box", size=(0.1, 0.1)), r"a box needs 3 sizes > 0, got \(0.1, 0.1\)"),
    (dict(name="x", kind="cylinder", size=(0.1, -1.0)), r"a cylinder needs 2 sizes > 0"),
    (dict(name="x", kind="mesh", mesh_path="/nope.obj"), r"mesh_path '/nope.obj' is not a file"),
])
def test_bad_object_specs_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        ObjectSpec(**spec)


def test_too_many_objects_for_the_table_is_a_clear_error():
    big = [ObjectSpec(f"b{i}", "box", (0.3, 0.3, 0.1)) for i in range(6)]
    with pytest.raises(ValueError, match="cannot place 6 objects"):
        build_tabletop_scene(big, seed=0)
    with pytest.raises(ValueError, match="n_objects must be between 1 and 20, got 0"):
        build_tabletop_scene(n_objects=0)
