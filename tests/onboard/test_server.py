"""The robot-controller endpoint over real TCP sockets, against a small cell with real state.

``TableCell`` implements ``PickingService`` with objects on a table, an arm pose, a gripper
opening and a trial list: it is the endpoint's protocol under test here, not the picking loop.
"""
from __future__ import annotations

import inspect
import json
import math
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import onboard
from drivers.arm import MoveResult, MoveStatus
from drivers.gripper import GripperFault
from onboard import (ENDPOINT_COMMANDS, MAX_LINE_BYTES, CellStatus, EndpointServer, GraspChoice,
                     GripReply, NoGrasp, PickingCell, PickingService, TrialSummary, grasp_text)
from onboard.cli import DEFAULT_PORT

TIMEOUT_S = 10.0
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPEN_WIDTH_M = 0.085
REACH_M = 0.9
# top-down: the TCP's z (approach) points down, x (closing) along the base x axis
R_TOP_DOWN = np.diag([1.0, -1.0, -1.0])


def pose(xyz, R=R_TOP_DOWN) -> np.ndarray:
    """A (4, 4) pose from a position (m) and a rotation."""
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = xyz
    return T


class TableCell:
    """Objects on a table, an arm, a parallel gripper and a trial list: a real if tiny cell."""

    def __init__(self):
        # label -> (grasp position in the base frame (m), width across the fingers (m))
        self.objects = {"mug": ((0.40, 0.10, 0.05), 0.060), "box": ((0.35, -0.20, 0.04), 0.045)}
        self.home = pose((0.30, 0.0, 0.40))
        self.T_base_tcp = self.home.copy()
        self.width_m = OPEN_WIDTH_M
        self.holding: str | None = None
        self.trials: list[dict] = []
        self.poses: list[tuple[np.ndarray, str | None]] = []
        # label -> a multi-finger hand's preshape (rad): those objects' grasps come from the
        # grasp database, the others' from the image search (a jaw, no preshape)
        self.preshapes: dict[str, list[float]] = {}
        self.gate: threading.Event | None = None   # when set, pick waits for it
        self.closed = 0
        self.faults_cleared = 0
        self._inside = 0
        self.max_inside = 0
        self._lock = threading.Lock()

    def _enter(self):
        with self._lock:
            self._inside += 1
            self.max_inside = max(self.max_inside, self._inside)

    def _leave(self):
        with self._lock:
            self._inside -= 1

    def status(self) -> CellStatus:
        grip = f"holding {self.holding}" if self.holding else f"open {self.width_m:.3f} m"
        x, y, z = self.T_base_tcp[:3, 3]
        return CellStatus(state="idle", camera="streaming", gripper=grip,
                          arm=f"at {x:.3f} {y:.3f} {z:.3f}", trials=len(self.trials))

    def best_grasp(self, object_label, timeout_s):
        labels = [object_label] if object_label else list(self.objects)
        labels = [lb for lb in labels if lb in self.objects]
        if not labels:
            what = object_label or "object"
            return NoGrasp(reason=f"no {what} in view", stage_s={"capture": 0.01, "segment": 0.02})
        label = labels[0]
        xyz, width = self.objects[label]
        trial_id = len(self.trials)
        self.trials.append({"label": label, "outcome": "pending", "success": None, "note": "",
                            "T": pose(xyz), "width": width + 0.02, "score": 0.9})
        preshape = self.preshapes.get(label)
        return GraspChoice(trial_id=trial_id, object_label=label, T_base_tcp=pose(xyz),
                           pregrasp_m=0.1, width_m=width + 0.02, force_n=40.0, score=0.9,
                           features={"d_t": 0.1, "r_r_rad": 0.0},
                           source="image_search" if preshape is None else "database",
                           x_px=320.0, y_px=240.0, theta_rad=0.0, n_candidates=1200,
                           stage_s={"capture": 0.01, "search": 0.004},
                           preshape=None if preshape is None else np.array(preshape))

    def move(self, T_base_tcp, speed_mps):
        self._enter()
        try:
            distance = float(np.linalg.norm(T_base_tcp[:3, 3]))
            if distance > REACH_M:
                return MoveResult(MoveStatus.FAILED, self.T_base_tcp.copy(), 0.0,
                                  f"out of reach: {distance:.2f} m from the base, "
                                  f"reach {REACH_M} m")
            step = float(np.linalg.norm(T_base_tcp[:3, 3] - self.T_base_tcp[:3, 3]))
            time.sleep(0.002)   # a motion takes time: two calls at once would overlap here
            self.T_base_tcp = T_base_tcp.copy()
            return MoveResult(MoveStatus.REACHED, self.T_base_tcp.copy(),
                              step / (speed_mps or 0.25))
        finally:
            self._leave()

    def grip(self, width_m, force_n, speed_mps):
        if force_n is not None and force_n > 235.0:
            raise GripperFault(0x0A, f"force {force_n} N over the gripper's 235 N", port="sim")
        target = 0.0 if width_m is None else width_m
        for label, (xyz, width) in self.objects.items():
            if np.linalg.norm(self.T_base_tcp[:3, 3] - xyz) < 0.005 and width >= target:
                self.holding, self.width_m = label, width
                break
        else:
            self.width_m = target
        return GripReply(object_detected=self.holding is not None, width_m=self.width_m,
                         elapsed_s=(OPEN_WIDTH_M - self.width_m) / (speed_mps or 0.1),
                         status=f"holding {self.holding}" if self.holding else "closed empty")

    def release(self, width_m, speed_mps):
        self.holding = None
        self.width_m = OPEN_WIDTH_M if width_m is None else width_m
        return GripReply(object_detected=False, width_m=self.width_m, elapsed_s=0.2, status="open")

    def pick(self, object_label):
        self._enter()
        try:
            if self.gate is not None:
                self.gate.wait(TIMEOUT_S)
            g = self.best_grasp(object_label, None)
            if isinstance(g, NoGrasp):
                return TrialSummary(trial_id=-1, object_label=object_label or "",
                                    outcome="no_grasp", success=None, score=None,
                                    T_base_tcp=None, width_m=None, error=g.reason)
            self.T_base_tcp = g.T_base_tcp.copy()
            got = self.grip(None, g.force_n, None)
            trial = self.trials[g.trial_id]
            trial["outcome"] = "pending" if got.object_detected else "failure"
            return self._summary(g.trial_id)
        finally:
            self._leave()

    def report_outcome(self, trial_id, success, note, approach_stopped_at=None):
        if not 0 <= trial_id < len(self.trials):
            raise KeyError(f"no trial {trial_id}: {len(self.trials)} trials logged")
        t = self.trials[trial_id]
        t.update(outcome="success" if success else "failure", success=success, note=note or "")
        t["stopped_at"] = approach_stopped_at
        return self._summary(trial_id)

    def clear_fault(self):
        self.faults_cleared += 1

    def record_robot_pose(self, T_base_tcp, label):
        self.poses.append((T_base_tcp.copy(), label))
        return len(self.poses) - 1

    def close(self):
        self.closed += 1

    def _summary(self, trial_id):
        t = self.trials[trial_id]
        return TrialSummary(trial_id=trial_id, object_label=t["label"], outcome=t["outcome"],
                            success=t["success"], score=t["score"], T_base_tcp=t["T"],
                            width_m=t["width"], stage_s={"grip": 0.3}, note=t["note"])


class Client:
    """A controller's side of the connection: JSON lines out, reply lines in."""

    def __init__(self, address):
        self.sock = socket.create_connection(address, timeout=TIMEOUT_S)
        self.file = self.sock.makefile("rb")

    def send(self, line: bytes | dict) -> None:
        if isinstance(line, dict):
            line = json.dumps(line).encode()
        self.sock.sendall(line + b"\n")

    def reply_line(self) -> bytes:
        line = self.file.readline()
        assert line.endswith(b"\n"), f"connection closed, got {line!r}"
        return line

    def reply(self) -> dict:
        return json.loads(self.reply_line())

    def ask(self, line: bytes | dict) -> dict:
        self.send(line)
        return self.reply()

    def close(self):
        self.file.close()
        self.sock.close()


@pytest.fixture
def cell():
    return TableCell()


@pytest.fixture
def server(cell):
    with EndpointServer(cell) as srv:
        yield srv


@pytest.fixture
def client(server):
    c = Client(server.address)
    yield c
    c.close()


def assert_serving(server, client) -> None:
    """The same client and a new one both get a status reply."""
    assert client.ask({"cmd": "status", "id": "after"})["id"] == "after"
    other = Client(server.address)
    try:
        r = other.ask({"cmd": "status", "id": 1})
        assert (r["ok"], r["id"]) == (True, 1)
    finally:
        other.close()


def protocol_methods(protocol: type) -> dict[str, inspect.Signature]:
    """The signatures of a Protocol's own public methods, by name."""
    return {name: inspect.signature(f) for name, f in vars(protocol).items()
            if inspect.isfunction(f) and not name.startswith("_")}


def signature_drift(declared: inspect.Signature, implemented: inspect.Signature) -> list[str]:
    """How an implementation's parameters fail the declared ones: each declared parameter in
    its place with the same name and kind, and its default where one is declared; any further
    parameter of the implementation must have a default (calls made to the declaration still
    bind). The implementation may give defaults the declaration does not."""
    empty = inspect.Parameter.empty
    given = list(implemented.parameters.values())
    drift = []
    for k, p in enumerate(declared.parameters.values()):
        if k >= len(given):
            drift.append(f"parameter {p.name!r} is missing")
            continue
        q = given[k]
        if (q.name, q.kind) != (p.name, p.kind):
            drift.append(f"parameter {k} is {q.name!r} ({q.kind.description}), declared "
                         f"{p.name!r} ({p.kind.description})")
        elif p.default is not empty and q.default != p.default:
            drift.append(f"{p.name!r} defaults to {q.default!r}, declared {p.default!r}")
    for q in given[len(declared.parameters):]:
        if q.default is empty and q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD):
            drift.append(f"extra parameter {q.name!r} has no default")
    return drift


# every class the endpoint serves: the product's cell and this file's table cell
SERVICES = [PickingCell, TableCell]
SERVICE_METHODS = sorted(protocol_methods(PickingService))


def test_the_picking_service_protocol_declares_the_endpoints_methods():
    # runtime_checkable's isinstance looks at method names only, never at signatures: the
    # test below compares the signatures themselves
    assert SERVICE_METHODS == sorted(["status", "best_grasp", "move", "grip", "release", "pick",
                                      "report_outcome", "record_robot_pose", "clear_fault",
                                      "close"])


@pytest.mark.parametrize("method", SERVICE_METHODS)
@pytest.mark.parametrize("service", SERVICES, ids=lambda c: c.__name__)
def test_each_service_method_has_the_protocols_signature(service, method):
    declared = protocol_methods(PickingService)[method]
    assert callable(getattr(service, method, None)), f"{service.__name__} has no {method}"
    implemented = inspect.signature(getattr(service, method))
    drift = signature_drift(declared, implemented)
    assert not drift, f"{service.__name__}.{method}: " + "; ".join(drift)


def test_signature_drift_names_each_kind_of_change():
    def declared(self, width_m: float | None, speed_mps: float | None = 0.1): ...
    def renamed(self, width: float | None, speed_mps: float | None = 0.1): ...
    def keyword_only(self, width_m, *, speed_mps=0.1): ...
    def other_default(self, width_m, speed_mps=0.2): ...
    def fewer(self, width_m): ...
    def more(self, width_m, speed_mps=0.1, force_n=None, extra=None, *args, **kw): ...
    def more_required(self, width_m, speed_mps=0.1, *, key): ...
    def defaults_added(self, width_m=None, speed_mps=0.1): ...

    d = inspect.signature(declared)
    drift = {f.__name__: signature_drift(d, inspect.signature(f))
             for f in (renamed, keyword_only, other_default, fewer, more, more_required,
                       defaults_added)}
    assert drift["renamed"] == ["parameter 1 is 'width' (positional or keyword), declared "
                                "'width_m' (positional or keyword)"]
    assert drift["keyword_only"] == ["parameter 2 is 'speed_mps' (keyword-only), declared "
                                     "'speed_mps' (positional or keyword)"]
    assert drift["other_default"] == ["'speed_mps' defaults to 0.2, declared 0.1"]
    assert drift["fewer"] == ["parameter 'speed_mps' is missing"]
    assert drift["more"] == drift["defaults_added"] == []
    assert drift["more_required"] == ["extra parameter 'key' has no default"]


def test_status_reports_the_cell_and_echoes_the_id(client):
    r = client.ask({"cmd": "status", "id": 17})
    assert r == {"ok": True, "id": 17, "state": "idle", "camera": "streaming",
                 "gripper": "open 0.085 m", "arm": "at 0.300 0.000 0.400", "trials": 0,
                 "busy": None, "age_s": r["age_s"]}
    assert 0 <= r["age_s"] < 1.0


def test_reply_line_starts_with_ok_and_id(client):
    client.send({"cmd": "status", "id": 17})
    assert client.reply_line().startswith(b'{"ok":true,"id":17,"state":"idle",')


def test_reply_has_no_id_when_the_request_had_none(client):
    r = client.ask({"cmd": "status"})
    assert r["ok"] is True and "id" not in r


def test_best_grasp_returns_pose_width_force_score_features_and_timings(client, cell):
    r = client.ask({"cmd": "best_grasp", "id": "g1", "object": "box", "timeout_s": 2.5})
    assert r["ok"] is True and r["id"] == "g1"
    assert r["trial_id"] == 0 and r["object"] == "box"
    np.testing.assert_allclose(r["T_base_tcp"], pose((0.35, -0.20, 0.04)))
    assert (r["width_m"], r["force_n"], r["score"]) == (0.065, 40.0, 0.9)
    assert r["source"] == "image_search"
    assert r["features"] == {"d_t": 0.1, "r_r_rad": 0.0}
    assert r["stage_s"] == {"capture": 0.01, "search": 0.004}
    assert (r["pregrasp_m"], r["n_candidates"]) == (0.1, 1200)
    assert cell.trials[0]["label"] == "box"


def test_best_grasp_carries_the_hands_preshape_for_a_database_grasp_and_null_for_a_jaw(
        client, cell):
    cell.preshapes["mug"] = [0.0, 0.35, -0.35, 0.01]
    r = client.ask({"cmd": "best_grasp", "id": 3, "object": "mug"})
    assert r["ok"] is True and r["source"] == "database"
    assert r["preshape"] == [0.0, 0.35, -0.35, 0.01]
    np.testing.assert_allclose(r["T_base_tcp"], pose((0.40, 0.10, 0.05)))
    jaw = client.ask({"cmd": "best_grasp", "id": 4, "object": "box"})
    assert jaw["ok"] is True and "preshape" in jaw and jaw["preshape"] is None


def test_best_grasp_with_nothing_in_view_is_ok_false_with_the_reason(client):
    r = client.ask({"cmd": "best_grasp", "id": 2, "object": "banana"})
    assert r == {"ok": False, "id": 2, "error": "no banana in view", "error_type": "no_grasp",
                 "stage_s": {"capture": 0.01, "segment": 0.02}}


def test_move_reaches_the_goal_and_the_cell_holds_the_pose(client, cell):
    goal = pose((0.5, 0.1, 0.3))
    r = client.ask({"cmd": "move", "id": 3, "T_base_tcp": goal.tolist(), "speed_mps": 0.5})
    assert r["ok"] is True and r["id"] == 3 and r["status"] == "reached"
    np.testing.assert_array_equal(r["T_base_tcp"], goal)
    np.testing.assert_array_equal(cell.T_base_tcp, goal)
    assert r["duration_s"] == pytest.approx(np.linalg.norm([0.2, 0.1, -0.1]) / 0.5)


def test_move_out_of_reach_is_ok_false_with_status_failed_and_the_arm_unmoved(client, cell):
    r = client.ask({"cmd": "move", "id": 4, "T_base_tcp": pose((1.2, 0, 0.3)).tolist()})
    assert r["ok"] is False and r["status"] == "failed" and r["error_type"] == "move_failed"
    assert r["error"] == "out of reach: 1.24 m from the base, reach 0.9 m"
    np.testing.assert_array_equal(r["T_base_tcp"], cell.home)


def test_grip_on_an_object_detects_it_and_release_opens(client, cell):
    client.ask({"cmd": "move", "T_base_tcp": pose((0.40, 0.10, 0.05)).tolist()})
    r = client.ask({"cmd": "grip", "id": 5, "force_n": 40, "speed_mps": 0.05})
    assert r == {"ok": True, "id": 5, "object_detected": True, "width_m": 0.06,
                 "elapsed_s": pytest.approx((0.085 - 0.06) / 0.05), "status": "holding mug",
                 "fault": ""}
    assert cell.holding == "mug"
    r = client.ask({"cmd": "release", "id": 6, "width_m": 0.07})
    assert (r["ok"], r["id"], r["object_detected"], r["width_m"]) == (True, 6, False, 0.07)
    assert cell.holding is None and cell.width_m == 0.07


def test_grip_on_nothing_closes_to_the_asked_width(client):
    r = client.ask({"cmd": "grip", "width_m": 0.01})
    assert (r["ok"], r["object_detected"], r["width_m"], r["status"]) == (True, False, 0.01,
                                                                          "closed empty")


def test_pick_runs_the_cycle_and_report_outcome_closes_the_trial(client, cell):
    r = client.ask({"cmd": "pick", "id": 7, "object": "mug"})
    assert (r["ok"], r["id"], r["trial_id"], r["object"], r["outcome"]) == (True, 7, 0, "mug",
                                                                            "pending")
    assert r["success"] is None and r["score"] == 0.9 and r["width_m"] == 0.08
    np.testing.assert_allclose(r["T_base_tcp"], pose((0.40, 0.10, 0.05)))
    assert r["stage_s"] == {"grip": 0.3} and r["note"] == ""
    r = client.ask({"cmd": "report_outcome", "id": 8, "trial_id": 0, "success": True,
                    "note": "lifted 10 cm"})
    assert (r["ok"], r["id"], r["outcome"], r["success"], r["note"]) == (True, 8, "success", True,
                                                                         "lifted 10 cm")
    assert cell.trials[0]["success"] is True
    assert client.ask({"cmd": "status"})["trials"] == 1


def test_report_outcome_carries_where_the_approach_stopped_to_the_cell(client, cell):
    client.ask({"cmd": "pick", "object": "mug"})
    T = pose((0.40, 0.10, 0.09))
    r = client.ask({"cmd": "report_outcome", "id": 8, "trial_id": 0, "success": False,
                    "approach_stopped_at": T.tolist()})
    assert (r["ok"], r["outcome"]) == (True, "failure")
    np.testing.assert_allclose(cell.trials[0]["stopped_at"], T)
    client.ask({"cmd": "pick", "object": "box"})
    client.ask({"cmd": "report_outcome", "trial_id": 1, "success": True})
    assert cell.trials[1]["stopped_at"] is None


def test_a_stop_pose_that_is_not_rigid_is_refused_naming_the_field(client, cell):
    client.ask({"cmd": "pick", "object": "mug"})
    T = pose((0.40, 0.10, 0.09))
    T[0, 0] = 2.0
    r = client.ask({"cmd": "report_outcome", "trial_id": 0, "success": False,
                    "approach_stopped_at": T.tolist()})
    assert (r["ok"], r["error_type"]) == (False, "bad_request")
    assert "approach_stopped_at" in r["error"]
    assert cell.trials[0]["outcome"] == "pending"


def test_clear_fault_reaches_the_cell_and_replies_with_its_status(client, cell):
    r = client.ask({"cmd": "clear_fault", "id": 3})
    assert (r["ok"], r["id"], cell.faults_cleared) == (True, 3, 1)
    assert r["state"] == client.ask({"cmd": "status"})["state"]


def test_pick_with_nothing_to_pick_is_ok_false_with_the_trial_error(client):
    r = client.ask({"cmd": "pick", "id": 9, "object": "banana"})
    assert (r["ok"], r["error"], r["error_type"], r["outcome"]) == (False, "no banana in view",
                                                                    "trial_error", "no_grasp")
    assert r["T_base_tcp"] is None and r["score"] is None


def test_robot_pose_is_recorded_with_its_label_and_index(client, cell):
    T = pose((0.1, 0.2, 0.3), R=np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]))
    assert client.ask({"cmd": "robot_pose", "id": 10, "T_base_tcp": T.tolist(),
                       "label": "board 1"}) == {"ok": True, "id": 10, "pose_index": 0}
    assert client.ask({"cmd": "robot_pose", "T_base_tcp": T.tolist()})["pose_index"] == 1
    np.testing.assert_array_equal(cell.poses[0][0], T)
    assert [label for _, label in cell.poses] == ["board 1", None]


I4 = np.eye(4).tolist()
BAD_REQUESTS = [
    (b"hello", "not JSON: JSON is malformed: invalid character (byte 0)", "not_json", None),
    (b'{"cmd": "status"', "not JSON: Input data was truncated", "not_json", None),
    (b"", "empty line: send one JSON object per line", "not_json", None),
    (b"[1, 2]", "a request must be a JSON object, got an array", "bad_request", None),
    (b'{"id": 4}', "missing field `cmd` (one of: status, best_grasp, move, grip, release, pick, "
                   "report_outcome, robot_pose, clear_fault)", "bad_request", 4),
    (b'{"cmd": 3, "id": 5}', "`cmd` must be a string, got a number", "bad_request", 5),
    (b'{"cmd": "dance", "id": "d"}', "unknown cmd 'dance' (one of: status, best_grasp, move, "
                                     "grip, release, pick, report_outcome, robot_pose, "
                                     "clear_fault)",
     "unknown_cmd", "d"),
    (b'{"cmd": "move", "id": 6}', "move: Object missing required field `T_base_tcp`",
     "bad_request", 6),
    (b'{"cmd": "grip", "width_m": "wide"}',
     "grip: Expected `float | null`, got `str` - at `$.width_m`", "bad_request", None),
    (b'{"cmd": "grip", "width_m": -0.01}', "grip: Expected `float` >= 0.0 - at `$.width_m`",
     "bad_request", None),
    (b'{"cmd": "grip", "force_n": 0}', "grip: Expected `float` > 0.0 - at `$.force_n`",
     "bad_request", None),
    (json.dumps({"cmd": "move", "T_base_tcp": I4, "speed_mps": 0}).encode(),
     "move: Expected `float` > 0.0 - at `$.speed_mps`", "bad_request", None),
    (json.dumps({"cmd": "move", "T_base_tcp": I4, "speed": 0.1}).encode(),
     "move: Object contains unknown field `speed`", "bad_request", None),
    (json.dumps({"cmd": "move", "T_base_tcp": I4[:3]}).encode(),
     "move: Expected `array` of length >= 4 - at `$.T_base_tcp`", "bad_request", None),
    (json.dumps({"cmd": "move", "T_base_tcp": [[1, 0, 0], *I4[1:]]}).encode(),
     "move: Expected `array` of length >= 4 - at `$.T_base_tcp[0]`", "bad_request", None),
    (json.dumps({"cmd": "move", "T_base_tcp": [["a", 0, 0, 0], *I4[1:]]}).encode(),
     "move: Expected `float`, got `str` - at `$.T_base_tcp[0][0]`", "bad_request", None),
    (json.dumps({"cmd": "move", "T_base_tcp": (2 * np.eye(4)).tolist()}).encode(),
     "move: T_base_tcp must be a rigid transform (orthonormal rotation, det +1, last row 0 0 0 "
     "1), got last row 0 0 0 2",
     "bad_request", None),
    (json.dumps({"cmd": "move", "T_base_tcp": np.diag([1.1, 1, 1, 1]).tolist()}).encode(),
     "move: T_base_tcp must be a rigid transform (orthonormal rotation, det +1, last row 0 0 0 "
     "1), got rotation error 2.10e-01 (max |R^T R - I|, tolerance 0.0001)", "bad_request", None),
    (json.dumps({"cmd": "robot_pose", "T_base_tcp": np.diag([1, 1, -1, 1]).tolist()}).encode(),
     "robot_pose: T_base_tcp must be a rigid transform (orthonormal rotation, det +1, last row "
     "0 0 0 1), got a reflection (determinant -1)", "bad_request", None),
    (b'{"cmd": "report_outcome", "trial_id": "7", "success": true}',
     "report_outcome: Expected `int`, got `str` - at `$.trial_id`", "bad_request", None),
    (b'{"cmd": "report_outcome", "trial_id": 7}',
     "report_outcome: Object missing required field `success`", "bad_request", None),
    (b"\xff\xfe\x00junk", "line is not UTF-8 text: byte 0xff at position 0 (invalid start byte)",
     "not_utf8", None),
    (b'{"cmd": "pick", "object": "caf\xc3"}',
     "line is not UTF-8 text: byte 0xc3 at position 30 (invalid continuation byte)", "not_utf8",
     None),
]


@pytest.mark.parametrize("line, error, error_type, rid", BAD_REQUESTS,
                         ids=[repr(e[0][:40]) for e in BAD_REQUESTS])
def test_bad_request_gets_a_named_error_and_the_server_goes_on(server, client, cell, line, error,
                                                                error_type, rid):
    r = client.ask(line)
    expected = {"ok": False, "error": error, "error_type": error_type}
    if rid is not None:
        expected["id"] = rid
    assert r == expected
    assert not cell.trials and not cell.poses
    np.testing.assert_array_equal(cell.T_base_tcp, cell.home)   # nothing acted on
    assert_serving(server, client)


def test_line_of_exactly_the_limit_is_served(client):
    head = b'{"cmd": "status", "id": 1}'
    assert client.ask(head + b" " * (MAX_LINE_BYTES - len(head)))["ok"] is True


def test_line_over_the_limit_is_refused_once_and_its_tail_discarded(server, client):
    head = b'{"cmd": "status", "id": 1}'
    client.send(head + b" " * (MAX_LINE_BYTES + 1 - len(head)))
    client.send(b"x" * (5 * MAX_LINE_BYTES) + b'{"cmd": "status", "id": "tail"}')
    r = client.reply()
    assert r == {"ok": False, "error": f"line over {MAX_LINE_BYTES} bytes: the rest of it, up "
                 f"to the next newline, is discarded", "error_type": "line_too_long"}
    r = client.reply()
    assert r["error_type"] == "line_too_long"      # the second long line, once
    # the tails produced no replies: the next reply is to the next request
    assert_serving(server, client)


def test_client_half_closing_mid_line_is_told_and_others_are_served(server):
    c = Client(server.address)
    c.sock.sendall(b'{"cmd": "status", "id": 1}\n{"cmd": "sta')
    c.sock.shutdown(socket.SHUT_WR)
    assert c.reply()["ok"] is True
    assert c.reply() == {"ok": False, "error": "connection closed mid-line: 12 bytes without a "
                         "newline were not processed", "error_type": "incomplete_line"}
    assert c.file.readline() == b""     # then the server closes
    c.close()
    other = Client(server.address)
    assert other.ask({"cmd": "status"})["ok"] is True
    other.close()


def test_client_vanishing_mid_line_leaves_the_server_serving(server, client):
    for _ in range(3):
        gone = socket.create_connection(server.address, timeout=TIMEOUT_S)
        gone.sendall(b'{"cmd": "move", "T_base_tcp": [[1, 0')
        # RST instead of FIN: the abrupt end a crashed controller gives
        gone.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        gone.close()
    assert_serving(server, client)


def test_service_exception_is_ok_false_with_message_and_type(server, client, cell):
    r = client.ask({"cmd": "grip", "id": 11, "force_n": 300})
    assert r == {"ok": False, "id": 11, "error_type": "GripperFault",
                 "error": "device fault 0x0A: force 300.0 N over the gripper's 235 N (port sim)"}
    r = client.ask({"cmd": "report_outcome", "id": 12, "trial_id": 99, "success": False})
    assert r == {"ok": False, "id": 12, "error": "no trial 99: 0 trials logged",
                 "error_type": "KeyError"}
    assert_serving(server, client)


def test_service_returning_the_wrong_type_is_an_internal_error_not_a_crash(server, client, cell):
    cell.record_robot_pose = lambda T, label: "not an index"
    r = client.ask({"cmd": "robot_pose", "id": 13, "T_base_tcp": I4})
    assert (r["ok"], r["id"], r["error_type"]) == (False, 13, "internal_error")
    assert r["error"] == ("internal error: the cell's answer to robot_pose could not be sent as a "
                          "reply (ValueError: invalid literal for int() with base 10: "
                          "'not an index')")
    assert_serving(server, client)


def test_several_clients_interleaved_each_get_their_own_replies_in_order(server, cell):
    n_clients, n_requests = 6, 25
    errors: list[str] = []
    start = threading.Barrier(n_clients)

    def controller(k: int) -> None:
        c = Client(server.address)
        try:
            start.wait()
            for i in range(n_requests):
                rid = f"{k}-{i}"
                if i % 3 == 0:
                    req = {"cmd": "robot_pose", "id": rid, "T_base_tcp": pose((k, i, 0)).tolist(),
                           "label": rid}
                elif i % 3 == 1:
                    req = {"cmd": "move", "id": rid, "T_base_tcp": pose((0.1 * k / n_clients,
                                                                         0.01 * i, 0.2)).tolist()}
                else:
                    req = {"cmd": "status", "id": rid}
                r = c.ask(req)
                if r.get("id") != rid or r.get("ok") is not True:
                    errors.append(f"{rid}: {r}")
        except Exception as exc:   # reported below: a thread's assert would be lost
            errors.append(f"client {k}: {exc!r}")
        finally:
            c.close()

    threads = [threading.Thread(target=controller, args=(k,)) for k in range(n_clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    # every robot_pose landed once, with its own pose
    n_poses = n_clients * len(range(0, n_requests, 3))
    assert sorted(label for _, label in cell.poses) == sorted(
        f"{k}-{i}" for k in range(n_clients) for i in range(0, n_requests, 3))
    assert len(cell.poses) == n_poses
    for T, label in cell.poses:
        k, i = map(int, label.split("-"))
        np.testing.assert_array_equal(T[:3, 3], (k, i, 0))
    assert cell.max_inside == 1          # never two calls in the service at once


def test_status_is_answered_from_the_last_state_while_a_pick_runs(server, cell):
    cell.gate = threading.Event()
    picker, watcher = Client(server.address), Client(server.address)
    try:
        picker.send({"cmd": "pick", "id": "p"})
        deadline = time.monotonic() + TIMEOUT_S
        while True:  # until the pick is inside the cell
            r = watcher.ask({"cmd": "status", "id": "w"})
            if r["busy"] == "pick" or time.monotonic() > deadline:
                break
        assert (r["ok"], r["id"], r["busy"], r["trials"]) == (True, "w", "pick", 0)
        before = f"open {OPEN_WIDTH_M:.3f} m"
        assert r["gripper"] == before     # the status read before the pick
        # the cached status is not read again while the pick runs: it ages, and age_s says so
        time.sleep(0.3)
        later = watcher.ask({"cmd": "status", "id": "w2"})
        assert (later["busy"], later["gripper"]) == ("pick", before)
        assert later["age_s"] >= r["age_s"] + 0.3
        cell.gate.set()
        r = picker.reply()
        assert (r["ok"], r["id"], r["outcome"]) == (True, "p", "pending")
        r = watcher.ask({"cmd": "status"})
        assert (r["busy"], r["trials"], r["gripper"]) == (None, 1, "holding mug")
        # idle: read from the cell for this request, so fresh (the margin is for a loaded CI)
        assert 0 <= r["age_s"] < 0.25
    finally:
        cell.gate.set()
        picker.close()
        watcher.close()


def test_status_while_busy_with_no_status_ever_read_is_a_busy_error(cell):
    from drivers.camera import CameraTimeout

    reads = []
    table_status = cell.status

    def status():
        reads.append(1)
        if len(reads) == 1:     # the endpoint's first read, at start-up
            raise CameraTimeout("no frame from camera 123622270 within 1.0 s")
        return table_status()

    cell.status, cell.gate = status, threading.Event()
    with EndpointServer(cell) as srv:
        picker, watcher = Client(srv.address), Client(srv.address)
        try:
            picker.send({"cmd": "pick", "id": "p"})
            deadline = time.monotonic() + TIMEOUT_S
            while cell._inside == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert watcher.ask({"cmd": "status", "id": "w"}) == {
                "ok": False, "id": "w", "error_type": "busy",
                "error": "no status read yet, and the cell is busy with pick"}
            cell.gate.set()
            assert picker.reply()["outcome"] == "pending"
            r = watcher.ask({"cmd": "status"})
            assert (r["ok"], r["busy"], r["trials"]) == (True, None, 1)
        finally:
            cell.gate.set()
            picker.close()
            watcher.close()


def test_commands_from_another_client_wait_for_a_running_pick(server, cell):
    cell.gate = threading.Event()
    picker, mover = Client(server.address), Client(server.address)
    try:
        picker.send({"cmd": "pick", "id": "p"})
        while watch_busy(server) != "pick":
            time.sleep(0.01)
        mover.send({"cmd": "move", "id": "m", "T_base_tcp": pose((0.2, 0.2, 0.2)).tolist()})
        readable, _, _ = select.select([mover.sock], [], [], 0.3)
        assert readable == []           # no reply while the pick holds the cell
        cell.gate.set()
        assert picker.reply()["id"] == "p"
        r = mover.reply()
        assert (r["id"], r["status"]) == ("m", "reached")
        np.testing.assert_array_equal(cell.T_base_tcp[:3, 3], (0.2, 0.2, 0.2))  # after the pick
    finally:
        cell.gate.set()
        picker.close()
        mover.close()


def watch_busy(server) -> str | None:
    """The endpoint's ``busy`` field, asked on a connection of its own."""
    c = Client(server.address)
    try:
        return c.ask({"cmd": "status"})["busy"]
    finally:
        c.close()


# --- the plain-text GRASP line -------------------------------------------------------------------

def read_ascii_floats(line: bytes, number: int) -> list[float]:
    """What URScript's socket_read_ascii_float(number) returns for one reply: [count, values...],
    [0, nan, ...] when the reply is not ``(v1,...,vn)`` with ``number`` values."""
    failed = [0.0] + [math.nan] * number
    m = re.fullmatch(rb"\(([^()]*)\)\r?\n?", line)
    if m is None or not m.group(1):
        return failed
    try:
        values = [float(v) for v in m.group(1).split(b",")]
    except ValueError:
        return failed
    return [float(len(values)), *values] if len(values) == number else failed


@pytest.mark.parametrize("line", [b"GRASP", b"grasp", b"  Grasp \r", b"\tGRASP"])
def test_grasp_line_answers_position_rotation_vector_and_width(client, line):
    client.send(line)
    raw = client.reply_line()
    got = read_ascii_floats(raw, 7)
    assert got[0] == 7
    # the mug at (0.40, 0.10, 0.05), top-down: a half turn about x, rotation vector (pi, 0, 0)
    np.testing.assert_allclose(got[1:], [0.40, 0.10, 0.05, math.pi, 0.0, 0.0, 0.08], atol=1e-6)
    assert re.fullmatch(rb"\((-?\d+\.\d{6},){6}-?\d+\.\d{6}\)\n", raw)


def test_grasp_line_rotation_vector_of_a_tilted_grasp(client, cell):
    angle = 0.7   # about the base z axis, then top-down
    c, s = math.cos(angle), math.sin(angle)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ R_TOP_DOWN
    cell.objects = {"can": ((0.3, 0.0, 0.1), 0.05)}
    original = cell.best_grasp

    def tilted(label, timeout_s):
        g = original(label, timeout_s)
        return GraspChoice(**{**g.__dict__, "T_base_tcp": pose((0.3, 0.0, 0.1), R)})

    cell.best_grasp = tilted
    client.send(b"GRASP")
    got = read_ascii_floats(client.reply_line(), 7)
    rvec = np.array(got[4:7])
    # Rodrigues' formula, written out: rebuild R from the vector and compare
    theta = np.linalg.norm(rvec)
    k = rvec / theta
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    np.testing.assert_allclose(np.eye(3) + math.sin(theta) * K + (1 - math.cos(theta)) * K @ K,
                               R, atol=1e-5)


def test_grasp_line_with_no_grasp_answers_a_line_urscript_reads_as_count_zero(server, client,
                                                                                cell):
    cell.objects = {}
    client.send(b"GRASP")
    raw = client.reply_line()
    assert raw == b"()\n"
    assert read_ascii_floats(raw, 7)[0] == 0
    assert_serving(server, client)


def test_grasp_line_when_the_cell_fails_answers_the_no_grasp_line(server, client, cell):
    def broken(label, timeout_s):
        raise GripperFault(0x0F, "gripper unplugged", port="sim")

    cell.best_grasp = broken
    client.send(b"GRASP")
    assert client.reply_line() == b"()\n"
    assert_serving(server, client)


def rotation_from_vector(rvec) -> np.ndarray:
    """Rodrigues' formula, written out (the test's own, not OpenCV's)."""
    rvec = np.asarray(rvec, dtype=np.float64)
    theta = float(np.linalg.norm(rvec))
    if theta < 1e-12:
        return np.eye(3)
    k = rvec / theta
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(theta) * K + (1 - math.cos(theta)) * K @ K


unit_quaternions = st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(
    lambda q: np.linalg.norm(q) > 0.1).map(lambda q: np.asarray(q) / np.linalg.norm(q))


def rotation_from_quaternion(q) -> np.ndarray:
    """The rotation of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


@settings(max_examples=300, deadline=None)
@given(q=unit_quaternions, t=st.lists(st.floats(-2, 2), min_size=3, max_size=3),
       width=st.floats(0, 0.3))
def test_grasp_text_round_trips_any_rigid_pose_to_six_decimals(q, t, width):
    T = pose(t, rotation_from_quaternion(q))
    got = read_ascii_floats(grasp_text(T, width).encode(), 7)
    assert got[0] == 7
    np.testing.assert_allclose(got[1:4], t, atol=5e-7)
    assert np.linalg.norm(got[4:7]) <= math.pi + 1e-5   # the shortest rotation
    np.testing.assert_allclose(rotation_from_vector(got[4:7]), T[:3, :3], atol=1e-5)
    assert got[7] == pytest.approx(width, abs=5e-7)


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, -1, 1)])
@pytest.mark.parametrize("angle", [0.0, 1e-9, math.pi / 2, math.pi - 1e-7, math.pi])
def test_grasp_text_rotation_vector_at_zero_and_half_turns(axis, angle):
    k = np.asarray(axis, dtype=np.float64) / np.linalg.norm(axis)
    R = rotation_from_vector(k * angle)
    got = read_ascii_floats(grasp_text(pose((0, 0, 0), R), 0.05).encode(), 7)
    np.testing.assert_allclose(rotation_from_vector(got[4:7]), R, atol=1e-5)


def _table_endpoint():
    """An endpoint on a table cell of its own, for many requests: (server, cell)."""
    cell = TableCell()
    with EndpointServer(cell) as srv:
        yield srv, cell


pose_server = pytest.fixture(_table_endpoint, scope="module", name="pose_server")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=unit_quaternions, t=st.lists(st.floats(-5, 5), min_size=3, max_size=3),
       noise=st.floats(-5e-6, 5e-6))
def test_endpoint_takes_poses_written_with_six_decimals_unchanged(pose_server, q, t, noise):
    srv, cell = pose_server
    T = np.round(pose(t, rotation_from_quaternion(q)), 6) + np.diag([noise, 0, 0, 0])
    c = Client(srv.address)
    try:
        r = c.ask({"cmd": "robot_pose", "id": 1, "T_base_tcp": T.tolist()})
    finally:
        c.close()
    assert r["ok"] is True, r
    np.testing.assert_array_equal(cell.poses[r["pose_index"]][0], T)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=unit_quaternions, scale=st.floats(1.001, 3) | st.floats(0.2, 0.999))
def test_endpoint_refuses_a_scaled_rotation_naming_the_field(pose_server, q, scale):
    srv, cell = pose_server
    T = pose((0, 0, 0), rotation_from_quaternion(q) * scale)
    n_poses = len(cell.poses)
    c = Client(srv.address)
    try:
        r = c.ask({"cmd": "robot_pose", "id": 2, "T_base_tcp": T.tolist()})
    finally:
        c.close()
    assert (r["ok"], r["error_type"]) == (False, "bad_request"), r
    assert re.match(r"robot_pose: T_base_tcp must be a rigid transform \(.*\), got rotation error",
                    r["error"]), r
    assert len(cell.poses) == n_poses


# --- the server's life -------------------------------------------------------------------------

def test_stopping_the_server_disconnects_clients_and_frees_the_port(cell):
    with EndpointServer(cell) as srv:
        c = Client(srv.address)
        assert c.ask({"cmd": "status"})["ok"] is True
        address = srv.address
    assert c.file.readline() == b""     # the server closed our connection
    c.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=TIMEOUT_S)
    assert cell.closed == 0             # the service belongs to its owner, not the endpoint


def test_stopping_during_a_pick_lets_it_finish_and_drops_the_queued_commands(cell):
    cell.gate = threading.Event()
    srv = EndpointServer(cell).start()
    picker, mover = Client(srv.address), Client(srv.address)
    closer = threading.Thread(target=srv.close)
    try:
        picker.send({"cmd": "pick", "id": "p"})
        while watch_busy(srv) != "pick":
            time.sleep(0.01)
        mover.send({"cmd": "move", "id": "m", "T_base_tcp": pose((0.2, 0.2, 0.2)).tolist()})
        time.sleep(0.2)                 # the move is queued behind the pick
        closer.start()
        closer.join(0.5)
        assert closer.is_alive()        # stopping waits for the pick...
    finally:
        cell.gate.set()
    closer.join(TIMEOUT_S)
    assert not closer.is_alive()
    assert cell.trials[0]["outcome"] == "pending"      # ...which finished
    np.testing.assert_array_equal(cell.T_base_tcp, pose((0.40, 0.10, 0.05)))   # no move after
    assert picker.file.readline() == b"" and mover.file.readline() == b""
    picker.close()
    mover.close()


def test_a_port_in_use_is_an_error_naming_the_address(server, cell):
    host, port = server.address
    with pytest.raises(OSError, match=f"endpoint could not listen on {host}:{port}"):
        EndpointServer(cell, host, port).start()


# --- fuzz ---------------------------------------------------------------------------------------

fuzz_server = pytest.fixture(_table_endpoint, scope="module", name="fuzz_server")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.binary(min_size=0, max_size=300).filter(
    lambda b: b"\n" not in b and b.strip().upper() != b"GRASP"), min_size=1, max_size=5))
def test_random_byte_lines_are_each_refused_and_the_server_stays_up(fuzz_server, lines):
    srv, cell = fuzz_server
    c = Client(srv.address)
    try:
        c.sock.sendall(b"".join(line + b"\n" for line in lines))
        for line in lines:
            r = c.reply()
            assert r["ok"] is False and r["error"] and r["error_type"], (line, r)
        assert c.ask({"cmd": "status", "id": "alive"})["ok"] is True
    finally:
        c.close()
    assert not cell.poses and not cell.trials


@pytest.fixture(scope="module")
def request_fuzz_server():
    with EndpointServer(TableCell()) as srv:    # its cell takes whatever the requests do
        yield srv


json_scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=5)
                           | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=20)
field_names = st.sampled_from(["id", "object", "timeout_s", "T_base_tcp", "speed_mps", "width_m",
                               "force_n", "trial_id", "success", "note", "label", "speed"])
field_values = json_values | st.just(np.eye(4).tolist()) | st.floats(-1, 2)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests=st.lists(st.builds(lambda cmd, fields: {**fields, "cmd": cmd},
                                   st.sampled_from(ENDPOINT_COMMANDS),
                                   st.dictionaries(field_names, field_values, max_size=4)),
                         min_size=1, max_size=6))
def test_random_requests_each_get_one_well_formed_reply(request_fuzz_server, requests):
    srv = request_fuzz_server
    c = Client(srv.address)
    try:
        c.sock.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        for request in requests:
            r = c.reply()
            assert isinstance(r["ok"], bool), (request, r)
            if not r["ok"]:
                assert isinstance(r["error"], str) and r["error"] and r["error_type"], (request, r)
            rid = request.get("id")
            if isinstance(rid, (int, str)) and not isinstance(rid, bool):
                assert r["id"] == rid, (request, r)
            else:
                assert "id" not in r, (request, r)
        assert c.ask({"cmd": "status", "id": "alive"})["ok"] is True
    finally:
        c.close()


# --- the endpoint page's client (docs/endpoint.md) -----------------------------------------------

def test_the_documented_client_picks_the_mug_and_reports_success(server, cell, capsys):
    readme = open(os.path.join(REPO, "docs", "endpoint.md"), encoding="utf-8").read()
    block = readme.split("<!-- endpoint-client", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert len([line for line in block.splitlines() if line.strip()]) == 15
    exec(block.replace("50600", str(server.address[1])), {})
    assert capsys.readouterr().out == "success\n"
    assert (cell.holding, cell.trials[0]["label"], cell.trials[0]["success"]) == ("mug", "mug", True)
    np.testing.assert_array_equal(cell.T_base_tcp, pose((0.40, 0.10, 0.05)))


def test_the_documented_error_example_is_what_the_server_answers(client):
    readme = open(os.path.join(REPO, "docs", "endpoint.md"), encoding="utf-8").read()
    sent = re.search(r"^-> (.*)$", readme, re.M).group(1)
    answered = re.search(r"^<- (.*)$", readme, re.M).group(1)
    client.send(sent.encode())
    assert client.reply_line().decode() == answered + "\n"


# --- the command line ---------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "onboard.cli", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)


# The CLI with the in-test cell as the picking loop's factory (same signature as the loop's):
# the command line, the bind address, the 'listening on' line, signals and closing the cell.
CLI_WITH_TABLE_CELL = """
import sys
import onboard
from tests.onboard.test_server import TableCell

class ClosingCell(TableCell):
    endpoint_address = ("127.0.0.1", 0) if "--cell-address" in sys.argv else None

    def close(self):
        print("cell closed", flush=True)

onboard.make_picking_service = lambda config, *, sim, seed, log_dir: ClosingCell()
from onboard.cli import main
sys.exit(main(["serve", *[a for a in sys.argv[1:] if a != "--cell-address"]]))
"""


@pytest.mark.parametrize("sig, args", [("SIGTERM", ["--sim", "--port", "0"]),
                                       ("SIGINT", ["--config", "CELL", "--cell-address"])])
def test_serve_listens_serves_and_stops_cleanly_on_a_signal(sig, args, tmp_path):
    import signal

    (tmp_path / "cell.yaml").write_text("# the test cell's factory does not read it\n")
    args = [str(tmp_path / "cell.yaml") if a == "CELL" else a for a in args]
    p = subprocess.Popen([sys.executable, "-c", CLI_WITH_TABLE_CELL, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        line = p.stdout.readline()
        m = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", line)
        assert m, (line, p.stderr.read() if p.poll() is not None else "")
        port = int(m.group(1))
        assert port not in (0, DEFAULT_PORT)     # port 0 from the flag or the cell: a free one
        c = Client(("127.0.0.1", port))
        r = c.ask({"cmd": "status", "id": 1})
        assert (r["ok"], r["id"], r["arm"]) == (True, 1, "at 0.300 0.000 0.400")
        p.send_signal(getattr(signal, sig))
        assert c.file.readline() == b""          # the server closed the connection
        c.close()
        out, err = p.communicate(timeout=60)
        assert (p.returncode, out) == (0, "cell closed\nstopped\n"), err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_serve_names_a_missing_cell_file(tmp_path):
    missing = tmp_path / "nowhere.yaml"
    p = subprocess.run([sys.executable, "-c", CLI_WITH_TABLE_CELL, "--config", str(missing)],
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"graspline serve: error: cell file {missing} does not exist\n"


def test_serve_on_a_port_in_use_says_which_and_closes_the_cell():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        p = subprocess.run([sys.executable, "-c", CLI_WITH_TABLE_CELL, "--sim", "--port",
                            str(port)], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert (p.returncode, p.stdout) == (2, "cell closed\n")
    assert p.stderr == (f"graspline serve: error: cannot listen on 127.0.0.1:{port}: "
                        f"Address already in use\n")


def test_serve_refuses_seed_without_sim():
    p = subprocess.run([sys.executable, "-c", CLI_WITH_TABLE_CELL, "--config", "c.yaml",
                        "--seed", "1"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == ("graspline serve: error: --seed applies to the simulated cell only "
                        "(use it with --sim)\n")


@pytest.mark.slow
def test_serve_sim_listens_answers_status_and_stops_on_sigterm():
    import signal

    p = _cli("--sim", "--port", "0", "--seed", "3")
    try:
        line = p.stdout.readline()     # the kernels, made ready before it listens
        assert re.fullmatch(r"(kernels loaded from cache|compiling kernels \.\.\. done) in "
                            r"\d+\.\d s.*\n", line), line
        line = p.stdout.readline()     # blocks until listening (or exit)
        m = re.fullmatch(r"listening on (\S+):(\d+)\n", line)
        assert m, (line, p.stderr.read() if p.poll() is not None else "")
        c = Client((m.group(1), int(m.group(2))))
        r = c.ask({"cmd": "status", "id": 1})
        assert (r["ok"], r["id"]) == (True, 1) and isinstance(r["trials"], int)
        c.close()
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0 and out == "stopped\n"
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_serve_log_dir_goes_to_the_cells_factory(tmp_path, monkeypatch, capsys):
    from onboard.cli import main

    seen = {}

    def factory(config, *, sim, seed, log_dir):
        seen.update(config=config, sim=sim, log_dir=log_dir)
        raise ValueError("no cell in this test")

    monkeypatch.setattr(onboard, "make_picking_service", factory)
    assert main(["serve", "--sim", "--log-dir", str(tmp_path / "trials")]) == 2
    assert seen == {"config": None, "sim": True, "log_dir": str(tmp_path / "trials")}
    assert capsys.readouterr().err == "graspline serve: error: no cell in this test\n"


def test_the_served_simulated_cell_logs_its_trials_in_log_dir(tmp_path):
    pytest.importorskip("mujoco")
    with onboard.make_picking_service(sim=True, seed=1, log_dir=str(tmp_path / "t")) as cell:
        assert cell.config.log_dir == str(tmp_path / "t")
        assert (tmp_path / "t" / "trials.sqlite").is_file()
        # its kernels were made ready before it is served, and the log keeps the warm-up
        assert cell.kernel_warm_up is not None and cell.log.warm_ups() == [cell.kernel_warm_up]


# --- a multi-finger hand on the simulated cell ----------------------------------------------------

def test_best_grasp_on_the_simulated_cell_with_a_hand_returns_its_joint_targets_and_pose(
        tmp_path):
    """The real PickingCell with the three-finger hand, served over TCP: best_grasp is a
    database grasp whose preshape is the one the database stored for it."""
    pytest.importorskip("mujoco")
    import msgspec

    from onboard import config_hash, sim_cell_file
    from scoring import GraspDatabase
    from tests.onboard.db_scene import build_database

    db = build_database(tmp_path / "box.sqlite", pfc=False)
    config = sim_cell_file(seed=11, hand="three_finger", database=str(db),
                           log_dir=str(tmp_path / "log"))   # seed 11: the box alone
    config = msgspec.structs.replace(
        config, sim=msgspec.structs.replace(config.sim, objects_per_table=[1, 1],
                                            depth_noise=False),
        # noise-free depth lets the box's grasps from above by with db_scene's 2 mm margin
        database=msgspec.structs.replace(config.database, collision_margin_m=0.002))
    with PickingCell(config, config_hash(config)) as cell, EndpointServer(cell) as srv:
        c = Client(srv.address)
        try:
            r = c.ask({"cmd": "best_grasp", "id": 1})
            assert r["ok"] is True, r
            assert (r["source"], r["object"]) == ("database", "box")
            with GraspDatabase(db) as read:
                table = read.grasps("box", "three_finger")
            row = int(np.flatnonzero(table.candidate == r["features"]["db_candidate"])[0])
            assert r["preshape"] == table.preshape[row].tolist() and len(r["preshape"]) > 0
            T = np.array(r["T_base_tcp"])
            np.testing.assert_allclose(T[:3, :3] @ T[:3, :3].T, np.eye(3), atol=1e-6)
            assert [r["features"][f"preshape_{k}"] for k in range(len(r["preshape"]))] == \
                r["preshape"]
            grip = c.ask({"cmd": "grip", "id": 2})
            assert grip["ok"] is False and "three_finger hand" in grip["error"]
            assert c.ask({"cmd": "status", "id": 3})["gripper"] == "three_finger hand empty"
        finally:
            c.close()


def test_serve_refuses_hand_and_cache_without_sim():
    for flag, value in (("--hand", "three_finger"), ("--cache", "c")):
        p = subprocess.run([sys.executable, "-c", CLI_WITH_TABLE_CELL, "--config", "c.yaml",
                            flag, value], capture_output=True, text=True, cwd=REPO, timeout=60)
        assert (p.returncode, p.stdout) == (2, "")
        assert p.stderr == (f"graspline serve: error: {flag} applies to the simulated cell "
                            f"only (use it with --sim)\n")


@pytest.mark.parametrize("args, error", [
    (("--db-candidates", "0"), "--db-candidates must be >= 1, got 0"),
    (("--db-samples", "-2"), "--db-samples must be >= 1, got -2"),
], ids=["no candidates", "negative samples"])
def test_serve_sim_with_a_bad_database_size_is_one_line_before_anything_is_built(
        tmp_path, args, error):
    p = _cli("--sim", "--hand", "three_finger", "--cache", str(tmp_path / "cache"), *args)
    out, err = p.communicate(timeout=120)
    assert (p.returncode, out, err) == (2, "", f"graspline serve: error: {error}\n")
    assert not (tmp_path / "cache").exists()


def test_serve_sim_with_a_bad_hand_is_one_line_before_anything_is_built(tmp_path):
    p = _cli("--sim", "--hand", "four_finger", "--cache", str(tmp_path / "cache"))
    out, err = p.communicate(timeout=120)
    assert (p.returncode, out) == (2, "")
    assert err.startswith("graspline serve: error: --hand must be one of ") and \
        err.count("\n") == 1
    assert not (tmp_path / "cache").exists()


@pytest.mark.slow   # the hand's demo database (built once per run by the fixture: minutes)
def test_serve_sim_hand_finds_its_database_and_best_grasp_carries_the_preshape(
        tmp_path, three_finger_demo_cache):
    import signal

    cache = three_finger_demo_cache.path
    p = _cli("--sim", "--hand", "three_finger", *three_finger_demo_cache.args, "--port", "0",
             "--seed", "0", "--log-dir", str(tmp_path / "log"))
    try:
        ready = p.stdout.readline()    # how the kernels were made ready, before it listens
        line = p.stdout.readline()     # blocks until listening (or exit)
        assert re.fullmatch(r"(compiling kernels \.\.\. done|kernels loaded from cache) in "
                            r"\d+\.\d s.*\n", ready), ready
        m = re.fullmatch(r"listening on (\S+):(\d+)\n", line)
        assert m, (line, p.stderr.read() if p.poll() is not None else "")
        db, = cache.glob("demo-three_finger-*.sqlite")   # the one in --cache, reused
        c = Client((m.group(1), int(m.group(2))))
        r = c.ask({"cmd": "best_grasp", "id": 1, "timeout_s": 5})
        # the first table of seed 0: a database grasp with the hand's joint targets, or
        # no grasp with the database's reasons
        if r["ok"]:
            from scoring import GraspDatabase

            assert r["source"] == "database" and np.array(r["T_base_tcp"]).shape == (4, 4)
            with GraspDatabase(db) as read:   # the joint targets the database stored for it
                table = read.grasps(r["object"], "three_finger")
            row = int(np.flatnonzero(table.candidate == r["features"]["db_candidate"])[0])
            assert r["preshape"] == table.preshape[row].tolist() and len(r["preshape"]) > 0
        else:
            assert r["error_type"] == "no_grasp" and re.search(r"object \d", r["error"])
        assert c.ask({"cmd": "status", "id": 2})["gripper"] == "three_finger hand empty"
        c.close()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out == "stopped\n"
        assert f"grasp database: {db}\n" in err   # what it built, on stderr
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
