"""The robot-controller endpoint: JSON lines over TCP (asyncio), driving a ``PickingService``.

Framing: one request per line, UTF-8, at most ``MAX_LINE_BYTES`` bytes before the newline; every
line gets exactly one reply line, in order, per connection. A longer line is answered with an
error as soon as it passes the limit and the rest of it (up to its newline) is dropped. The line
``GRASP`` (any case, surrounding whitespace or CR ignored) is the plain-text form: the reply is
``(x,y,z,rx,ry,rz,width)`` or ``()`` when there is no grasp (see ``grasp_text``).

Concurrency: any number of clients. Calls into the service run one at a time on one worker
thread, in arrival order (the service need not be thread-safe). ``status`` is answered at once:
from the service when nothing is running or queued, otherwise from the last status read, with
``busy`` naming the running command and ``age_s`` the status's age. A client that disconnects
while its command runs does not stop the command; the reply is dropped.
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from . import _messages as msg
from ._service import PickingService
from ._types import NoGrasp

log = logging.getLogger("graspline.endpoint")

MAX_LINE_BYTES = 64 * 1024
DEFAULT_HOST = "127.0.0.1"


class _Endpoint:
    """Request handling for one service: framing, decoding, the worker thread, status cache."""

    def __init__(self, service: PickingService, max_line_bytes: int = MAX_LINE_BYTES):
        self.service = service
        self.max_line_bytes = max_line_bytes
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="graspline-service")
        self._queued: collections.deque[str] = collections.deque()  # running first, then waiting
        self._status: Any = None
        self._status_time = 0.0
        self._writers: set[asyncio.StreamWriter] = set()

    # -- the worker ---------------------------------------------------------------------------

    async def _call(self, cmd: str, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the worker thread after the calls queued before it."""
        loop = asyncio.get_running_loop()
        self._queued.append(cmd)
        job = self._worker.submit(fn, *args)
        # one worker, FIFO: the call that ends is always the oldest one queued. Counted when the
        # thread is done with it (not when our await ends), and before the awaiting task resumes.
        job.add_done_callback(lambda _: loop.call_soon_threadsafe(self._queued.popleft))
        try:
            return await asyncio.wrap_future(job)
        except Exception as exc:
            raise _ServiceFailed(exc) from exc

    async def _read_status(self) -> None:
        """Refresh the cached status from the service."""
        st = await self._call("status", self.service.status)
        self._status, self._status_time = st, time.monotonic()

    # -- one request --------------------------------------------------------------------------

    async def answer(self, line: bytes, client: str) -> bytes:
        """The reply line (newline included) to one request line (newline stripped)."""
        t0 = time.perf_counter()
        if line.strip().upper() == b"GRASP":
            text = await self._grasp_text(client)
            log.info("%s GRASP -> %s (%.1f ms)", client, text, 1e3 * (time.perf_counter() - t0))
            return text.encode("ascii") + b"\n"
        try:
            req = msg.decode_request(line)
        except msg.BadRequest as exc:
            log.warning("%s bad request (%s): %s", client, exc.code, exc)
            return msg.encode_reply(msg.error_reply(exc.request_id, str(exc), exc.code))
        cmd = type(req).__struct_config__.tag
        try:
            reply = await self._dispatch(req)
            data = msg.encode_reply(reply)
        except _ServiceFailed as failed:  # a failure of the cell is the client's answer
            exc = failed.exc
            log.warning("%s %s id=%r failed: %s: %s", client, cmd, req.id,
                        type(exc).__name__, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            reply = msg.error_reply(req.id, _describe(exc), type(exc).__name__)
            data = msg.encode_reply(reply)
        except Exception as exc:  # e.g. a service returning the wrong type: not the end of us
            log.error("%s %s id=%r: no reply could be made: %s: %s", client, cmd, req.id,
                      type(exc).__name__, exc, exc_info=True)
            reply = msg.error_reply(
                req.id, f"internal error: the cell's answer to {cmd} could not be sent as a "
                        f"reply ({type(exc).__name__}: {exc})", "internal_error")
            data = msg.encode_reply(reply)
        log.info("%s %s id=%r -> ok=%s (%.1f ms)", client, cmd, req.id, reply.ok,
                 1e3 * (time.perf_counter() - t0))
        return data

    async def _dispatch(self, req: msg.Request) -> msg.Reply:
        """Run one decoded request on the service and build its reply."""
        s, rid = self.service, req.id
        if isinstance(req, msg.StatusRequest):
            busy = next((c for c in self._queued if c != "status"), None)
            if busy is None:
                await self._read_status()
            elif self._status is None:   # the first read at start-up failed
                return msg.error_reply(rid, f"no status read yet, and the cell is busy with "
                                            f"{busy}", "busy")
            return msg.status_reply(rid, self._status, busy, time.monotonic() - self._status_time)
        if isinstance(req, msg.BestGraspRequest):
            return msg.grasp_reply(rid, await self._call(
                "best_grasp", s.best_grasp, req.object, req.timeout_s))
        if isinstance(req, msg.MoveRequest):
            return msg.move_reply(rid, await self._call("move", s.move, req.pose, req.speed_mps))
        if isinstance(req, msg.GripRequest):
            return msg.gripper_reply(rid, await self._call(
                "grip", s.grip, req.width_m, req.force_n, req.speed_mps))
        if isinstance(req, msg.ReleaseRequest):
            return msg.gripper_reply(rid, await self._call(
                "release", s.release, req.width_m, req.speed_mps))
        if isinstance(req, msg.PickRequest):
            return msg.trial_reply(rid, await self._call("pick", s.pick, req.object))
        if isinstance(req, msg.ReportOutcomeRequest):
            return msg.trial_reply(rid, await self._call(
                "report_outcome", s.report_outcome, req.trial_id, req.success, req.note,
                req.stop_pose))
        if isinstance(req, msg.ClearFaultRequest):
            await self._call("clear_fault", s.clear_fault)
            await self._read_status()
            return msg.status_reply(rid, self._status, None, 0.0)
        if isinstance(req, msg.RobotPoseRequest):
            return msg.robot_pose_reply(rid, await self._call(
                "robot_pose", s.record_robot_pose, req.pose, req.label))
        raise AssertionError(f"unhandled request type {type(req).__name__}")

    async def _grasp_text(self, client: str) -> str:
        """The plain-text answer to ``GRASP``: seven numbers, or ``()`` when there is none."""
        try:
            g = await self._call("best_grasp", self.service.best_grasp, None, None)
            if isinstance(g, NoGrasp):
                log.info("%s GRASP: no grasp: %s", client, g.reason)
                return msg.NO_GRASP_TEXT
            return msg.grasp_text(g.T_base_tcp, g.width_m)
        except Exception as exc:  # the cell's failure or a non-finite grasp: "no grasp"
            exc = exc.exc if isinstance(exc, _ServiceFailed) else exc
            log.warning("%s GRASP failed: %s: %s", client, type(exc).__name__, exc)
            return msg.NO_GRASP_TEXT

    # -- one connection -----------------------------------------------------------------------

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one client until it disconnects: one reply line per request line."""
        peer = writer.get_extra_info("peername")
        client = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        log.info("%s connected", client)
        self._writers.add(writer)
        discarding = False   # inside the tail of an over-long line
        try:
            while True:
                try:
                    line = await reader.readuntil(b"\n")
                except asyncio.LimitOverrunError as exc:
                    # the reader keeps what it buffered: drop it, answer once per long line
                    await reader.readexactly(exc.consumed)
                    if not discarding:
                        discarding = True
                        log.warning("%s line over %d bytes", client, self.max_line_bytes)
                        await self._send(writer, msg.encode_reply(msg.error_reply(
                            None, f"line over {self.max_line_bytes} bytes: the rest of it, up to "
                                  f"the next newline, is discarded", "line_too_long")))
                    continue
                except asyncio.IncompleteReadError as exc:
                    if exc.partial and not discarding:
                        # the client closed (or half-closed) mid-line: answer if it still reads
                        log.warning("%s disconnected mid-line (%d bytes without a newline)",
                                    client, len(exc.partial))
                        await self._send(writer, msg.encode_reply(msg.error_reply(
                            None, f"connection closed mid-line: {len(exc.partial)} bytes "
                                  f"without a newline were not processed", "incomplete_line")))
                    break
                if discarding:
                    discarding = False   # this was the end of the long line
                    continue
                await self._send(writer, await self.answer(line[:-1], client))
        except (ConnectionError, OSError) as exc:
            log.info("%s connection lost: %s", client, exc)
        finally:
            self._writers.discard(writer)
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
            log.info("%s disconnected", client)

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, data: bytes) -> None:
        """Write one reply line; a peer that is gone raises ConnectionError."""
        if writer.is_closing():
            raise ConnectionResetError("the client has gone")
        writer.write(data)
        await writer.drain()

    # -- the server ---------------------------------------------------------------------------

    async def run(self, host: str, port: int, stop: asyncio.Event,
                  ready: Callable[[str, int], None] | None) -> None:
        """Listen on ``host:port`` until ``stop`` is set; ``ready(host, port)`` once accepting."""
        try:
            await self._read_status()
        except Exception as exc:
            log.warning("first status read failed: %s: %s", type(exc).__name__, exc)
        # the reader's limit is the line limit: readuntil raises LimitOverrunError beyond it
        server = await asyncio.start_server(self.handle, host, port, limit=self.max_line_bytes)
        try:
            bound = server.sockets[0].getsockname()
            log.info("listening on %s:%d", bound[0], bound[1])
            if ready is not None:
                ready(bound[0], bound[1])
            await stop.wait()
        finally:
            log.info("stopping: closing %d client connection(s)", len(self._writers))
            server.close()
            for w in list(self._writers):
                w.close()
            await server.wait_closed()
            # a command already running finishes (the arm is not left half-way by us); queued
            # ones are dropped
            self._worker.shutdown(wait=False, cancel_futures=True)
            await asyncio.get_running_loop().run_in_executor(None, self._worker.shutdown, True)


class _ServiceFailed(Exception):
    """An exception raised by the service (``exc``), as opposed to one of the endpoint's own."""

    def __init__(self, exc: BaseException):
        super().__init__(str(exc))
        self.exc = exc


def _describe(exc: BaseException) -> str:
    """An exception's message, or its type name when it has none."""
    text = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        text = str(exc.args[0])   # str(KeyError) adds quotes
    return text or type(exc).__name__


def serve(service: PickingService, host: str = DEFAULT_HOST, port: int = 0, *,
          ready: Callable[[str, int], None] | None = None,
          max_line_bytes: int = MAX_LINE_BYTES) -> None:
    """Serve ``service`` on ``host:port`` until Ctrl-C or SIGTERM (port 0: a free one).

    ``ready(host, port)`` is called with the bound address once connections are accepted. Returns
    normally after a clean shutdown: listening socket and client connections closed, the command
    running (if any) finished, queued ones dropped. Does not close the service.
    """

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop.set)
        try:
            await _Endpoint(service, max_line_bytes).run(host, port, stop, ready)
        finally:
            if threading.current_thread() is threading.main_thread():
                for sig in (signal.SIGINT, signal.SIGTERM):
                    loop.remove_signal_handler(sig)

    asyncio.run(main())


class EndpointServer:
    """The endpoint on a background thread, as a context manager (tests, ``graspline demo``).

    ``with EndpointServer(service) as srv: socket.create_connection(srv.address)``. Port 0 (the
    default) picks a free port; ``address`` is the bound ``(host, port)``. Leaving the block stops
    the server (clients disconnected, the running command finished); the service stays open.
    """

    def __init__(self, service: PickingService, host: str = DEFAULT_HOST, port: int = 0, *,
                 max_line_bytes: int = MAX_LINE_BYTES, start_timeout_s: float = 10.0):
        self._endpoint = _Endpoint(service, max_line_bytes)
        self._host, self._port = host, port
        self._start_timeout_s = start_timeout_s
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.address: tuple[str, int] | None = None

    def start(self) -> EndpointServer:
        """Start listening; returns once connections are accepted (raises if binding failed)."""
        if self._thread is not None:
            raise RuntimeError("EndpointServer already started")
        self._thread = threading.Thread(target=self._main, name="graspline-endpoint", daemon=True)
        self._thread.start()
        if not self._ready.wait(self._start_timeout_s):
            self.close()
            raise TimeoutError(f"endpoint did not start listening on {self._host}:{self._port} "
                               f"within {self._start_timeout_s} s")
        if self._error is not None:
            self._thread.join()
            raise OSError(f"endpoint could not listen on {self._host}:{self._port}: "
                          f"{self._error}") from self._error
        return self

    def _main(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            await self._endpoint.run(self._host, self._port, self._stop, self._on_ready)

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported to start() (binding) or logged (later)
            self._error = exc
            if self._ready.is_set():
                log.error("endpoint stopped on an error: %s", exc)
            self._ready.set()

    def _on_ready(self, host: str, port: int) -> None:
        self.address = (host, port)
        self._ready.set()

    def close(self, timeout_s: float | None = None) -> None:
        """Stop the server and wait for its thread; safe to call twice.

        The wait includes the command the cell is running, so that the caller may close the
        service afterwards without pulling it from under that command. ``timeout_s`` bounds the
        wait (None: no bound); past it an error is logged and the thread is left running.
        """
        loop, stop, thread = self._loop, self._stop, self._thread
        if thread is None or not thread.is_alive():
            return
        if loop is not None and stop is not None:
            try:
                loop.call_soon_threadsafe(stop.set)
            except RuntimeError:   # the loop has already closed
                pass
        thread.join(timeout_s)
        if thread.is_alive():
            log.error("endpoint thread still running after %.0f s: the cell's command has not "
                      "finished", timeout_s)

    def __enter__(self) -> EndpointServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
