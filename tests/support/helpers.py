"""Shared test helpers: lint text or folders in a temporary repository, find ../shared."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from cfgcheck.config import Config, load
from cfgcheck.lint import lint

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
FIXTURES = REPO / "tests" / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*((?:CFG\d{3}[ ,]*)+)")


def shared(*parts: str) -> Path:
    """A path under ../shared, skipping the test when it is absent (a user's clone has no ../shared)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: ../shared is only beside the project's own checkout")
    return path


def lint_text(tmp_path: Path, text: str, name: str = "config.yaml", config: dict | None = None, **kwargs):
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return lint([target], Config(tmp_path, config or {}), **kwargs)


def lint_paths(*paths: Path, root: Path | None = None, **kwargs):
    root = root or (paths[0] if paths[0].is_dir() else paths[0].parent)
    return lint(list(paths), load(root), **kwargs)


def codes(result, include_suppressed: bool = False) -> list[str]:
    return [f.code for f in result.findings if include_suppressed or f.suppressed is None]


def expected_markers(path: Path) -> set[tuple[str, int]]:
    """(code, line) pairs marked in a fixture with a trailing ``# expect: CFG101`` comment."""
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found |= {(code, number) for code in re.findall(r"CFG\d{3}", match.group(1))}
    return found


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                         env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
                              "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin"})
    return out.stdout


# where make_repo keeps the repositories it built in this test session (set by tests/conftest.py)
TEMPLATES: dict[str, Path] = {}
_BUILT: dict[tuple, Path] = {}


def make_repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git repository under ``tmp_path/repo`` with ``files`` committed on ``main``. The repository is
    built once per test session for each set of files (a template) and copied for each test: a copy is
    the same repository, commit ids included, and the test owns it."""
    repo = tmp_path / "repo"
    key = tuple(sorted(files.items()))
    template = _BUILT.get(key)
    if template is None:
        root = TEMPLATES.get("root")
        template = (root / f"repo-{len(_BUILT)}") if root is not None else repo
        template.mkdir()
        git(template, "init", "-q", "-b", "main")
        write(template, files)
        git(template, "add", "-A")
        git(template, "commit", "-qm", "base")
        if root is None:  # outside a test session: no template, the repository itself
            return repo
        _BUILT[key] = template
    shutil.copytree(template, repo, symlinks=True)
    return repo


def write(repo: Path, files: dict[str, str | None]) -> None:
    """Write (or, for None, delete) files under ``repo``."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def lint_fixture(path: Path, tmp_path: Path, **kwargs):
    """Lint a fixture with its ``# expect:`` markers blanked out (so they are not read as comments)."""
    text = EXPECT.sub("", path.read_text(encoding="utf-8"))
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return lint_text(tmp_path, text, name=path.name, **kwargs)


def without_helm(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as if helm were not installed: none on PATH and none beside the interpreter (where
    the ``helm`` extra puts it in a venv)."""
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("sys.executable", "/nonexistent/python3")


@contextlib.contextmanager
def recording_server(body: bytes) -> Iterator[tuple[str, list[str]]]:
    """An HTTP server on 127.0.0.1 answering every GET with ``body``: (its URL, the paths asked for), so a
    test proves that nothing fetched what a file names."""
    import http.server
    import threading

    asked: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            asked.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        server.shutdown()
