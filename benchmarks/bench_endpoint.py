"""Robot-controller endpoint figures: request -> reply round trips over loopback TCP.

The endpoint runs on its background thread (``EndpointServer``) in front of a cell whose
methods return at once, so the figures are the endpoint's own cost: framing, msgspec decoding
and validation, the hop to the service's worker thread and back, encoding. The baseline, in the
same run, is a plain asyncio echo server answering a line of the same length on the same
loopback: the floor that Python sockets and the event loop set.

Run from the repository root:
    .venv/bin/python -m benchmarks.bench_endpoint [--n 2000] [--clients 4]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import socket
import threading
import time

import numpy as np

from drivers.arm import MoveResult, MoveStatus
from onboard import CellStatus, EndpointServer, GraspChoice, GripReply, TrialSummary

T_GRASP = np.array([[1.0, 0, 0, 0.4], [0, -1, 0, 0.1], [0, 0, -1, 0.05], [0, 0, 0, 1]])


class InstantCell:
    """A cell whose every answer is ready at once: the endpoint is all that is measured."""

    def __init__(self):
        self.T = np.eye(4)
        self.poses = 0

    def status(self):
        return CellStatus("idle", "streaming", "open 0.085 m", "at home", 0)

    def best_grasp(self, object_label, timeout_s):
        return GraspChoice(trial_id=0, object_label="mug", T_base_tcp=T_GRASP, pregrasp_m=0.1,
                           width_m=0.08, force_n=40.0, score=0.91,
                           features={"d_t": 0.1, "r_r_rad": 0.2, "s_a_rad": 0.3, "s_f_px": 1.0},
                           source="image_search", x_px=320.0, y_px=240.0, theta_rad=0.5,
                           n_candidates=1200, stage_s={"capture": 0.01, "search": 0.004})

    def move(self, T_base_tcp, speed_mps):
        self.T = T_base_tcp
        return MoveResult(MoveStatus.REACHED, T_base_tcp, 0.0)

    def grip(self, width_m, force_n, speed_mps):
        return GripReply(True, 0.06, 0.3, "holding")

    def release(self, width_m, speed_mps):
        return GripReply(False, 0.085, 0.3, "open")

    def pick(self, object_label):
        return TrialSummary(0, "mug", "pending", None, 0.9, T_GRASP, 0.08)

    def report_outcome(self, trial_id, success, note):
        return TrialSummary(trial_id, "mug", "success", True, 0.9, T_GRASP, 0.08)

    def record_robot_pose(self, T_base_tcp, label):
        self.poses += 1
        return self.poses - 1

    def close(self):
        pass


def round_trips(address, line: bytes, n: int) -> list[float]:
    """Seconds per request -> reply for ``n`` sends of ``line`` on one connection."""
    with socket.create_connection(address) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        f = sock.makefile("rb")
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            sock.sendall(line)
            if not f.readline():
                raise ConnectionError("server closed the connection")
            out.append(time.perf_counter() - t0)
        f.close()
    return out


def concurrent_round_trips(address, line: bytes, n: int, clients: int) -> tuple[list[float], float]:
    """Per-request seconds over ``clients`` connections at once, and requests per second overall."""
    results: list[list[float]] = [[] for _ in range(clients)]
    start = threading.Barrier(clients + 1)

    def one(k: int) -> None:
        start.wait()
        results[k] = round_trips(address, line, n)

    threads = [threading.Thread(target=one, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    flat = [x for r in results for x in r]
    return flat, len(flat) / wall


class EchoServer:
    """The baseline: an asyncio server that answers each line with itself, nothing else."""

    def __enter__(self):
        ready = threading.Event()

        async def handle(reader, writer):
            while line := await reader.readline():
                writer.write(line)
                await writer.drain()
            writer.close()

        async def main():
            self.loop = asyncio.get_running_loop()
            self.stop = asyncio.Event()
            server = await asyncio.start_server(handle, "127.0.0.1", 0, limit=65536)
            self.address = server.sockets[0].getsockname()
            ready.set()
            await self.stop.wait()
            server.close()

        self.thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
        self.thread.start()
        ready.wait()
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join()


def ms(values: list[float], q: float) -> float:
    """The q-quantile of ``values`` (seconds) in milliseconds."""
    return 1e3 * float(np.quantile(values, q))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="requests per figure (default 2000)")
    ap.add_argument("--clients", type=int, default=4, help="concurrent clients (default 4)")
    args = ap.parse_args()
    # the bad-request row would print a warning per request: time the endpoint, not the terminal
    logging.getLogger("graspline.endpoint").setLevel(logging.ERROR)

    requests = {
        "status": json.dumps({"cmd": "status", "id": 1}),
        "best_grasp": json.dumps({"cmd": "best_grasp", "id": 2, "object": "mug"}),
        "move (4 x 4 checked rigid)": json.dumps({"cmd": "move", "id": 3,
                                                  "T_base_tcp": T_GRASP.tolist()}),
        "GRASP plain-text line": "GRASP",
        "bad request (unknown field)": json.dumps({"cmd": "grip", "id": 4, "speed": 1}),
    }
    rows = []
    with EchoServer() as echo, EndpointServer(InstantCell()) as srv:
        for name, text in requests.items():
            line = text.encode() + b"\n"
            round_trips(srv.address, line, 50)                  # warm-up
            base = round_trips(echo.address, line, args.n)
            rt = round_trips(srv.address, line, args.n)
            rows.append((f"{name}, 1 client", ms(rt, 0.5), ms(rt, 0.99), ms(base, 0.5),
                         ms(base, 0.99)))
        line = requests["status"].encode() + b"\n"
        base, base_rate = concurrent_round_trips(echo.address, line, args.n // 2, args.clients)
        rt, rate = concurrent_round_trips(srv.address, line, args.n // 2, args.clients)
        rows.append((f"status, {args.clients} clients at once", ms(rt, 0.5), ms(rt, 0.99),
                     ms(base, 0.5), ms(base, 0.99)))

    print(f"endpoint round trips over loopback, {args.n} requests per row "
          f"(baseline: asyncio echo of the same line, same run)")
    print(f"| {'figure':<42} | median ms | p99 ms | baseline median ms | baseline p99 ms |")
    print(f"|{'-' * 44}|-----------|--------|--------------------|-----------------|")
    for name, med, p99, bmed, bp99 in rows:
        print(f"| {name:<42} | {med:9.3f} | {p99:6.3f} | {bmed:18.3f} | {bp99:15.3f} |")
    print(f"| {'status requests/s, ' + str(args.clients) + ' clients at once':<42} | "
          f"{rate:9.0f} |        | {base_rate:18.0f} |                 |")


if __name__ == "__main__":
    main()
