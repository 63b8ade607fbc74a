"""The Numba kernels of the tabletop segmenter against plain-numpy references."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# The segmenter's private Numba kernels, each against a plain-numpy reference: the kernels
# themselves are what is tested, so this file imports the private module.
from vision._kernels import depth_cuts, height_classes

from .synth import INTR, random_scene, render, look_at


def ray_axes(intr):
    """The kernels' ray inputs: (W,) (u - cx) / fx and (H,) (v - cy) / fy, float32."""
    rx = ((np.arange(intr.width, dtype=np.float64) - intr.cx) / intr.fx).astype(np.float32)
    ry = ((np.arange(intr.height, dtype=np.float64) - intr.cy) / intr.fy).astype(np.float32)
    return rx, ry


def reference_heights(depth, rx, ry, normal, offset, grow_h, min_h, max_h, max_range):
    """(cand, seed) bool: readings in (0, max_range] whose height above the plane lies in
    (grow_h, max_h), and those of them above min_h."""
    with np.errstate(invalid="ignore"):
        valid = (depth > 0) & (depth <= max_range)
        pts = np.stack([rx[None, :] * depth, ry[:, None] * depth, depth], axis=-1)
        h = pts @ normal + offset
        cand = valid & (h > grow_h) & (h < max_h)
    return cand, cand & (h > min_h)


def reference_cuts(depth, cand, jump_m, jump_ratio):
    """bool: candidates farther than a 4-neighbour candidate by more than the jump threshold."""
    cut = np.zeros_like(cand)
    h, w = depth.shape
    for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        src = (slice(max(0, -dr), h - max(0, dr)), slice(max(0, -dc), w - max(0, dc)))
        dst = (slice(max(0, dr), h - max(0, -dr)), slice(max(0, dc), w - max(0, -dc)))
        z, q = depth[src], depth[dst]
        both = cand[src] & cand[dst]
        cut[src] |= both & (z > q) & (z - q > np.maximum(jump_m, jump_ratio * q))
    return cut


@pytest.fixture(scope="module")
def frame():
    return render(random_scene(7, 11), look_at((0.4, -0.2, 0.5), (0, 0, 0)), noise=True, seed=11)


@pytest.mark.parametrize("normal,offset", [((0.0, -0.6, -0.8), 0.6), ((0.1, 0.2, -0.97), 0.4)])
def test_height_classes_match_the_reference(frame, normal, offset):
    n = np.asarray(normal, np.float64) / np.linalg.norm(normal)
    rx, ry = ray_axes(INTR)
    cand, seed = np.empty((480, 640), np.uint8), np.empty((480, 640), np.uint8)
    height_classes(frame.depth_m, rx, ry, n, offset, 0.004, 0.01, 0.5, 5.0, cand, seed)
    ref_cand, ref_seed = reference_heights(frame.depth_m, rx, ry, n.astype(np.float32), offset,
                                           0.004, 0.01, 0.5, 5.0)
    # float32 products in the reference; a height within rounding of a threshold may differ
    assert np.count_nonzero(cand.view(bool) != ref_cand) <= 2
    assert np.count_nonzero(seed.view(bool) != ref_seed) <= 2


@pytest.mark.parametrize("jump_m,jump_ratio", [(0.012, 0.02), (0.003, 0.0), (0.05, 0.1)])
def test_depth_cuts_match_the_reference(frame, jump_m, jump_ratio):
    rng = np.random.default_rng(0)
    cand = (rng.random(frame.depth_m.shape) < 0.9) & (frame.depth_m > 0)
    cut = np.empty(cand.shape, np.uint8)
    rows, cols = np.empty(cand.size, np.int64), np.empty(cand.size, np.int64)
    n = depth_cuts(frame.depth_m, cand, jump_m, jump_ratio, cut, rows, cols)
    ref = reference_cuts(frame.depth_m, cand, jump_m, jump_ratio)
    np.testing.assert_array_equal(cut.view(bool), ref)
    ref_rows, ref_cols = np.nonzero(ref)
    np.testing.assert_array_equal(rows[:n], ref_rows)
    np.testing.assert_array_equal(cols[:n], ref_cols)


# ---- the rest of the kernels, each against a numpy reference written another way ----------

from vision._kernels import (claim_holes, component_stats, extent_above,  # noqa: E402
                             plane_grid, plane_inlier_counts, plane_moments, rasterise_surface,
                             reassign_cuts)

SHIFTS = ((0, 1), (0, -1), (1, 0), (-1, 0))


def shifted(a: np.ndarray, dr: int, dc: int, fill) -> np.ndarray:
    """a[r + dr, c + dc] at (r, c), fill off the array."""
    out = np.full_like(a, fill)
    h, w = a.shape[:2]
    out[max(0, -dr):h - max(0, dr), max(0, -dc):w - max(0, dc)] = \
        a[max(0, dr):h - max(0, -dr), max(0, dc):w - max(0, -dc)]
    return out


def test_plane_inlier_counts_and_moments_match_numpy():
    rng = np.random.default_rng(2)
    pts = rng.normal(size=(500, 3))
    normals = rng.normal(size=(20, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    offsets = rng.normal(size=20) * 0.3
    counts = np.empty(20, np.int64)
    plane_inlier_counts(pts, normals, offsets, 0.2, counts)
    np.testing.assert_array_equal(counts, (np.abs(pts @ normals.T + offsets) < 0.2).sum(axis=0))
    n, c, S = plane_moments(pts, normals[0], offsets[0], 0.2)
    inl = pts[np.abs(pts @ normals[0] + offsets[0]) < 0.2]
    assert n == len(inl)
    np.testing.assert_allclose(c, inl.mean(axis=0))
    np.testing.assert_allclose(S, (inl - c).T @ (inl - c), atol=1e-12)


def test_component_stats_match_bincount():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 6, (40, 50)).astype(np.int32)
    depth = rng.uniform(0.5, 1.0, (40, 50)).astype(np.float32)
    seed = rng.random((40, 50)) < 0.3
    area, seeds, box = component_stats(labels, depth, seed, 6, 1e-5)
    on = labels > 0
    np.testing.assert_allclose(area, np.bincount(labels[on], depth[on].astype(float) ** 2 * 1e-5, 6))
    np.testing.assert_array_equal(seeds, np.bincount(labels[on & seed], minlength=6))
    for k in range(1, 6):
        rows, cols = np.nonzero(labels == k)
        assert tuple(box[k]) == (rows.min(), rows.max() + 1, cols.min(), cols.max() + 1)


def reference_reassign(labels, depth, cut, jump_m, jump_ratio, passes, steep_passes):
    """Each pass: every still-cut pixel takes the label of its labelled 4-neighbour nearest in
    depth (within the jump threshold in the first passes), all from the previous labels."""
    labels = labels.copy()
    todo = cut.copy()
    for k in range(passes + steep_passes):
        best = np.zeros_like(labels)
        best_dz = np.full(depth.shape, np.inf)
        tol = np.maximum(jump_m, jump_ratio * depth) if k < passes else np.inf
        for dr, dc in SHIFTS:
            lab = shifted(labels, dr, dc, 0)
            dz = np.abs(shifted(depth, dr, dc, np.nan) - depth)
            better = todo & (lab > 0) & (dz <= tol) & (dz < best_dz)
            best = np.where(better, lab, best)
            best_dz = np.where(better, dz, best_dz)
        done = best > 0
        if k >= passes and not done.any():
            break
        labels[done] = best[done]
        todo &= ~done
    return labels


def test_reassign_cuts_matches_the_reference():
    rng = np.random.default_rng(4)
    depth = np.where(np.arange(60)[None, :] < 30, 0.6, 0.7) + rng.normal(0, 0.004, (50, 60))
    depth[:, 30:36] = np.linspace(0.6, 0.7, 6)  # a steep wall between two surfaces
    labels = np.zeros((50, 60), np.int32)
    labels[:, :30], labels[:, 36:] = 1, 2
    cut = rng.random((50, 60)) < 0.2
    cut[:, 30:36] = True
    labels[cut] = 0
    ref = reference_reassign(labels, depth, cut, 0.012, 0.02, 2, 12)
    rows, cols = np.nonzero(cut)
    got = labels.copy()
    reassign_cuts(got, depth, rows.astype(np.int64), cols.astype(np.int64), 0.012, 0.02, 2, 12)
    np.testing.assert_array_equal(got, ref)
    assert (got[:, 30:36] > 0).all()  # the wall is shared out, from both sides


def reference_claim(own, valid, steps):
    """Layers grown from the readings: a pixel without one takes the majority owner of its
    already-reached 4-neighbours (ties to the others)."""
    owner = np.where(valid, own.astype(np.int8), -1).astype(np.int8)
    for _ in range(steps):
        mine = sum(shifted(owner, dr, dc, -1) == 1 for dr, dc in SHIFTS)
        theirs = sum(shifted(owner, dr, dc, -1) == 0 for dr, dc in SHIFTS)
        grow = (owner < 0) & (mine + theirs > 0)
        if not grow.any():
            break
        owner = np.where(grow, (mine > theirs).astype(np.int8), owner)
    return (owner == 1) & ~valid


@pytest.mark.parametrize("steps", [0, 1, 4])
def test_claim_holes_matches_the_reference(steps):
    rng = np.random.default_rng(5)
    own = np.zeros((40, 50), bool)
    own[10:30, 10:30] = True
    valid = rng.random((40, 50)) > 0.3
    valid[:, 28:33] = False  # a hole band along the object's edge
    out = np.empty((40, 50), bool)
    claim_holes(own, valid, steps, out)
    np.testing.assert_array_equal(out, reference_claim(own, valid, steps))


def test_plane_grid_and_extent_match_numpy():
    rng = np.random.default_rng(6)
    depth = rng.uniform(0.5, 0.8, (30, 40)).astype(np.float32)
    mask = rng.random((30, 40)) > 0.2
    rx, ry = np.linspace(-0.3, 0.3, 40).astype(np.float32), np.linspace(-0.2, 0.2, 30).astype(np.float32)
    M, b = np.linalg.qr(rng.normal(size=(3, 3)))[0], rng.normal(size=3)
    grid, steps = np.empty((30, 40, 3)), np.empty(2 * 30 * 40)
    n = plane_grid(depth, mask, rx, ry, M, b, grid, steps)
    cam = np.stack(np.broadcast_arrays(rx[None, :] * depth, ry[:, None] * depth, depth), -1)
    ref = np.where(mask[..., None], cam.astype(np.float64) @ M.T + b, np.nan)
    np.testing.assert_allclose(grid, ref, rtol=1e-6, atol=1e-6)
    ref_steps = np.concatenate([
        np.sum((ref[:, 1:, :2] - ref[:, :-1, :2]) ** 2, -1)[mask[:, 1:] & mask[:, :-1]],
        np.sum((ref[1:, :, :2] - ref[:-1, :, :2]) ** 2, -1)[mask[1:] & mask[:-1]]])
    np.testing.assert_allclose(np.sort(steps[:n]), np.sort(ref_steps), rtol=1e-5, atol=1e-9)
    tip = float(np.nanmedian(grid[..., 2]))
    sel = grid[grid[..., 2] <= tip]
    count, mx, my, x0, y0, x1, y1 = extent_above(grid, tip)
    assert count == len(sel)
    np.testing.assert_allclose([mx, my, x0, y0, x1, y1],
                               [*sel[:, :2].mean(0), *sel[:, :2].min(0), *sel[:, :2].max(0)])


def reference_raster(grid, tip, x0, y0, inv_m, max_step, shape):
    """Every pixel centre inside a kept triangle (tested against all of them at once), plus
    the pixels nearest to the samples and to points every half pixel on outline pairs."""
    ok = grid[..., 2] <= tip
    u = (grid[..., 0] - x0) * inv_m
    v = (grid[..., 1] - y0) * inv_m
    step = max_step * inv_m
    out = np.zeros(shape, bool)
    pts = [np.stack([u[ok], v[ok]], 1)]
    q = (ok[:-1, :-1] & ok[:-1, 1:] & ok[1:, :-1] & ok[1:, 1:])
    span = np.maximum.reduce([np.abs(u[1:, 1:] - u[:-1, :-1]), np.abs(v[1:, 1:] - v[:-1, :-1]),
                              np.abs(u[1:, :-1] - u[:-1, 1:]), np.abs(v[1:, :-1] - v[:-1, 1:])])
    q &= np.nan_to_num(span, nan=np.inf) <= step
    cr, cc = np.mgrid[0:shape[0], 0:shape[1]]
    for a, b, c in (((0, 0), (0, 1), (1, 1)), ((0, 0), (1, 1), (1, 0))):
        tri = [np.stack([u[i:u.shape[0] - 1 + i, j:u.shape[1] - 1 + j][q],
                         v[i:v.shape[0] - 1 + i, j:v.shape[1] - 1 + j][q]], 1) for i, j in (a, b, c)]
        A, B, C = (t[:, None, None, :] for t in tri)
        area = ((B[..., 0] - A[..., 0]) * (C[..., 1] - A[..., 1])
                - (B[..., 1] - A[..., 1]) * (C[..., 0] - A[..., 0]))
        s = np.sign(area)

        def edge(P, Q):
            return s * ((Q[..., 0] - P[..., 0]) * (cr - P[..., 1])
                        - (Q[..., 1] - P[..., 1]) * (cc - P[..., 0]))
        inside = (area != 0) & (edge(A, B) >= 0) & (edge(B, C) >= 0) & (edge(C, A) >= 0)
        out |= inside.any(axis=0)
    drawn = np.zeros((ok.shape[0] + 1, ok.shape[1] + 1), bool)
    drawn[1:-1, 1:-1] = q
    for dr, dc in ((0, 1), (1, 0)):
        a_ok = ok[:ok.shape[0] - dr, :ok.shape[1] - dc] & ok[dr:, dc:]
        if dc:   # blocks above and below the horizontal pair
            both = drawn[:-1, 1:-1][:, :ok.shape[1] - 1] & drawn[1:, 1:-1][:, :ok.shape[1] - 1]
        else:    # blocks left and right of the vertical pair
            both = drawn[1:-1, :-1][:ok.shape[0] - 1] & drawn[1:-1, 1:][:ok.shape[0] - 1]
        ua, va = u[:u.shape[0] - dr, :u.shape[1] - dc], v[:v.shape[0] - dr, :v.shape[1] - dc]
        ub, vb = u[dr:, dc:], v[dr:, dc:]
        far = np.maximum(np.abs(ub - ua), np.abs(vb - va))
        sel = a_ok & ~both & (np.nan_to_num(far, nan=np.inf) <= step)
        for a_u, a_v, b_u, b_v, f in zip(ua[sel], va[sel], ub[sel], vb[sel], far[sel]):
            n = int(np.ceil(2.0 * f)) + 1
            t = np.arange(n + 1) / n
            pts.append(np.stack([a_u + t * (b_u - a_u), a_v + t * (b_v - a_v)], 1))
    p = np.concatenate(pts)
    c, r = np.floor(p[:, 0] + 0.5).astype(int), np.floor(p[:, 1] + 0.5).astype(int)
    keep = (r >= 0) & (r < shape[0]) & (c >= 0) & (c < shape[1])
    out[r[keep], c[keep]] = True
    return out


def test_rasterise_surface_matches_the_reference():
    rng = np.random.default_rng(7)
    h, w = 14, 16
    gy, gx = np.mgrid[0:h, 0:w] * 0.0023
    grid = np.stack([gx + rng.normal(0, 4e-4, (h, w)), gy + rng.normal(0, 4e-4, (h, w)),
                     rng.normal(0, 0.01, (h, w))], -1)
    grid[3:5, 6:9] = np.nan          # no samples here
    grid[9, :, :2] += 0.02           # a step: these samples moved 2 cm away
    out = np.zeros((60, 70), np.uint8)
    rasterise_surface(grid, 0.01, -0.005, -0.005, 1000.0, 0.007, out)
    ref = reference_raster(grid, 0.01, -0.005, -0.005, 1000.0, 0.007, (60, 70))
    np.testing.assert_array_equal(out.view(bool), ref)
    assert 0.1 < ref.mean() < 0.35  # a real share of the image: the comparison means something


def reference_fill(depth, mask, valid):
    """Masked pixels without a reading take the mean of their 4-neighbours filled by the
    previous layer, until nothing changes."""
    out = np.where(mask & valid, depth, np.nan)
    while True:
        vals = [shifted(out, dr, dc, np.nan) for dr, dc in SHIFTS]
        n = sum(~np.isnan(v) for v in vals)
        total = sum(np.nan_to_num(v) for v in vals)
        grow = mask & np.isnan(out) & (n > 0)
        if not grow.any():
            return out
        out = np.where(grow, total / np.maximum(n, 1), out)


def test_fill_from_neighbours_matches_the_reference():
    from vision._kernels import fill_from_neighbours

    rng = np.random.default_rng(8)
    depth = rng.uniform(0.5, 0.9, (30, 40)).astype(np.float32)
    mask = np.zeros((30, 40), bool)
    mask[5:25, 5:35] = True
    mask[2:4, 2:4] = True                  # a masked island with no reading at all
    valid = rng.random((30, 40)) > 0.4
    valid[10:20, 10:20] = False            # a big sensor hole
    valid[2:4, 2:4] = False
    out = np.empty((30, 40), np.float32)
    left = fill_from_neighbours(depth, mask, valid, out)
    ref = reference_fill(depth.astype(np.float64), mask, valid)
    np.testing.assert_allclose(out, ref, rtol=1e-6, equal_nan=True)
    assert left == 4 and np.isnan(out[2:4, 2:4]).all() and not np.isnan(out[mask][4:]).any()


def test_surface_depth_kernels_match_the_numpy_reference():
    # the silhouette's depth surface: the Numba passes against their earlier numpy form (private
    # module: the kernels are what is tested), on grids with gaps, NaN samples and points off
    # the image, filling holes of the drawn outline
    from vision._heights import surface_depth, surface_depth_reference, surface_depths

    rng = np.random.default_rng(5)
    for trial in range(20):
        h, w = rng.integers(5, 40, 2)
        grid = np.empty((h, w, 3))
        grid[..., 0] = rng.uniform(-0.01, 0.05, (h, w))
        grid[..., 1] = rng.uniform(-0.01, 0.04, (h, w))
        grid[..., 2] = rng.uniform(0.2, 0.3, (h, w))
        grid[rng.random((h, w)) < 0.2] = np.nan          # outside the mask
        grid[rng.random((h, w)) < 0.05, 0] = np.inf      # a broken sample
        shape = (int(rng.integers(20, 50)), int(rng.integers(20, 60)))
        within = rng.random(shape) < 0.7
        lo, m = np.array([0.0, 0.0]), float(rng.choice([0.001, 0.0015]))
        a = surface_depth(grid, lo, shape, m, within)
        b = surface_depth_reference(grid, lo, shape, m, within)
        np.testing.assert_array_equal(a, b)
        # two surfaces of one grid from one placing of its samples (the silhouette's target
        # and whole): each as surface_depth gives it
        other = rng.random(shape) < 0.3
        both = surface_depths(grid, lo, shape, m, (within, other))
        np.testing.assert_array_equal(both[0], a)
        np.testing.assert_array_equal(both[1], surface_depth(grid, lo, shape, m, other))
        assert a.dtype == np.float32 and np.isfinite(a).any() and np.isinf(a).any()
    empty = surface_depth(np.empty((0, 0, 3)), np.zeros(2), (4, 5), 0.001, np.ones((4, 5), bool))
    assert np.isinf(empty).all()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), tip=st.floats(0.0, 0.03),
       lo_x=st.floats(-0.03, 0.09), lo_y=st.floats(-0.03, 0.07),
       shape=st.tuples(st.integers(1, 50), st.integers(1, 50)))
def test_obstacles_cropped_to_the_silhouettes_reach_draw_as_the_whole_grid(seed, tip, lo_x,
                                                                         lo_y, shape):
    # the silhouette draws its neighbours from the part of their grid within reach of its
    # image (vision._silhouette._within_reach): the same pixels and depths as the whole grid,
    # with windows inside, across the edge of and beyond the grid's extent
    from vision._heights import surface_depth
    from vision._silhouette import _draw, _within_reach

    rng = np.random.default_rng(seed)
    h, w = 30, 36
    gy, gx = np.mgrid[0:h, 0:w] * 0.0023
    grid = np.stack([gx + rng.normal(0, 4e-4, (h, w)), gy + rng.normal(0, 4e-4, (h, w)),
                     rng.normal(0.01, 0.01, (h, w))], -1)
    grid[rng.random((h, w)) < 0.15] = np.nan   # off the masks, or no reading
    grid[12:14, :, :2] += 0.02                  # a step: two rows moved 2 cm away
    lo, m, step = np.array([lo_x, lo_y]), 0.001, 0.007
    near = _within_reach(grid, lo, shape, m, step)
    drawn = _draw(grid, tip, lo, shape, m, step)
    np.testing.assert_array_equal(_draw(near, tip, lo, shape, m, step), drawn)
    np.testing.assert_array_equal(surface_depth(near, lo, shape, m, drawn),
                                  surface_depth(grid, lo, shape, m, drawn))
    assert near.shape[0] <= h and near.shape[1] <= w
