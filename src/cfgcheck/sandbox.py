"""How cfgcheck runs another program on a pull request's files: ``helm template`` and ``kubectl
kustomize`` (docs/SECURITY.md, "Rendering threat model"), and, with :func:`run_bounded`, git.

A renderer runs a chart or a kustomization someone else wrote, so the child gets:

* an environment built from an allow-list (:func:`child_env`): ``PATH``, the locale and what the
  caller sets on purpose (its private folders). Nothing else of the caller's reaches it: no
  ``GITHUB_TOKEN``, ``HF_TOKEN``, ``AWS_*``, proxy, ``HELM_*`` or ``KUBECONFIG``;
* no network where the platform gives one away without privileges: a new network namespace
  (``unshare --net``, with a user namespace when not root), found to work once per process, else none;
* resource limits set between ``fork`` and ``exec`` (:func:`_limit`): address space, CPU seconds,
  file size and open files, and the child dies with cfgcheck (``PR_SET_PDEATHSIG``);
* a time bound per run and one budget for every rendering of a run (:class:`RenderRun`), and an
  output bound (the child is killed once it prints more).

``RLIMIT_AS`` is 1 GiB: helm 3.17 and kubectl 1.32 (Go 1.23) need 720-768 MiB of address space just
to start (below that the Go runtime stops with "failed to reserve page summary memory"); at 1 GiB a
chart that renders 4 MB (91 MB resident) and one with a 2 MB values file (277 MB resident) render,
while a template that doubles a string with ``repeat`` up to 2 GiB (4.2 GB resident and 45 s without
a limit) stops in 1-2 s with "out of memory", and a kustomization naming a 4 MB file 40 times (2.3 GB
and 156 s without a limit) in about 5 s. Limits between 1.2 and 1.35 GiB must not be chosen: Go's
heap layout makes ordinary charts fail there (measured, docs/SECURITY.md). ``GOMAXPROCS=2`` keeps the
CPU limit meaningful; ``GOMEMLIMIT`` is not set (a soft limit below the hard one turns a memory bomb
into 20-30 s of garbage collection before it stops).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import stat
import sys
import time
from pathlib import Path

from .records import Record

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
# subprocess, tempfile and shutil (with the compression modules shutil loads) are imported by the functions
# that start a process or make a folder: every run enters ``session``, few start a process, and those three
# cost a one-file lint about a tenth of its CPU time (bench/RESULTS.md, "One file: start-up")
if TYPE_CHECKING:
    from typing import Callable, Iterator
    import subprocess

try:
    import resource
except ImportError:  # Windows: no resource limits
    resource = None  # type: ignore[assignment]
ADDRESS_SPACE = 1024 * 1024 * 1024  # RLIMIT_AS of a renderer (module docstring: measured)
OPEN_FILES = 256
GO_ENV = {"GOMAXPROCS": "2"}
RENDER_TIMEOUT = 30.0  # seconds for one rendering; a chart renders in well under one
RENDER_BUDGET = 60.0  # seconds for every rendering of a run (``render-budget`` in the configuration): two
# renderings that never finish, so that review of a pull request of such charts still ends within 100 s
STDERR_BYTES = 64 * 1024
RUN_PREFIX = "cfgcheck-render-"
MARKER = ".cfgcheck-render"  # in every run folder: what a later run may clean up (with the owner's uid)
STALE_AFTER = 6 * 3600  # seconds: a run folder this old was left by a run that was killed
_KEPT_ENV = ("PATH", "SYSTEMROOT", "LANG", "LC_ALL", "LC_CTYPE")


class Outcome(Record):  # a record every run defines (git.py imports this module): cheaper than a dataclass
    """What a bounded run gave: ``stdout`` (at most ``limit`` bytes), the start of ``stderr``, the exit
    code, and ``stopped``: None, or the bound that stopped it (``timeout``, ``output``, ``memory``,
    ``cpu``, ``file size``)."""

    __slots__ = ("stdout", "stderr", "returncode", "stopped")

    def __init__(self, stdout: bytes, stderr: bytes, returncode: int, stopped: str | None = None) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.returncode = returncode
        self.stopped = stopped


def child_env(home: Path | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A renderer's environment: ``PATH`` and the locale from the caller, ``HOME`` and ``TMPDIR`` in
    ``home``, Go's limits, and ``extra``; nothing else."""
    env = {name: os.environ[name] for name in _KEPT_ENV if name in os.environ}
    if home is not None:
        env.update(HOME=str(home), TMPDIR=str(home))
    env.update(GO_ENV)
    env.update(extra or {})
    return env


@functools.lru_cache(maxsize=1)
def network_prefix() -> tuple[str, ...]:
    """The command that starts a program without network: ``unshare`` into a new network namespace
    (with a user namespace of the caller's own uid when not root: util-linux's ``--map-current-user``,
    else ``--map-root-user``), the first that works here; () where none does (another system, a
    container without user namespaces, an AppArmor rule): the child then runs with the network, its
    environment holding no proxy and helm never given ``--enable-dns``."""
    import shutil
    import subprocess

    unshare, true = shutil.which("unshare"), shutil.which("true")
    if os.name != "posix" or unshare is None or true is None:
        return ()
    candidates = [[unshare, "--net"]] if os.geteuid() == 0 else []
    candidates += [[unshare, "--map-current-user", "--net"], [unshare, "--map-root-user", "--net"]]
    for candidate in candidates:
        try:
            done = subprocess.run([*candidate, "--", true], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=child_env(None), timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return (*candidate, "--")
    return ()


@functools.lru_cache(maxsize=1)
def _death_signal() -> Callable[[], object] | None:
    """``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (prctl(2)), looked up in the parent: a child that outlives a
    killed cfgcheck is killed with it. None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return functools.partial(prctl, 1, signal.SIGKILL)


def cpu_seconds(timeout: float) -> int:
    """The CPU limit of a run of ``timeout`` seconds: Go's threads (GOMAXPROCS) share the CPU seconds."""
    return int(timeout * int(GO_ENV["GOMAXPROCS"])) + 1


def _limit(address_space: int | None, cpu: int | None, file_size: int | None,
           death: Callable[[], object] | None) -> None:
    """Between fork and exec (nothing imported here: another thread may hold the import lock): the
    child's resource limits, and death with its parent. A limit the platform refuses is left as it is
    (macOS has no RLIMIT_AS); the others still apply."""
    wanted = [(getattr(resource, "RLIMIT_AS", None), address_space), (resource.RLIMIT_CPU, cpu),
              (resource.RLIMIT_FSIZE, file_size), (resource.RLIMIT_NOFILE, OPEN_FILES)]
    for which, value in wanted:
        if which is None or value is None:
            continue
        try:
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass
    if death is not None:
        death()


def run_bounded(args: list[str], *, cwd: Path | str | None, env: dict[str, str], timeout: float, limit: int,
                input: bytes | None = None, sandboxed: bool = False) -> Outcome:
    """Run ``args`` in its own process group: killed (with the group) after ``timeout`` seconds, once it
    prints more than ``limit`` bytes, or when cfgcheck stops (an exception, SIGINT, SIGTERM). With
    ``sandboxed``, the renderer's limits apply (no network where possible, rlimits)."""
    return Running(args, cwd=cwd, env=env, timeout=timeout, limit=limit, input=input, sandboxed=sandboxed).finish()


class Running:
    """A process ``run_bounded`` started and has not read yet: its bounds run from its start, so a caller
    may start it early and ``finish`` it when it needs the answer (git's listing of the work tree, started
    while cfgcheck imports its modules); ``cancel`` kills a process whose answer is not needed."""

    def __init__(self, args: list[str], *, cwd: Path | str | None, env: dict[str, str], timeout: float, limit: int,
                 input: bytes | None = None, sandboxed: bool = False) -> None:
        import subprocess
        import tempfile
        import threading  # here: a run that starts no process starts no thread either

        preexec = None
        if sandboxed and resource is not None:
            args = [*network_prefix(), *args]
            preexec = functools.partial(_limit, ADDRESS_SPACE, cpu_seconds(timeout), limit, _death_signal())
        self.limit, self.sandboxed = limit, sandboxed
        self.errors = tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE if input is not None else
                                            subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.errors,
                                            preexec_fn=preexec, start_new_session=os.name == "posix")
        except BaseException:
            self.errors.close()
            raise
        self.expired = threading.Event()
        self.timer = threading.Timer(timeout, lambda: (self.expired.set(), _kill(self.process)))
        self.timer.start()
        if input is not None:
            threading.Thread(target=_feed, args=(self.process, input), daemon=True).start()

    def finish(self) -> Outcome:
        """What the process printed (up to ``limit``), once it ended; the process is never left running."""
        over = False
        try:
            output = _read(self.process, self.limit)
            over = len(output) > self.limit
            if over:
                _kill(self.process)
            code = self.process.wait()
        finally:
            self._end()
        self.errors.seek(0)
        stderr = self.errors.read(STDERR_BYTES)
        self.errors.close()
        stopped = "timeout" if self.expired.is_set() else "output" if over else \
            _limit_hit(code, stderr) if self.sandboxed else None
        return Outcome(output[:self.limit], stderr, code, stopped)

    def cancel(self) -> None:
        """The process ended unread (killed when still running)."""
        self._end()
        self.errors.close()

    def _end(self) -> None:
        """The process ended (killed when still running) and waited for; its output pipe closed."""
        self.timer.cancel()
        if self.process.poll() is None:
            _kill(self.process)
            self.process.wait()
        self.process.stdout.close()  # type: ignore[union-attr]


def _read(process: subprocess.Popen, limit: int) -> bytes:
    chunks, size = [], 0
    while size <= limit:
        chunk = process.stdout.read1(min(1 << 16, limit + 1 - size))  # type: ignore[union-attr]
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _feed(process: subprocess.Popen, data: bytes) -> None:
    try:
        process.stdin.write(data)  # type: ignore[union-attr]
        process.stdin.close()  # type: ignore[union-attr]
    except (BrokenPipeError, OSError, ValueError):
        pass


def _kill(process: subprocess.Popen) -> None:
    if process.returncode is not None:
        return  # reaped: its process group id may belong to another process by now
    try:
        if os.name == "posix":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _limit_hit(code: int, stderr: bytes) -> str | None:
    """Which resource limit ended a child: Go says "out of memory" (or cannot reserve its address
    space); SIGXCPU at the CPU limit; SIGXFSZ at the file-size limit (a Go program reports either signal
    itself)."""
    if code == -signal.SIGXCPU or b"SIGXCPU" in stderr:
        return "cpu"
    if code == -signal.SIGXFSZ or b"SIGXFSZ" in stderr:
        return "file size"
    if code != 0 and (b"out of memory" in stderr or b"cannot allocate memory" in stderr.lower()
                      or b"failed to reserve" in stderr):
        return "memory"
    return None


def describe(outcome: Outcome, what: str, timeout: float, limit: int) -> str:
    """One line on why ``what`` gave no output, naming the limit that stopped it."""
    if outcome.stopped == "timeout":
        return f"{what} took longer than {timeout:g} s (limit render timeout)"
    if outcome.stopped == "output":
        return f"{what} printed more than {limit:,} bytes (limit max-file-bytes)"
    if outcome.stopped == "memory":
        return f"{what} ran out of memory (limit {ADDRESS_SPACE // 2**20:,} MiB of address space)"
    if outcome.stopped == "cpu":
        return f"{what} used more CPU time than allowed (limit {cpu_seconds(timeout)} CPU seconds)"
    if outcome.stopped == "file size":
        return f"{what} wrote a file over {limit:,} bytes (limit max-file-bytes)"
    lines = outcome.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit {outcome.returncode}"]
    return f"{what} failed: {next((line for line in lines if line.startswith('Error')), lines[0])}"


# ---------------------------------------------------------------- one run: budget and folders


class RenderRun:
    """The renderings of one run: their time ``budget`` (seconds, all together), the ``timeout`` of each,
    the seconds ``spent``, and the run's private folder (made at first use, removed at the end). A plain
    class: every run makes one, and a dataclass costs its generated methods at import."""

    def __init__(self, budget: float | None = None, timeout: float = RENDER_TIMEOUT) -> None:
        self.budget, self.timeout = budget, timeout
        self.spent = 0.0
        self.root: Path | None = None

    def remaining(self, config: dict | None = None) -> float:
        budget = self.budget if self.budget is not None else float((config or {}).get("render-budget")
                                                                   or RENDER_BUDGET)
        return budget - self.spent

    def allowed(self, config: dict | None = None) -> float:
        """The seconds the next rendering may take (0 when the budget is spent)."""
        return max(0.0, min(self.timeout, self.remaining(config)))

    def budget_note(self, config: dict | None = None) -> str:
        budget = self.budget if self.budget is not None else float((config or {}).get("render-budget")
                                                                   or RENDER_BUDGET)
        return f"the rendering budget of {budget:g} s for this run is spent (limit render-budget)"

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.spent += time.monotonic() - started

    @contextlib.contextmanager
    def folder(self, prefix: str) -> Iterator[Path]:
        """A new private folder inside the run's folder, removed when the block ends."""
        import shutil
        import tempfile

        if self.root is None:
            clean_stale()
            self.root = Path(tempfile.mkdtemp(prefix=RUN_PREFIX))
            (self.root / MARKER).write_text(f"cfgcheck render folder of process {os.getpid()}\n", "utf-8")
        made = Path(tempfile.mkdtemp(prefix=prefix, dir=self.root))
        try:
            yield made
        finally:
            shutil.rmtree(made, ignore_errors=True)

    def close(self) -> None:
        if self.root is not None:
            import shutil

            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


_current: list[RenderRun] = []


@contextlib.contextmanager
def scope(budget: float | None = None, timeout: float | None = None) -> Iterator[RenderRun]:
    """The run's renderings: the outermost ``scope`` makes a :class:`RenderRun` (``budget`` and
    ``timeout`` injectable, else ``render-budget`` and :data:`RENDER_TIMEOUT`) and removes its folders
    when it ends, however it ends; an inner one shares it."""
    if _current:
        yield _current[-1]
        return
    run = RenderRun(budget, timeout if timeout is not None else RENDER_TIMEOUT)
    _current.append(run)
    try:
        yield run
    finally:
        _current.remove(run)
        run.close()


def clean_stale(now: float | None = None) -> list[Path]:
    """Remove run folders an earlier, killed run left in the temporary folder: only real folders named
    ``cfgcheck-render-*``, owned by this user, holding cfgcheck's marker, untouched for STALE_AFTER."""
    import shutil
    import tempfile

    removed = []
    now = time.time() if now is None else now
    base = Path(tempfile.gettempdir())
    try:
        entries = [entry for entry in os.scandir(base) if entry.name.startswith(RUN_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        try:
            folder = entry.stat(follow_symlinks=False)
            marker = os.lstat(os.path.join(entry.path, MARKER))
        except OSError:
            continue
        owned = hasattr(os, "getuid") and folder.st_uid == marker.st_uid == os.getuid()
        if stat.S_ISDIR(folder.st_mode) and stat.S_ISREG(marker.st_mode) and owned \
                and now - marker.st_mtime > STALE_AFTER:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


@contextlib.contextmanager
def session() -> Iterator[None]:
    """The command line's run: one :func:`scope`, and SIGTERM turned into an exit that runs every
    ``finally`` (children killed, folders removed); SIGINT already raises KeyboardInterrupt. The
    previous handlers are restored when it ends."""
    previous = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        signal.signal(signal.SIGTERM, _terminated)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread (an embedding's, a test's): only the main thread sets handlers
        previous.clear()
    try:
        with scope():
            yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _terminated(number: int, _frame: object) -> None:
    raise SystemExit(128 + number)
