"""The user's configuration: ``.cfgcheck.yaml`` at the repository root or ``[tool.cfgcheck]``."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .yamlio import YamlError, load_data


class ConfigError(Exception):
    """A configuration the user must fix; the message is one line."""


@dataclass
class Config:
    root: Path
    data: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    @property
    def rule_settings(self) -> dict[str, dict[str, Any]]:
        return self.data.get("rules", {})

    @property
    def limits(self) -> dict[str, int]:
        return self.data.get("limits", {})

    def as_dict(self) -> dict[str, Any]:
        """The config with paths made absolute, as rules and capacity read it."""
        data = dict(self.data)
        if "model_configs" in data:
            data["model_configs"] = str((self.root / data["model_configs"]).resolve())
        data["root"] = str(self.root)
        return data


def repo_root(start: Path) -> Path:
    """The git work tree containing ``start``, else ``start`` itself (a folder) or its parent."""
    folder = start if start.is_dir() else start.parent
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=folder, capture_output=True,
                             text=True, check=False)
    except OSError:
        return folder.resolve()
    if out.returncode == 0 and out.stdout.strip():
        return Path(out.stdout.strip()).resolve()
    return folder.resolve()


def _schema() -> dict[str, Any]:
    return json.loads(resources.files("cfgcheck.data").joinpath("config.schema.json").read_text("utf-8"))


def validate(data: Any, where: str) -> dict[str, Any]:
    import jsonschema

    if data is None:
        return {}
    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ConfigError(f"{where}: invalid configuration at '{key}': {error.message}")
    return data


def _read_yaml(path: Path) -> Any:
    try:
        return load_data(path) or {}
    except YamlError as exc:
        raise ConfigError(f"configuration {exc.message}") from None


def _read_pyproject(path: Path) -> Any:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return None
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle).get("tool", {}).get("cfgcheck")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read [tool.cfgcheck]: {exc}") from None


def load(root: Path, explicit: Path | None = None) -> Config:
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"configuration file not found: {explicit}")
        data = _read_pyproject(explicit) if explicit.suffix == ".toml" else _read_yaml(explicit)
        return Config(root, validate(data, str(explicit)), explicit)
    for name in (".cfgcheck.yaml", ".cfgcheck.yml"):
        candidate = root / name
        if candidate.is_file():
            return Config(root, validate(_read_yaml(candidate), name), candidate)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        data = _read_pyproject(pyproject)
        if data is not None:
            return Config(root, validate(data, "pyproject.toml [tool.cfgcheck]"), pyproject)
    return Config(root)
