"""The emulator's end of a pseudo-terminal, reachable through a stable symlink.

The driver opens the symlink (as it would open /dev/ttyUSB0); the emulator keeps the master.
``vanish`` closes the pty and removes the link, which is what a driver sees when a USB-serial
adapter is pulled; ``restore`` makes a new pty behind the same link.
"""
from __future__ import annotations

import asyncio
import os
import tty


class VirtualPort:
    """A pty whose slave is published at ``link`` (or only at ``path`` if link is None)."""

    def __init__(self, link: str | None = None) -> None:
        self.link = link
        self.master: int | None = None
        self.path: str | None = None
        self._slave: int | None = None
        self.open()

    @property
    def name(self) -> str:
        """What a driver should open: the link if any, else the pty slave path."""
        return self.link or self.path or ""

    def open(self) -> None:
        """Create the pty and publish it."""
        master, slave = os.openpty()
        # Raw mode: no echo, no line editing, no CR/NL translation — a plain byte pipe.
        tty.setraw(slave)
        os.set_blocking(master, False)
        self.master, self._slave, self.path = master, slave, os.ttyname(slave)
        # Keeping our own slave fd open means reading the master never fails with EIO while
        # no driver has the port open.
        if self.link:
            tmp = f"{self.link}.tmp{os.getpid()}"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(self.path, tmp)
            os.replace(tmp, self.link)

    def vanish(self) -> None:
        """Close the pty and remove the link: the driver's reads and writes now fail."""
        if self.link and os.path.lexists(self.link):
            os.unlink(self.link)
        for fd in (self.master, self._slave):
            if fd is not None:
                os.close(fd)
        self.master = self._slave = None

    def watch(self, callback) -> None:
        """Call callback from the running asyncio loop whenever the driver has written."""
        if self.master is not None:
            asyncio.get_running_loop().add_reader(self.master, callback)

    def unwatch(self) -> None:
        """Stop watching (before the pty vanishes or the loop ends)."""
        if self.master is not None:
            asyncio.get_running_loop().remove_reader(self.master)

    @property
    def present(self) -> bool:
        """True while the pty exists."""
        return self.master is not None

    def read(self) -> bytes:
        """Whatever the driver has written (b"" if nothing)."""
        if self.master is None:
            return b""
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        """Send bytes to the driver (dropped while the port has vanished)."""
        if self.master is None or not data:
            return
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.master, view)
            except BlockingIOError:
                continue
            except OSError:
                return
            view = view[n:]

    def close(self) -> None:
        """Remove the pty for good."""
        self.vanish()
