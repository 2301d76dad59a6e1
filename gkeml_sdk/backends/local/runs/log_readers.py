"""Reading a local run's logs as they grow: every process's lines slot after slot
(`SlotLogs`, what `logs()` shows), or all of them merged in the order they arrived, each with
its time (`TimedLogs`, `logs(by_time=True)`), from the index the supervisor writes
(`log_pump`)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO

from gkeml_sdk.backends.local.store.run_store import RunDir, slot_key
from gkeml_sdk.runs.log_lines import UNTIMED, log_prefix, timed_line


class LineReader:
    """Complete lines appended to a file since the last read (a partial line waits).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "0.log"
        >>> _ = path.write_bytes(b"one\\ntw")
        >>> reader = LineReader(path)
        >>> reader.read(), reader.rest()
        (['one'], ['tw'])
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None
        self._partial = b""

    def read(self) -> list[str]:
        """The lines completed since the last read."""
        if self._fh is None:
            try:
                self._fh = self.path.open("rb")
            except FileNotFoundError:
                return []
            except OSError as exc:  # one log that cannot be read leaves the others readable
                self._fh = io.BytesIO(f"gkeml: cannot read this log ({exc.strerror})\n".encode())
        data = self._partial + self._fh.read()
        *lines, self._partial = data.split(b"\n")
        return [line.decode(errors="replace") for line in lines]

    def rest(self) -> list[str]:
        """`read()` and the unfinished last line: for a file nobody writes any more."""
        lines = self.read()
        if self._partial:
            lines.append(self._partial.decode(errors="replace"))
            self._partial = b""
        return lines

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()


class SlotLogs:
    """The lines of every process (or of `slot`), each prefixed by its slot, slot after slot
    in each read (`logs()`).

    Example:
        >>> import tempfile
        >>> run = RunDir(tempfile.mkdtemp())
        >>> Path(run.logs).mkdir()
        >>> for slot, text in (("1", b"b\\n"), ("0", b"a\\n")):
        ...     _ = Path(run.log_path(slot)).write_bytes(text)
        >>> SlotLogs(run).read()
        ['[0] a', '[1] b']
    """

    def __init__(self, run: RunDir, slot: str | None = None) -> None:
        self.run, self.slot = run, slot
        self._readers: dict[str, LineReader] = {}

    def read(self) -> list[str]:
        """The lines completed since the last read."""
        lines = []
        for path in self.run.log_paths():
            reader = self._readers.setdefault(path, LineReader(Path(path)))
            if self.slot is None or reader.path.stem == self.slot:
                lines += [log_prefix(reader.path.stem) + line for line in reader.read()]
        return lines

    def rest(self) -> list[str]:
        """The unfinished last lines, once the run ended."""
        return [
            log_prefix(reader.path.stem) + line
            for reader in self._readers.values()
            for line in reader.rest()
        ]

    def close(self) -> None:
        """Close the files."""
        for reader in self._readers.values():
            reader.close()


class TimedLogs:
    """The lines of every process (or of `slot`), merged in the order the supervisor read
    them, each as `<time> [<slot>] <text>`; lines of one time (one read) are in slot order.
    Lines the index does not cover (a run logged before gkeml recorded times, a supervisor
    killed between a line and its record) come once the run ended, slot after slot, with
    `UNTIMED` in place of a time.

    Example:
        >>> import tempfile
        >>> run = RunDir(tempfile.mkdtemp())
        >>> Path(run.logs).mkdir()
        >>> _ = Path(run.log_path("0")).write_bytes(b"a\\nc\\n")
        >>> _ = Path(run.log_path("1")).write_bytes(b"b\\n")
        >>> _ = Path(run.times_path).write_text("2025-12-07T19:53:25.000000000Z 0 0\\n"
        ...     "2025-12-07T19:53:26.000000000Z 1 0\\n2025-12-07T19:53:27.000000000Z 0 2\\n")
        >>> for line in TimedLogs(run).read():
        ...     print(line)
        2025-12-07T19:53:25.000000000Z [0] a
        2025-12-07T19:53:26.000000000Z [1] b
        2025-12-07T19:53:27.000000000Z [0] c
    """

    def __init__(self, run: RunDir, slot: str | None = None) -> None:
        self.run, self.slot = run, slot
        self._index = LineReader(Path(run.times_path))
        self._logs: dict[str, IO[bytes]] = {}
        self._covered: dict[str, int] = {}  # per slot: where the lines with a record end

    def read(self) -> list[str]:
        """The lines recorded since the last read, in time order."""
        found = []
        for record in self._index.read():
            at, _, rest = record.partition(" ")
            slot, _, offset = rest.partition(" ")
            if (self.slot is not None and slot != self.slot) or not offset.isdigit():
                continue
            line = self._line(slot, int(offset))
            if line is not None:
                found.append((at, slot_key(slot), timed_line(at, slot, line)))
        found.sort(key=lambda item: item[:2])  # stable: one slot's lines keep their order
        return [line for _, _, line in found]

    def rest(self) -> list[str]:
        """The lines without a record, once the run ended."""
        lines = []
        for path in self.run.log_paths():
            slot = Path(path).stem
            if self.slot is not None and slot != self.slot:
                continue
            log = self._open(slot)
            if log is None:
                continue
            log.seek(self._covered.get(slot, 0))
            text = log.read().decode(errors="replace")
            lines += [timed_line(UNTIMED, slot, line) for line in text.splitlines()]
        return lines

    def _line(self, slot: str, offset: int) -> str | None:
        log = self._open(slot)
        if log is None:
            return None
        log.seek(offset)
        data = log.readline()
        self._covered[slot] = max(self._covered.get(slot, 0), offset + len(data))
        return data.rstrip(b"\n").decode(errors="replace")

    def _open(self, slot: str) -> IO[bytes] | None:
        if slot not in self._logs:
            try:
                self._logs[slot] = open(self.run.log_path(slot), "rb")  # noqa: SIM115
            except OSError:
                return None
        return self._logs[slot]

    def close(self) -> None:
        """Close the files."""
        self._index.close()
        for log in self._logs.values():
            log.close()
