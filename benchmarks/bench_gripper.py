"""Gripper I/O figures over a real pseudo-terminal, next to the wire time they would take.

Starts each emulator in its own process, opens the driver on the pty and measures:
request -> reply round trips of status() and stop(), and the status polling rate reached.
The baseline is the time the same bytes take on the wire at the model's baud rate (8N1: 10 bits
a byte), computed in the same run from the frames actually sent. A pty has no baud rate, so the
measured figure is the software cost (driver + emulator + kernel); on hardware, the wire time
adds to it. Round trips: the median and p99 of every one timed (not a best-of); the polling
rate is the count over the whole run.

Run from the repository root:
    .venv/bin/python -m benchmarks.bench_gripper [--n 300] [--seconds 2]
"""
from __future__ import annotations

import argparse
import statistics
import time

from drivers.gripper import open_gripper
from drivers.gripper.emulators import EmulatorProcess


def wire_s(n_bytes: int, baud: int) -> float:
    """Seconds n_bytes take on an 8N1 line (start + 8 data + stop bits)."""
    return n_bytes * 10 / baud


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def poll_rate(fn, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - t0)


def robotiq_rows(n: int, seconds: float) -> list[tuple[str, str, float, float]]:
    baud = 115200
    status_bytes = 8 + 11            # read 3 registers: request, reply
    write_bytes = 15 + 8             # write 3 registers: request, reply
    # Modbus RTU above 19200 baud: at least 1.75 ms of silence between frames.
    gap = 1.75e-3
    rows = []
    with EmulatorProcess("robotiq2f85", activation_s=0.05) as emu, \
            open_gripper("robotiq2f85", emu.port, keepalive_s=None) as g:
        g.activate(timeout_s=5)
        st = timed(g.status, n)
        sp = timed(g.stop, n // 3)           # a status read + a request-register write
        rate = poll_rate(g.status, seconds)
    per_poll_wire = wire_s(status_bytes, baud) + 2 * gap
    rows += [
        ("robotiq2f85 status() round trip, median", "ms", 1e3 * statistics.median(st),
         1e3 * wire_s(status_bytes, baud)),
        ("robotiq2f85 status() round trip, p99", "ms", 1e3 * _p99(st),
         1e3 * wire_s(status_bytes, baud)),
        ("robotiq2f85 stop() (read + write), median", "ms", 1e3 * statistics.median(sp),
         1e3 * wire_s(status_bytes + write_bytes, baud)),
        ("robotiq2f85 stop() (read + write), p99", "ms", 1e3 * _p99(sp),
         1e3 * wire_s(status_bytes + write_bytes, baud)),
        ("robotiq2f85 status polling rate", "Hz", rate, 1.0 / per_poll_wire),
    ]
    return rows


def barrett_rows(n: int, seconds: float) -> list[tuple[str, str, float, float]]:
    baud = 9600
    # "FGET P\r" out; echo "FGET P\r\n", "0 0 0 0\r\n" and "=> " back.
    fget_bytes = 7 + 8 + 9 + 3
    with EmulatorProcess("barrett") as emu, open_gripper("barrett", emu.port) as g:
        g.activate(timeout_s=5)
        st = timed(g.status, n)
        rate = poll_rate(g.status, seconds)
    return [
        ("barrett status() (FGET P) round trip, median", "ms", 1e3 * statistics.median(st),
         1e3 * wire_s(fget_bytes, baud)),
        ("barrett status() (FGET P) round trip, p99", "ms", 1e3 * _p99(st),
         1e3 * wire_s(fget_bytes, baud)),
        ("barrett status polling rate", "Hz", rate, 1.0 / wire_s(fget_bytes, baud)),
    ]


def _p99(xs: list[float]) -> float:
    return sorted(xs)[min(len(xs) - 1, int(0.99 * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="round trips per figure")
    ap.add_argument("--seconds", type=float, default=2.0, help="polling-rate run length")
    args = ap.parse_args()
    rows = robotiq_rows(args.n, args.seconds) + barrett_rows(args.n // 3, args.seconds)
    head = ("figure", "unit", "measured (pty)", "wire time baseline")
    w = max(len(r[0]) for r in rows)
    print(f"{head[0]:<{w}}  {head[1]:<4}  {head[2]:>15}  {head[3]:>19}")
    for name, unit, measured, baseline in rows:
        print(f"{name:<{w}}  {unit:<4}  {measured:>15.3f}  {baseline:>19.3f}")
    print("baseline: bytes of the same frames at 115200 baud (Robotiq) / 9600 baud (Barrett), "
          "8N1; polling baseline adds Modbus's 1.75 ms inter-frame gap twice.")


if __name__ == "__main__":
    main()
