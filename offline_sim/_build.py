"""Building the grasp database: candidates evaluated in parallel, written in batches, resumable.

Work is spread over local worker processes (default) or a Ray cluster. Each worker builds an
evaluator once per (object, hand) — compiling a simulation world is the slow part — and then
evaluates candidates by index. Only the main process writes, one transaction per batch, so a
build stopped by Ctrl-C or kill -9 keeps every batch it wrote and, started again, evaluates
only the candidates that are missing. Results do not depend on the number of workers: an
evaluator derives each candidate's randomness from the build seed and the candidate index.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ._graspdb_writer import GraspDatabaseWriter, GraspRecord

FLUSH_EVERY_S = 2.0  # a kill -9 loses at most this much finished work


class Evaluator(Protocol):
    """Evaluates one grasp candidate of one object for one hand."""

    def __call__(self, candidate: int) -> GraspRecord: ...


@dataclass(frozen=True)
class BuildTarget:
    """One (object, hand) pair to fill in the database.

    factory : a picklable callable returning the Evaluator (called once per worker).
    object_info : keyword arguments of GraspDatabaseWriter.object_id (mesh, mass, poses...).
    """

    object_name: str
    hand_name: str
    hand_version: str
    hand_params: dict
    n_candidates: int
    factory: Callable[[], Evaluator]
    object_info: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.object_name}/{self.hand_name}"


@dataclass
class BuildSummary:
    """What a build did: candidates evaluated now, skipped as already done, discarded early."""

    evaluated: int = 0
    skipped: int = 0
    discarded_early: int = 0
    trials_run: int = 0
    trials_planned: int = 0
    wall_s: float = 0.0
    status: str = "finished"


_evaluators: dict[object, Evaluator] = {}  # per worker process: built once per target


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
    return [(c, evaluator(c)) for c in candidates]


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def build_database(targets: list[BuildTarget], db_path: str | Path, *, workers: int | None = None,
                   ray_address: str | None = None, chunk: int = 2, progress: bool = True,
                   command: str = "", samples_planned: int = 0) -> BuildSummary:
    """Evaluate every missing candidate of every target and write it to db_path.

    workers : local processes (default: all cores; 0 = in this process). ray_address : run
    on that Ray cluster instead ("local" starts one in this process). chunk : candidates per
    task. samples_planned : Monte Carlo samples per candidate, for the work-saved figure.
    """
    summary = BuildSummary()
    t0 = time.perf_counter()
    with GraspDatabaseWriter(db_path) as db:
        log_id = db.log_start(command or "build_database")
        try:
            for target in targets:
                _build_target(db, target, summary, workers, ray_address, chunk, progress,
                              samples_planned)
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


def _summary_json(s: BuildSummary) -> dict:
    return {"evaluated": s.evaluated, "skipped": s.skipped, "discarded_early": s.discarded_early,
            "trials_run": s.trials_run, "trials_planned": s.trials_planned}


def _build_target(db: GraspDatabaseWriter, target: BuildTarget, summary: BuildSummary,
                  workers: int | None, ray_address: str | None, chunk: int, progress: bool,
                  samples_planned: int) -> None:
    """Evaluate and write the missing candidates of one target."""
    from tqdm import tqdm

    object_id = db.object_id(target.object_name, **target.object_info)
    hand_id = db.hand_id(target.hand_name, target.hand_version, target.hand_params)
    done = db.finished_candidates(object_id, hand_id)
    todo = [c for c in range(target.n_candidates) if c not in done]
    summary.skipped += len(done)
    if not todo:
        return
    bar = tqdm(total=len(todo), desc=target.key, unit="grasp", disable=not progress,
               dynamic_ncols=True, smoothing=0.1)
    buffer: list[GraspRecord] = []
    first_buffered = 0.0

    def flush() -> None:
        if buffer:
            db.write_batch(object_id, hand_id, buffer)
            buffer.clear()

    try:
        for results in _run(target, todo, workers, ray_address, chunk):
            for _, rec in results:
                buffer.append(rec)
                summary.evaluated += 1
                summary.discarded_early += bool(rec.discarded_early)
                summary.trials_run += int(rec.samples_run)
                summary.trials_planned += samples_planned
            if len(buffer) == len(results):
                first_buffered = time.monotonic()
            bar.update(len(results))
            bar.set_postfix(discarded=summary.discarded_early, refresh=False)
            if len(buffer) >= 8 or time.monotonic() - first_buffered > FLUSH_EVERY_S:
                flush()
    finally:
        flush()  # on Ctrl-C too: what finished is kept
        bar.close()


def _run(target: BuildTarget, todo: list[int], workers: int | None, ray_address: str | None,
         chunk: int) -> Iterator[list[tuple[int, GraspRecord]]]:
    """Results of the todo candidates, in completion order, chunk by chunk."""
    if ray_address is not None:
        yield from _run_ray(target, todo, ray_address, chunk)
        return
    n = (os.cpu_count() or 1) if workers is None else workers
    if n == 0:
        for part in _chunks(todo, chunk):
            yield _evaluate(target, part)
        return
    with cf.ProcessPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(_evaluate, target, part) for part in _chunks(todo, chunk)]
        try:
            for fut in cf.as_completed(futures):
                yield fut.result()
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def _run_ray(target: BuildTarget, todo: list[int], address: str, chunk: int
             ) -> Iterator[list[tuple[int, GraspRecord]]]:
    """The same on a Ray cluster: one task per chunk, evaluators cached in Ray's workers."""
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("--ray needs Ray: pip install 'graspline[ray]'") from exc
    if not ray.is_initialized():
        ray.init(address=None if address == "local" else address, ignore_reinit_error=True,
                 log_to_driver=False)
    remote = ray.remote(_evaluate)
    target_ref = ray.put(target)
    pending = [remote.remote(target_ref, part) for part in _chunks(todo, chunk)]
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    except BaseException:
        for ref in pending:
            ray.cancel(ref)
        raise
