"""The Gripper implementations the contract suite (test_gripper_contract.py) runs against.

A rig opens grippers of one implementation with an object between the fingers, and provokes
what the contract needs (a lost reply, a device fault, a vanished port) on the device behind
them. What an implementation cannot produce, its rig names in ``unsupported`` with the
reason; a test that needs it is skipped with that reason.

To add an implementation: write a factory ``f(emulator) -> Rig`` (``emulator`` is the
EmulatorProcess factory fixture of conftest.py; ignore it if the device needs none) and append
it to RIGS.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import pytest

from drivers.gripper import Gripper, SimGripper, open_gripper


class Rig:
    """One Gripper implementation under test, and the handles on the device behind it.

    object_width_m : the object between the fingers (m). timeout_s, retries, reconnect_s :
    the driver's reply timeout per attempt, retries and reconnect budget (serial drivers).
    link_lost : what GripperDisconnected says once the link is gone for good (a regex).
    unsupported : behaviour name -> why this implementation cannot produce it. Behaviours:
    "force", "replies", "device_fault", "port" (a port that vanishes and returns, or is
    missing), "disconnect" (the link gone for good).
    """

    name = ""
    object_width_m = 0.04
    timeout_s = 0.0
    retries = 0
    reconnect_s = 0.0
    link_lost = "did not come back within"
    unsupported: dict[str, str] = {}

    def __init__(self) -> None:
        self._opened: weakref.WeakSet[Gripper] = weakref.WeakSet()

    # ----------------------------------------------------------------- for every rig
    def open(self, *, activate: bool = True) -> Gripper:
        """A fresh gripper on the device (activated unless told not to); closed at teardown.

        Held weakly, so that a test may drop it and see it garbage-collected.
        """
        g = self._make()
        self._opened.add(g)
        if activate:
            g.activate(timeout_s=5)
        return g

    def needs(self, behaviour: str) -> None:
        """Skip the calling test, with the rig's reason, if it cannot produce ``behaviour``."""
        if behaviour in self.unsupported:
            pytest.skip(f"{self.name}: {self.unsupported[behaviour]}")

    def close(self) -> None:
        """Close every gripper still open."""
        for g in list(self._opened):
            g.close()

    def width_tolerance_m(self, g: Gripper) -> float:
        """What a width read back may differ by: one position count, at least 1 mm."""
        m = g.spec.width_map
        per_count = abs(m.to_si(0) - m.to_si(1))
        return max(1e-3, 1.5 * per_count)

    # -------------------------------------------------------- device-side handles
    def _make(self) -> Gripper:
        raise NotImplementedError

    def commands_executed(self, g: Gripper) -> int:
        """How many commands that change the device's state it has executed so far."""
        raise NotImplementedError

    def commanded_force_n(self, g: Gripper) -> float:
        """The force (N) the device received with the last motion, through the spec's map."""
        raise NotImplementedError

    def drop_replies(self) -> None:
        """Every request from now on is lost before the device: nothing answers."""
        raise NotImplementedError

    def device_fault(self) -> tuple[int, str]:
        """Make the device report a fault; (its code, a word of its decoded meaning)."""
        raise NotImplementedError

    def vanish(self, seconds: float | None) -> None:
        """Make the port disappear, back after ``seconds`` (None: for good)."""
        raise NotImplementedError

    def missing_port(self, tmp_path: Any) -> Gripper:
        """Open the driver on a port that does not exist (it should raise)."""
        raise NotImplementedError


class EmulatorRig(Rig):
    """A serial driver against its emulator in a child process, on a real pseudo-terminal."""

    timeout_s = 0.2
    retries = 2
    reconnect_s = 1.0
    fault: tuple[int, str] = (0, "")    # injected device fault code and a word of its meaning
    emulator_options: dict[str, Any] = {}

    def __init__(self, emulator: Callable[..., Any]) -> None:
        super().__init__()
        self._start = emulator
        self._emu: Any = None

    @property
    def emu(self) -> Any:
        """The EmulatorProcess, started on first use (a test may need none)."""
        if self._emu is None:
            self._emu = self._start(self.name, object_width_m=self.object_width_m,
                                    **self.emulator_options)
        return self._emu

    def _options(self) -> dict[str, Any]:
        return {"timeout_s": self.timeout_s, "retries": self.retries,
                "reconnect_s": self.reconnect_s}

    def _make(self) -> Gripper:
        return open_gripper(self.name, self.emu.port, **self._options())

    def drop_replies(self) -> None:
        self.emu.faults(drop_request=-1)

    def device_fault(self) -> tuple[int, str]:
        self.emu.device_fault(self.fault[0])
        return self.fault

    def vanish(self, seconds: float | None) -> None:
        self.emu.vanish(seconds=seconds)

    def missing_port(self, tmp_path: Any) -> Gripper:
        return open_gripper(self.name, str(tmp_path / "ttyNOPE"), **self._options())


class RobotiqRig(EmulatorRig):
    """Robotiq over Modbus RTU (objects near the open width keep travel short): request registers byte 0 = action, byte 5 = force (finger A)."""

    emulator_options = {"activation_s": 0.1}

    def commands_executed(self, g: Gripper) -> int:
        return len(self.emu.stats()["writes"])

    def commanded_force_n(self, g: Gripper) -> float:
        go = [w for w in self.emu.stats()["writes"] if w[0] & 0x08]
        return g.spec.force_map.to_si(go[-1][5])


class Robotiq2F85Rig(RobotiqRig):
    name = "robotiq2f85"
    object_width_m = 0.06
    fault = (0x0E, "overcurrent")


class Robotiq3FRig(RobotiqRig):
    name = "robotiq3f"
    object_width_m = 0.12
    fault = (0x0E, "mode change fault")
    emulator_options = {"activation_s": 0.1, "mode_change_s": 0.3}


class BarrettRig(EmulatorRig):
    """Barrett BH8 supervisory ASCII; an object near the open width keeps travel short."""

    name = "barrett"
    object_width_m = 0.16
    timeout_s = 0.3
    fault = (8192, "over temperature")

    def commands_executed(self, g: Gripper) -> int:
        return sum(not c.startswith("FGET") for c in self.emu.stats()["executed"])

    def commanded_force_n(self, g: Gripper) -> float:
        return g.spec.force_map.to_si(self.emu.stats()["props"][0]["MT"])


class SimRig(Rig):
    """SimGripper: kinematic, no port, no device behind it."""

    name = "sim"
    object_width_m = 0.04
    unsupported = {
        "force": "SimGripper is kinematic: it range-checks the force but neither models nor "
                 "records it",
        "replies": "SimGripper has no link, so there are no replies to lose",
        "device_fault": "SimGripper models no device fault other than the missing activation",
        "port": "SimGripper has no port to open, lose or get back",
        "disconnect": "SimGripper has no link to lose",
    }

    def __init__(self, emulator: Callable[..., Any]) -> None:
        super().__init__()

    def _make(self) -> Gripper:
        return SimGripper(object_width_m=self.object_width_m)

    def commands_executed(self, g: Gripper) -> int:
        return len(g.commands)


class SimCellRig(Rig):
    """The simulated cell's jaw (offline_sim.cell.SimJawGripper): MuJoCo physics, the fingers
    around a built-in box on the table; faults and a lost link are injected on the driver."""

    name = "sim_jaw"
    object_width_m = 0.05
    link_lost = "link is down"
    unsupported = {
        "replies": "the simulated jaw has no serial link whose replies could be lost",
        "port": "the simulated jaw has no port to open, lose or get back",
    }

    def __init__(self, emulator: Callable[..., Any]) -> None:
        super().__init__()
        pytest.importorskip("mujoco")

    def _make(self) -> Gripper:
        import numpy as np

        from offline_sim.cell import SimCell, SimCellSettings

        settings = SimCellSettings(objects_per_table=(1, 1), builtin=("box",),
                                   random_primitives=False, depth_noise=False)
        for seed in range(20):  # a resting pose whose narrow side (5 cm) lies flat
            cell = SimCell(settings, seed=seed)
            w = cell.world
            T = w.T_world_object(0)
            axes = [k for k in range(3) if abs(T[2, k]) < 0.1]
            ext = w.objects[0].extents_m
            narrow = min(axes, key=lambda k: ext[k])
            if abs(ext[narrow] - self.object_width_m) < 1e-6:
                break
        else:
            raise RuntimeError("no resting pose of the built-in box shows its 5 cm side")
        # the TCP at the box's centre, closing along its narrow side, pointing down
        x = T[:3, narrow] * np.sign(T[0, narrow] or 1.0)
        z = np.array([0.0, 0.0, -1.0])
        T_tcp = np.eye(4)
        T_tcp[:3, :3] = np.column_stack([x, np.cross(z, x), z])
        T_tcp[:3, 3] = T[:3, 3]
        w.teleport_flange(T_tcp @ np.linalg.inv(w.T_root_tcp))
        cell.step(50)
        return cell.gripper

    def commands_executed(self, g: Gripper) -> int:
        return sum(c != "activate" for c, _ in g.commands)

    def commanded_force_n(self, g: Gripper) -> float:
        return g.last_force_n

    def device_fault(self) -> tuple[int, str]:
        g = next(iter(self._opened))
        g.fault = (0x0E, "overcurrent (injected)")
        return 0x0E, "overcurrent"

    def vanish(self, seconds: float | None) -> None:
        if seconds is not None:   # "port" is unsupported: the link never comes back
            raise NotImplementedError("the simulated jaw's link is lost for good only")
        for g in self._opened:
            g.disconnected = True


#: factories, one per implementation: f(emulator) -> Rig
RIGS: list[Callable[[Callable[..., Any]], Rig]] = [Robotiq2F85Rig, Robotiq3FRig, BarrettRig,
                                                    SimRig, SimCellRig]
