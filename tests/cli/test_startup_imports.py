"""Issue 17 item 16: start-up imports only what the command needs. Guards the property, not a timing:
``cfgcheck --version`` and ``--help`` import neither the lint pipeline nor YAML nor the configuration
code, and no command imports the heavy optional libraries before it needs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("jsonschema", "jinja2", "github", "ruamel", "rich")
PIPELINE = ("yaml", "cfgcheck.config", "cfgcheck.yamlio", "cfgcheck.lint", "cfgcheck.adapters", "cfgcheck.rules",
            "cfgcheck.capacity", "cfgcheck.engines")


def _modules_after(argv: list[str], cwd: Path) -> list[str]:
    """Every module imported by one ``cfgcheck ARGV`` run in a fresh interpreter."""
    probe = (f"import sys, json\nfrom cfgcheck.cli import main\nsys.argv = ['cfgcheck'] + {argv!r}\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "sys.stdout.write('\\n' + json.dumps(sorted(sys.modules)))")
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")}
    out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted({name for name in names for module in modules if module == name or module.startswith(name + ".")})


def test_version_and_help_import_no_pipeline(tmp_path: Path) -> None:
    assert _loaded(_modules_after(["--version"], tmp_path), HEAVY + PIPELINE) == []
    for argv in (["--help"], ["lint", "--help"]):  # typer draws its help with rich when it is installed
        modules = _modules_after(argv, tmp_path)
        assert _loaded(modules, tuple(name for name in HEAVY if name != "rich") + PIPELINE) == [], argv


def test_linting_a_trivial_file_imports_no_heavy_library(tmp_path: Path) -> None:
    (tmp_path / "values.yaml").write_text("replicaCount: 1\nimage:\n  repository: nginx\n")
    modules = _modules_after(["lint", "values.yaml"], tmp_path)
    assert "cfgcheck.lint" in modules  # the probe did lint
    assert _loaded(modules, HEAVY) == []
