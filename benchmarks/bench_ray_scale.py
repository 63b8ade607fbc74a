"""Database build on a local Ray cluster of 1, 2 and 4 worker nodes, and a node killed mid-build.

Each worker node is a separate `ray start --block` process (its raylet and its workers),
pinned with `taskset` to its share of this machine's cores; the head node takes no tasks
(--num-cpus 0), so every simulation runs on a worker node. The same build (the product's
path: `graspline db build --ray ADDRESS`) runs once per cluster size, into its own database.

Prints, per cluster size: the build's own wall time (from its summary line: connecting to
the cluster, shipping the targets, every worker compiling its world, simulating, writing), grasps/s, speed-up over 1 node measured in the same run,
the Ray scheduling overhead per task (mean round trip of an empty task submitted the way the
build submits its tasks), and the nodes' busy share (simulation seconds the workers report,
over slots x wall). Then a 2-node build in which one worker node is killed (SIGKILL to its
process group) once a third of the grasps are written: the build must finish, with every
candidate written once and equal to the 1-node build's results (the same seed).

The machine this runs on is shared: it prints the load average before and after, and its
figures are ratios within the run. Clusters are started and stopped by process id; nothing
else on the machine is touched (no `ray stop`).

Run from the repository root:
    .venv/bin/python -m benchmarks.bench_ray_scale [--candidates 12] [--samples 10]
     [--objects box,cylinder,bottle] [--hand parallel] [--nodes 1,2,4]
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).parent / "ray"
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled",
       "PYTHONPATH": str(ROOT)}


# Ray's own components take these ports whatever the head's port is (the dashboard, its
# agent's HTTP server, the client server, Redis): a head port drawn on one of them fails
# `ray start` ("... is trying to use a port number 52365 that is used by other components")
RAY_FIXED_PORTS = frozenset({8265, 52365, 10001, 6379})


def free_port() -> int:
    """A TCP port free on this machine now, none of RAY_FIXED_PORTS and outside Ray's
    default worker ports (10002-19999)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in RAY_FIXED_PORTS and not 10002 <= port <= 19999:
            return port


class LocalCluster:
    """A head (no CPUs) and n worker nodes, each `ray start --block` pinned to its cores."""

    def __init__(self, n_nodes: int, tmp: Path) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.tmp = tmp
        cores = sorted(os.sched_getaffinity(0))
        per = max(1, len(cores) // n_nodes)
        self.slots = per * n_nodes
        try:
            self._start(["--head", f"--port={self.port}", "--num-cpus=0",
                         "--include-dashboard=false"], cores, "head")
            self._wait_nodes(1)
            # one node at a time: several raylets starting at once on a loaded machine time out
            for i in range(n_nodes):
                share = [cores[(i * per + k) % len(cores)] for k in range(per)]
                self._start([f"--address={self.address}", f"--num-cpus={len(share)}"], share,
                            f"node{i}")
                self._wait_nodes(2 + i)
        except BaseException:
            self.close()
            raise

    def _start(self, args: list[str], cores: list[int], name: str) -> None:
        log = open(self.tmp / f"{name}-{self.port}.log", "w")
        # each node its own agent and metrics ports: two nodes on one machine must not share
        ports = [f"--{p}={free_port()}" for p in ("dashboard-agent-listen-port",
                                                   "dashboard-agent-grpc-port",
                                                   "metrics-export-port", "runtime-env-agent-port")]
        self.procs.append(subprocess.Popen(
            ["taskset", "-c", ",".join(map(str, cores)), str(RAY), "start", "--block",
             "--disable-usage-stats", *ports, *args],
            stdout=log, stderr=subprocess.STDOUT, env=ENV, cwd=ROOT, start_new_session=True))

    def _wait_nodes(self, n: int, timeout_s: float = 180.0) -> None:
        probe = ("import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
                 "print(sum(1 for x in ray.nodes() if x['Alive']))")
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            out = subprocess.run([sys.executable, "-c", probe, self.address], capture_output=True,
                                 text=True, env=ENV, timeout=120)
            if out.returncode == 0 and out.stdout.strip().isdigit() and int(out.stdout) >= n:
                return
            time.sleep(1.0)
        raise RuntimeError(f"Ray cluster at {self.address} did not reach {n} nodes")

    def kill_node(self, i: int) -> None:
        """SIGKILL worker node i's process group (its raylet and workers), as a crash would."""
        os.killpg(self.procs[1 + i].pid, signal.SIGKILL)

    def close(self) -> None:
        """Stop every node this cluster started: SIGTERM to its process group, then SIGKILL
        to whatever of the group is left (`ray start --block` leaves its raylet behind)."""
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        time.sleep(5)
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def task_overhead_s(address: str, n: int = 300) -> float:
    """Mean round trip of an empty Ray task on the cluster (submit all, wait for all)."""
    code = ("import ray, sys, time; ray.init(address=sys.argv[1], log_to_driver=False)\n"
            "f = ray.remote(max_retries=5)(lambda x: x)\n"
            "ray.get([f.remote(i) for i in range(20)])\n"
            f"t = time.perf_counter(); ray.get([f.remote(i) for i in range({n})])\n"
            f"print((time.perf_counter() - t) / {n})")
    out = subprocess.run([sys.executable, "-c", code, address], capture_output=True, text=True,
                         env=ENV, timeout=300)
    return float(out.stdout.strip().splitlines()[-1])


def build_cmd(args, address: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "onboard.cli", "db", "build", "--objects", str(args.mesh_dir),
            "--hand", args.hand, "--candidates", str(args.candidates), "--samples",
            str(args.samples), "--cache", str(args.cache), "--ray", address, "--out", str(out)]


def written(path: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def rows(path: Path) -> dict:
    con = sqlite3.connect(path)
    out = {(o, c): q for o, c, q in con.execute(
        "SELECT o.name, g.candidate, r.quality FROM grasps g JOIN results r ON r.grasp_id = g.id "
        "JOIN objects o ON o.id = g.object_id")}
    busy = con.execute("SELECT SUM(wall_s) FROM results").fetchone()[0] or 0.0
    con.close()
    return out, busy


def mesh_folder(names: list[str], folder: Path) -> Path:
    """The built-in objects as OBJ files (the CLI's --objects takes a folder or 'builtin')."""
    from offline_sim.objects import builtin_object

    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        obj = builtin_object(name)
        import trimesh

        parts = [trimesh.Trimesh(v, f) for v, f in obj.parts]
        trimesh.util.concatenate(parts).export(folder / f"{name}.obj")
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--candidates", type=int, default=12)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--objects", default="box,cylinder,bottle")
    ap.add_argument("--hand", default="parallel")
    ap.add_argument("--nodes", default="1,2,4")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_ray_scale_"))
    args.cache = tmp / "cache"
    args.mesh_dir = mesh_folder(args.objects.split(","), tmp / "meshes")
    cores = len(os.sched_getaffinity(0))
    print(f"bench_ray_scale: {cores} cores, load average {os.getloadavg()[0]:.2f}; "
          f"{args.objects} x {args.hand}, {args.candidates} candidates x {args.samples} samples")
    # decompose once, outside the timed builds
    subprocess.run([sys.executable, "-m", "onboard.cli", "db", "build", "--objects", str(args.mesh_dir),
                    "--hand", args.hand, "--candidates", "1", "--samples", "1", "--workers", "0",
                    "--cache", str(args.cache), "--out", str(tmp / "warm.db")],
                   check=True, env=ENV, cwd=ROOT, capture_output=True)
    results = {}
    print(f"\n{'nodes':>5} {'slots':>5} {'wall':>8} {'grasps/s':>9} {'speed-up':>9} "
          f"{'task overhead':>14} {'busy':>6}")
    for n in (int(v) for v in args.nodes.split(",")):
        cluster = LocalCluster(n, tmp)
        try:
            overhead = task_overhead_s(cluster.address)
            out = tmp / f"nodes{n}.db"
            t0 = time.perf_counter()
            done = subprocess.run(build_cmd(args, cluster.address, out), env=ENV, cwd=ROOT,
                                  capture_output=True, text=True, timeout=3600)
            wall = time.perf_counter() - t0
        finally:
            cluster.close()
        if done.returncode != 0:
            print(f"{n:>5} build failed: {done.stderr[-500:]}")
            continue
        got, busy = rows(out)
        # the build's own wall time (its last line), without the CLI's start and preparation
        wall = float(done.stdout.strip().splitlines()[-1].rsplit(",", 1)[-1].strip().split()[0])
        results[n] = (got, wall)
        base = results[min(results)][1]
        print(f"{n:>5} {cluster.slots:>5} {wall:>6.1f} s {len(got) / wall:>9.2f} "
              f"{base / wall:>8.2f}x {overhead * 1e3:>11.2f} ms {busy / (cluster.slots * wall):>6.0%}")

    # a worker node killed mid-build
    cluster = LocalCluster(2, tmp)
    out = tmp / "killed.db"
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(build_cmd(args, cluster.address, out), env=ENV, cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        total = len(next(iter(results.values()))[0]) if results else 3 * args.candidates
        while written(out) < total // 3 and proc.poll() is None:
            time.sleep(0.2)
        at = written(out)
        cluster.kill_node(1)
        killed_at = time.perf_counter() - t0
        stdout, stderr = proc.communicate(timeout=3600)
        wall = time.perf_counter() - t0
    finally:
        cluster.close()
    print(f"\nworker node 1 of 2 killed at {killed_at:.1f} s with {at} grasps written: "
          f"build exit status {proc.returncode}, {wall:.1f} s in all")
    if proc.returncode == 0:
        got, _ = rows(out)
        con = sqlite3.connect(out)
        n_rows = con.execute("SELECT COUNT(*) FROM grasps").fetchone()[0]
        con.close()
        ref = results.get(1, (None,))[0]
        same = ref is not None and got == ref
        print(f"  grasps written {n_rows} (distinct {len(got)}), equal to the 1-node build: {same}")
        print(f"  {stdout.strip().splitlines()[-1] if stdout.strip() else ''}")
    else:
        print(stderr[-1500:])
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
