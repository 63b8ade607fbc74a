"""Objects for simulation: convex parts, mass, resting poses, decomposition cache, MJCF."""
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("trimesh")

from offline_sim.objects import (BUILTIN_OBJECTS, builtin_object, load_object,  # noqa: E402
                                 object_mjcf)

YCB = Path(__file__).resolve().parents[3] / "shared" / "data" / "ycb"


def test_builtin_box_has_its_analytic_mass_and_six_resting_faces():
    box = builtin_object("box", density=1000.0)
    assert box.mass_kg == pytest.approx(0.05 * 0.08 * 0.12 * 1000.0, rel=1e-6)
    assert len(box.stable_poses) == 6
    # resting on the largest face (0.08 x 0.12) is the most probable
    up_in_object = box.stable_poses[0][2, :3]  # the table's z in the box's frame
    assert abs(up_in_object[0]) == pytest.approx(1.0, abs=1e-6)  # the 5 cm side stands up


@pytest.mark.parametrize("name", BUILTIN_OBJECTS)
def test_builtin_objects_rest_on_the_table_in_their_first_pose(name):
    obj = builtin_object(name)
    assert obj.mass_kg > 0 and len(obj.parts) >= 1
    verts = obj.visual[0]
    T = obj.stable_poses[0]
    placed = verts @ T[:3, :3].T + T[:3, 3]
    assert placed[:, 2].min() == pytest.approx(0.0, abs=1e-6)
    com = T[:3, 3]
    assert com[2] > 0
    assert obj.stable_probabilities[0] == obj.stable_probabilities.max()


@pytest.mark.parametrize("name", ["mug", "l_bracket"])
def test_builtin_objects_settle_in_mujoco_without_moving(name):
    import mujoco

    obj = builtin_object(name)
    assets, geoms = object_mjcf(obj, "o")
    T = obj.stable_poses[0]
    from scipy.spatial.transform import Rotation

    q = Rotation.from_matrix(T[:3, :3]).as_quat(scalar_first=True)
    xml = f"""<mujoco><option timestep="0.002"/><asset>{assets}</asset><worldbody>
      <geom type="plane" size="1 1 0.1"/>
      <body pos="{T[0, 3]} {T[1, 3]} {T[2, 3] + 0.001}" quat="{' '.join(map(str, q))}">
        <freejoint/>{geoms}</body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    start = data.qpos[:3].copy()
    for _ in range(500):
        mujoco.mj_step(model, data)
    assert model.body_mass[1] == pytest.approx(obj.mass_kg, rel=1e-3)
    assert np.linalg.norm(data.qpos[:3] - start) < 0.004  # it rests where it was put


def test_unknown_builtin_and_bad_meshes_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown built-in object 'teapot'; choose from box"):
        builtin_object("teapot")
    with pytest.raises(ValueError, match="does not exist"):
        load_object(tmp_path / "none.obj")
    bad = tmp_path / "bad.obj"
    bad.write_text("this is not a mesh\n")
    with pytest.raises(ValueError, match="bad.obj"):
        load_object(bad, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="scale must be finite and > 0, got 0"):
        load_object(YCB / "banana" / "visual.obj", scale=0)


@pytest.mark.slow   # CoACD decomposes the scanned banana once: about 40 s
@pytest.mark.skipif(not (YCB / "banana").is_dir(), reason=f"YCB meshes not found at {YCB}")
def test_scanned_mesh_is_decomposed_once_and_cached(tmp_path):
    t0 = time.perf_counter()
    first = load_object(YCB / "banana" / "visual.obj", cache_dir=tmp_path, density=400.0)
    cold = time.perf_counter() - t0
    assert list(tmp_path.glob("coacd-*.pkl"))
    t0 = time.perf_counter()
    again = load_object(YCB / "banana" / "visual.obj", cache_dir=tmp_path, density=400.0)
    warm = time.perf_counter() - t0
    assert first.name == "banana" and len(first.parts) >= 1
    assert len(again.parts) == len(first.parts)
    for (v1, _), (v2, _) in zip(first.parts, again.parts):
        np.testing.assert_allclose(v1, v2)
    assert warm < cold
    assert 0.02 < first.mass_kg < 0.3  # 0.066 kg in the YCB set; density is our assumption
    np.testing.assert_allclose(np.sort(first.extents_m), np.sort([0.196, 0.079, 0.038]), atol=0.01)
