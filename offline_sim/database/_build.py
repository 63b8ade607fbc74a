"""Building the grasp database: candidates evaluated in parallel, written in batches, resumable.

Work is spread over local worker processes (default) or a Ray cluster. Each worker builds an
evaluator once per (object, hand) — compiling a simulation world and drawing its candidates
(kept on disk by the evaluator, so that one process draws them) is the slow part — keeps those
of its last MAX_EVALUATORS targets, and evaluates candidates by index. The tasks of every
target go to the workers at once, so the tail of one object does not leave workers idle. Only
the main process writes, one transaction per batch, so a build stopped by Ctrl-C or kill -9
keeps every batch it wrote and, started again, evaluates only the candidates that are missing.
Results do not depend on the number of workers: an evaluator derives each candidate's
randomness from the build seed and the candidate index.

A target records the inputs it was built from (hand, mesh, settings, code of the measures,
each as a digest). A resumed build whose inputs differ either stops and names what changed
(``on_change="stop"``, the default) or deletes that target's grasps and starts it afresh
(``on_change="restart"``); reusing rows computed from other inputs is never an option.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
import json
import os
import signal
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ._writer import GraspDatabaseWriter, GraspRecord

FLUSH_EVERY_S = 2.0  # a kill -9 loses at most this much finished work
TICK_S = 0.25  # the main loop wakes this often even when no result arrives, to flush on time
FLUSH_BATCH = 8  # grasps per transaction when results come faster than FLUSH_EVERY_S
ON_CHANGE = ("stop", "restart")


class Evaluator(Protocol):
    """Evaluates one grasp candidate of one object for one hand."""

    def __call__(self, candidate: int) -> GraspRecord: ...


class BuildInputsChanged(ValueError):
    """A resumed build's inputs differ from those its database was built with.

    changes : {target key: names of the changed inputs, or ["unrecorded"] for grasps built
    before inputs were recorded}."""

    def __init__(self, path: Path, changes: dict[str, list[str]]) -> None:
        self.path, self.changes = path, changes
        super().__init__(f"{path}: {self.describe()}; their grasps were computed from other "
                         f"inputs: rebuild them with on_change='restart' or write another database")

    def describe(self) -> str:
        """One line: each target and what changed."""
        return "; ".join(f"{key} " + ("was built before inputs were recorded" if names == ["unrecorded"]
                                      else "changed " + ", ".join(names))
                         for key, names in self.changes.items())


def digest(value: object) -> str:
    """A short sha256 of a JSON-able value (keys sorted), the form inputs are recorded in."""
    text = json.dumps(value, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BuildTarget:
    """One (object, hand) pair to fill in the database.

    hand_version : digest of the hand model (parameters and MJCF). factory : a picklable
    callable returning the Evaluator (called once per worker). object_info : keyword arguments
    of GraspDatabaseWriter.object_id (mesh, mass, poses...). inputs : digests of the other
    things that decide the results, by name (settings, code version...); the hand, the mesh
    and its scale are added from the fields above (see ``all_inputs``).
    """

    object_name: str
    hand_name: str
    hand_version: str
    hand_params: dict
    n_candidates: int
    factory: Callable[[], Evaluator]
    object_info: dict = field(default_factory=dict)
    inputs: Mapping[str, str] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.object_name}/{self.hand_name}"

    def all_inputs(self) -> dict[str, str]:
        """Every input that decides this target's results, name -> digest."""
        return {"hand": digest([self.hand_version, self.hand_params]),
                "mesh": str(self.object_info.get("mesh_sha256")),
                "scale": repr(float(self.object_info.get("scale", 1.0))),
                **{k: str(v) for k, v in self.inputs.items()}}

    @property
    def version(self) -> str:
        """The target's version: a digest of all its inputs."""
        return digest(self.all_inputs())


@dataclass
class BuildSummary:
    """What a build did: candidates evaluated now, skipped as already done, discarded early;
    restarted : keys of targets whose inputs changed and were started afresh."""

    evaluated: int = 0
    skipped: int = 0
    discarded_early: int = 0
    trials_run: int = 0
    trials_planned: int = 0
    wall_s: float = 0.0
    status: str = "finished"
    restarted: list[str] = field(default_factory=list)


@dataclass
class _Plan:
    """One target's part of a running build: its ids, what is left, and the unwritten results."""

    target: BuildTarget
    object_id: int
    hand_id: int
    todo: list[int]
    left: int  # candidates not yet written
    buffer: list[GraspRecord] = field(default_factory=list)
    oldest: float = 0.0  # time.monotonic() when the oldest buffered result arrived


# Per worker process, the evaluators of the targets it worked on last, least recent first.
# Bounded: a worker of a build of hundreds of objects and hands sees every target (its tasks
# are a few candidates each), and one simulation evaluator holds ~10 MB; the tasks come
# target by target, so a worker rarely goes back to a target it left.
_evaluators: OrderedDict[object, Evaluator] = OrderedDict()
MAX_EVALUATORS = 4


def _evaluate(target: BuildTarget, candidates: list[int]) -> list[tuple[int, GraspRecord]]:
    """Worker side: evaluate candidates of one target with this process's evaluator."""
    # keyed by the factory (its settings), not by the names: two builds of one object and
    # hand with other settings in the same process must not share an evaluator
    key = target.factory
    try:
        hash(key)
    except TypeError:
        key = id(target.factory)
    evaluator = _evaluators.get(key)
    if evaluator is None:
        evaluator = _evaluators[key] = target.factory()
        while len(_evaluators) > MAX_EVALUATORS:
            _evaluators.popitem(last=False)
    _evaluators.move_to_end(key)
    return [(c, evaluator(c)) for c in candidates]


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def changed_inputs(recorded: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Names of the inputs that differ between a recorded target and this build's, sorted."""
    return sorted(k for k in set(recorded) | set(now) if recorded.get(k) != now.get(k))


def build_database(targets: list[BuildTarget], db_path: str | Path, *, workers: int | None = None,
                   ray_address: str | None = None, chunk: int = 2, progress: bool = True,
                   command: str = "", samples_planned: int = 0,
                   on_change: str = "stop") -> BuildSummary:
    """Evaluate every missing candidate of every target and write it to db_path.

    workers : local processes (default: all cores; 0 = in this process). ray_address : run
    on that Ray cluster instead ("local" starts one in this process); a Ray runtime this call
    started is shut down when it returns. chunk : candidates per task. samples_planned :
    Monte Carlo samples per candidate, for the work-saved figure. on_change : what to do with
    a target whose recorded inputs differ from this build's: "stop" raises
    BuildInputsChanged naming the inputs before anything is evaluated, "restart" deletes its
    grasps and builds it afresh.
    """
    if on_change not in ON_CHANGE:
        raise ValueError(f"on_change must be one of {ON_CHANGE}, got {on_change!r}")
    summary = BuildSummary()
    t0 = time.perf_counter()
    with GraspDatabaseWriter(db_path) as db:
        _check_inputs(db, targets, on_change)
        log_id = db.log_start(command or "build_database")
        try:
            with _ctrl_c_between_batches() as stop:
                plans = [_plan(db, t, summary, on_change) for t in targets]
                _run_plans(db, plans, summary, workers, ray_address, chunk, progress,
                           samples_planned, stop)
        except KeyboardInterrupt:
            summary.status = "interrupted"
            db.log_finish(log_id, "interrupted", json.dumps(_summary_json(summary)))
            raise
        except BaseException as exc:
            summary.status = "failed"
            db.log_finish(log_id, "failed", f"{type(exc).__name__}: {exc}")
            raise
        summary.wall_s = time.perf_counter() - t0
        db.log_finish(log_id, "finished", json.dumps(_summary_json(summary)))
    return summary


class _StopRequest:
    """Set by the first Ctrl-C; the build loop ends at its next batch boundary."""

    def __init__(self) -> None:
        self.requested = False

    def check(self) -> None:
        """Raise KeyboardInterrupt here, between batches, if Ctrl-C was pressed."""
        if self.requested:
            raise KeyboardInterrupt


@contextlib.contextmanager
def _ctrl_c_between_batches() -> Iterator[_StopRequest]:
    """Turn the first Ctrl-C into a request that the build loop honours between batches.

    A KeyboardInterrupt raised anywhere (between SQLite's BEGIN and COMMIT, inside Ray's
    wait) could leave the writer's connection mid-transaction, and then neither the batch nor
    the "interrupted" status was written. A second Ctrl-C interrupts at once. Only the main
    thread can own SIGINT; elsewhere, and where SIGINT is ignored, nothing changes."""
    stop = _StopRequest()
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield stop
        return

    def on_sigint(signum, frame) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = True
        print("\nbuild: Ctrl-C: stopping after this batch (press again to stop at once)",
              file=sys.stderr, flush=True)

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _check_inputs(db: GraspDatabaseWriter, targets: list[BuildTarget], on_change: str) -> None:
    """In "stop" mode, raise before any work if a target's recorded inputs differ."""
    if on_change != "stop":
        return
    changes = {}
    for t in targets:
        recorded = db.target_inputs(t.object_name, t.hand_name)
        if recorded is not None and recorded != t.all_inputs():
            changes[t.key] = changed_inputs(recorded, t.all_inputs()) if recorded else ["unrecorded"]
    if changes:
        raise BuildInputsChanged(db.path, changes)


def _plan(db: GraspDatabaseWriter, target: BuildTarget, summary: BuildSummary,
          on_change: str) -> _Plan:
    """Register a target (restarting it if its inputs changed) and list what is left to do."""
    recorded = db.target_inputs(target.object_name, target.hand_name)
    restart = recorded is not None and recorded != target.all_inputs()
    if restart:
        assert on_change == "restart"  # "stop" raised in _check_inputs
        summary.restarted.append(target.key)
    object_id = db.object_id(target.object_name, replace=restart, **target.object_info)
    # the hand's row is versioned by its digest: other parameters, another row
    hand_id = db.hand_id(target.hand_name, target.all_inputs()["hand"], target.hand_params)
    db.begin_target(object_id, hand_id, target.version, target.all_inputs(), target.n_candidates,
                    restart=restart)
    done = db.finished_candidates(object_id, hand_id)
    todo = [c for c in range(target.n_candidates) if c not in done]
    summary.skipped += target.n_candidates - len(todo)
    if not todo:
        db.finish_target(object_id, hand_id)
    return _Plan(target, object_id, hand_id, todo, len(todo))


def _summary_json(s: BuildSummary) -> dict:
    return {"evaluated": s.evaluated, "skipped": s.skipped, "discarded_early": s.discarded_early,
            "trials_run": s.trials_run, "trials_planned": s.trials_planned,
            "restarted": s.restarted}


def _run_plans(db: GraspDatabaseWriter, plans: list[_Plan], summary: BuildSummary,
               workers: int | None, ray_address: str | None, chunk: int, progress: bool,
               samples_planned: int, stop: _StopRequest) -> None:
    """Evaluate the todo candidates of every plan and write them as they come; on a stop
    request, write what arrived and raise KeyboardInterrupt."""
    from tqdm import tqdm

    tasks = [(i, part) for i, p in enumerate(plans) for part in _chunks(p.todo, chunk)]
    if not tasks:
        return
    n_open = sum(1 for p in plans if p.left)
    bar = tqdm(total=sum(p.left for p in plans), desc="build", unit="grasp",
               disable=not progress, dynamic_ncols=True, smoothing=0.05)
    in_process = ray_address is None and workers == 0
    finished_targets = 0

    def flush(plan: _Plan) -> None:
        nonlocal finished_targets
        if not plan.buffer:
            return
        db.write_batch(plan.object_id, plan.hand_id, plan.buffer)
        plan.left -= len(plan.buffer)
        plan.buffer.clear()
        if plan.left == 0:
            db.finish_target(plan.object_id, plan.hand_id)
            finished_targets += 1
            if progress:
                bar.write(f"{plan.target.key}: finished ({len(plan.todo)} grasps now, "
                          f"{plan.target.n_candidates} in all)", file=sys.stderr)

    stream = _results([(plans[i].target, part) for i, part in tasks], workers, ray_address)
    try:
        for arrived in stream:
            now = time.monotonic()
            for task_index, results in arrived:
                plan = plans[tasks[task_index][0]]
                if not plan.buffer:
                    plan.oldest = now
                for _, rec in results:
                    plan.buffer.append(rec)
                    summary.evaluated += 1
                    summary.discarded_early += bool(rec.discarded_early)
                    summary.trials_run += int(rec.samples_run)
                    summary.trials_planned += samples_planned
                bar.update(len(results))
            for plan in plans:
                # in this process nothing else runs while a result waits: write it at once
                if plan.buffer and (in_process or len(plan.buffer) >= FLUSH_BATCH
                                    or now - plan.oldest >= FLUSH_EVERY_S - TICK_S):
                    flush(plan)
            bar.set_postfix(targets=f"{finished_targets}/{n_open}",
                            discarded=summary.discarded_early, refresh=False)
            stop.check()
    finally:
        for plan in plans:
            flush(plan)  # on Ctrl-C too: what finished is kept
        bar.close()
        stream.close()  # ends the workers now, not when the traceback is freed


def _results(tasks: list[tuple[BuildTarget, list[int]]], workers: int | None,
             ray_address: str | None) -> Iterator[list[tuple[int, list[tuple[int, GraspRecord]]]]]:
    """(task index, results) of the tasks as they finish, in batches; an empty batch at least
    every TICK_S while the workers are busy, so the caller can flush on time."""
    if ray_address is not None:
        yield from _results_ray(tasks, ray_address)
        return
    n = (os.cpu_count() or 1) if workers is None else workers
    if n == 0:
        for i, (target, part) in enumerate(tasks):
            yield [(i, _evaluate(target, part))]
        return
    import multiprocessing
    import queue

    arrived: queue.Queue = queue.Queue()
    # workers ignore Ctrl-C: the main process decides, writes what finished, then ends them
    pool = multiprocessing.Pool(n, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
    try:
        for i, (target, part) in enumerate(tasks):
            pool.apply_async(_evaluate, (target, part), callback=functools.partial(_put, arrived, i),
                             error_callback=functools.partial(_put, arrived, i))
        left = len(tasks)
        while left:
            batch = []
            try:
                batch.append(arrived.get(timeout=TICK_S))
                while True:
                    batch.append(arrived.get_nowait())
            except queue.Empty:
                pass
            failed = [r for _, r in batch if isinstance(r, BaseException)]
            left -= len(batch)
            # what finished beside a failed task is handed over first, so it gets written
            yield [(i, r) for i, r in batch if not isinstance(r, BaseException)]
            if failed:
                raise failed[0]
        pool.close()
        pool.join()
    finally:
        pool.terminate()  # Ctrl-C or a failed task: what runs now was not finished, so not lost


def _put(q, index: int, result) -> None:
    """Pool callback: hand a task's results (or its exception) to the main loop."""
    q.put((index, result))


def _results_ray(tasks: list[tuple[BuildTarget, list[int]]], address: str
                 ) -> Iterator[list[tuple[int, list[tuple[int, GraspRecord]]]]]:
    """The same on a Ray cluster: one task per chunk, evaluators cached in Ray's workers.
    A task lost with its node is run again by Ray (max_retries); its results were never
    written, so nothing is repeated that the database holds."""
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("--ray needs Ray: pip install 'graspline[ray]'") from exc
    started = not ray.is_initialized()
    if started:
        # "local": a fresh runtime here, never a cluster some other process left on this machine
        ray.init(address=address, log_to_driver=False)
    try:
        remote = ray.remote(max_retries=5)(_evaluate)
        refs: dict[int, object] = {}  # each target shipped to the object store once
        index = {}
        for i, (target, part) in enumerate(tasks):
            ref = refs.get(id(target))
            if ref is None:
                ref = refs[id(target)] = ray.put(target)
            index[remote.remote(ref, part)] = i
        pending = list(index)
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1, timeout=TICK_S)
                if ready and pending:  # and whatever else is done by now
                    more, pending = ray.wait(pending, num_returns=len(pending), timeout=0)
                    ready += more
                yield [(index[r], ray.get(r)) for r in ready]
        except BaseException:
            for ref in pending:
                ray.cancel(ref)
            raise
    finally:
        if started:
            ray.shutdown()
