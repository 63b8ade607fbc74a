"""Robot poses for hand-eye calibration, read from a CSV file (one row per board image).

The robot controller over step 6's TCP endpoint (a ``robot_pose`` message) is the other
source the issue names; it is not written yet (the endpoint does not exist on this branch).
"""
from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._errors import CalibrationError
from geometry import pose, quat_to_matrix, rotvec_to_matrix

TRANSLATION = ("x_m", "y_m", "z_m")
ROTVEC = ("rx_rad", "ry_rad", "rz_rad")
QUATERNION = ("qx", "qy", "qz", "qw")


@dataclass(frozen=True)
class RobotPose:
    """A robot pose as recorded: the image it goes with and T_base_tcp (4 x 4, metres)."""

    image: str
    T_base_tcp: np.ndarray


def read_robot_poses(path: str | os.PathLike) -> list[RobotPose]:
    """Robot poses from a CSV file with a header row.

    Columns: ``image`` (the board image's file name), ``x_m, y_m, z_m`` (TCP position in the
    base frame, metres) and the orientation either as a rotation vector ``rx_rad, ry_rad,
    rz_rad`` (as UR controllers report it) or a quaternion ``qx, qy, qz, qw``. Raises
    CalibrationError naming the file, line and column of anything wrong.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CalibrationError(f"robot poses {path}: cannot read ({exc.strerror})") from exc
    rows = list(csv.reader(line for line in text.splitlines() if line.strip()
                           and not line.lstrip().startswith("#")))
    if not rows:
        raise CalibrationError(f"robot poses {path}: the file is empty (expected a header row "
                               f"image,{','.join(TRANSLATION)},{','.join(ROTVEC)})")
    header = [h.strip() for h in rows[0]]
    # The quaternion form when the header has any of its columns, else the rotation vector.
    rot = QUATERNION if set(QUATERNION) & set(header) and not set(ROTVEC) <= set(header) \
        else ROTVEC
    missing = [c for c in ("image", *TRANSLATION, *rot) if c not in header]
    if missing:
        raise CalibrationError(
            f"robot poses {path}: header lacks column(s) {', '.join(missing)}; expected image, "
            f"{', '.join(TRANSLATION)} and either {', '.join(ROTVEC)} or {', '.join(QUATERNION)}")
    col = {name: header.index(name) for name in ("image", *TRANSLATION, *rot)}
    poses = []
    for line, row in enumerate(rows[1:], start=2):
        values = {}
        for name in (*TRANSLATION, *rot):
            cell = row[col[name]].strip() if col[name] < len(row) else ""
            try:
                values[name] = float(cell)
            except ValueError:
                raise CalibrationError(f"robot poses {path}, line {line}: column {name} must "
                                       f"be a number, got {cell!r}") from None
            if not math.isfinite(values[name]):
                raise CalibrationError(f"robot poses {path}, line {line}: column {name} is "
                                       f"{cell}")
        image = row[col["image"]].strip() if col["image"] < len(row) else ""
        if not image:
            raise CalibrationError(f"robot poses {path}, line {line}: column image is empty")
        if rot is QUATERNION:
            q = np.array([values[c] for c in QUATERNION])
            if abs(np.linalg.norm(q) - 1.0) > 1e-3:
                raise CalibrationError(f"robot poses {path}, line {line}: quaternion "
                                       f"{q.tolist()} is not unit length "
                                       f"({np.linalg.norm(q):.4f})")
            R = quat_to_matrix(q, scalar_first=False)
        else:
            R = rotvec_to_matrix(np.array([values[c] for c in ROTVEC]))
        poses.append(RobotPose(image, pose(R, [values[c] for c in TRANSLATION])))
    if not poses:
        raise CalibrationError(f"robot poses {path}: a header but no poses")
    return poses


def parse_robot_pose(text: str) -> np.ndarray:
    """T_base_tcp (4 x 4, metres) from a pose typed as a pendant shows it: ``x y z rx ry rz``,
    the TCP position in the base frame (metres) and its rotation vector (radians), separated
    by spaces or commas. Raises CalibrationError saying what did not parse."""
    fields = text.replace(",", " ").split()
    try:
        v = [float(x) for x in fields]
    except ValueError:
        raise CalibrationError(f"robot pose {text!r}: not six numbers") from None
    if len(v) != 6:
        raise CalibrationError(f"robot pose {text!r}: {len(v)} numbers, need six: "
                               f"x y z (m) rx ry rz (rad)")
    if not all(map(math.isfinite, v)):
        raise CalibrationError(f"robot pose {text!r}: the numbers must be finite")
    return pose(rotvec_to_matrix(np.array(v[3:])), v[:3])
