"""The user's configuration: ``.cfgcheck.yaml`` at the repository root or ``[tool.cfgcheck]``.

Every file is read through :func:`cfgcheck.paths.inside_repo` (a ``.cfgcheck.yaml`` that links out of
the repository is refused, never read), and ``review`` reads the base commit's configuration from git
(:func:`load_at_commit`), so a pull request cannot switch off its own check. Errors name the key path
and what was expected, in words; a value is quoted only when it is short and printable
(docs/SECURITY.md: a file reached by mistake must not end up in a public job log).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from .data import read_json
from .errors import ConfigError
from .model import SEVERITY_RANK
from .git import toplevel
from .paths import UnsafePath, blob_at, git_may_find_repository, inside_repo, repo_relative
from .registry import DEFAULT_PROFILE, by_code, enabled_rules, resolve_codes, rule_options
from .yamlio import YamlError, data_of

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Iterable

NAMES = (".cfgcheck.yaml", ".cfgcheck.yml")
PYPROJECT = "pyproject.toml"
MAX_CONFIG_BYTES = 1024 * 1024
_TYPES = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "a whole number",
          "number": "a number", "boolean": "true or false", "null": "nothing"}
_PLURALS = {"object": "mappings", "array": "lists", "string": "strings", "integer": "whole numbers",
            "number": "numbers", "boolean": "true/false values"}


class Config:
    """The run's configuration: the repository root, the validated settings, and the file they were read from."""

    def __init__(self, root: Path, data: dict[str, Any] | None = None, source: Path | None = None) -> None:
        self.root = root
        self.data = {} if data is None else data
        self.source = source

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    @property
    def profile(self) -> str:
        return self.data.get("profile", DEFAULT_PROFILE)

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
            data["model_configs"] = str(_inside(self.root, data["model_configs"], "model_configs"))
        data["root"] = str(self.root)
        return data


def repo_root(start: Path) -> Path:
    """The git work tree containing ``start``, else ``start`` itself (a folder) or its parent."""
    folder = start if start.is_dir() else start.parent
    if not git_may_find_repository(folder):
        return folder.resolve()
    return toplevel(folder) or folder.resolve()


def locate(paths: list[Path]) -> Path:
    """The repository root of the first path given (the current folder when none is)."""
    start = paths[0] if paths else Path.cwd()
    if not start.exists():
        raise ConfigError(f"path does not exist: {start}")
    return repo_root(start.absolute())  # not resolve(): a symlink must not move the root


def load_for(paths: list[Path], explicit: Path | None = None) -> Config:
    """The configuration of a run over ``paths``: the one of the repository that holds the first."""
    return load(locate(paths), explicit)


def _inside(root: Path, path: str | os.PathLike[str], what: str, links: bool = True) -> Path:
    try:
        return inside_repo(root, path, what=what, links=links)
    except UnsafePath as exc:
        raise ConfigError(str(exc)) from None


# ---------------------------------------------------------------- validation


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    return read_json("config.schema.json")


def validate(data: Any, where: str) -> dict[str, Any]:
    """``data`` checked against the schema and the rules it names; ConfigError with one line."""
    if data is None:
        return {}
    _check(_schema(), data, where, [])
    _check_rules(data, where)
    return data


def _check(schema: dict[str, Any], data: Any, where: str, prefix: list[Any]) -> None:
    known = _validation_key(schema, data)
    if known is not None and (_validated_dir() / known).is_file():
        return  # this exact data passed this exact schema before: jsonschema (~90 ms to import) is not needed
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        raise ConfigError(f"{where}: {_message(errors[0], prefix)}")
    if known is not None:
        _remember_valid(known)


def _validated_dir() -> Path:
    """Where a configuration that passed validation is remembered, by digest only (start-up: jsonschema
    costs about 90 ms to import)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cfgcheck" / "valid-config"


def _validation_key(schema: dict[str, Any], data: Any) -> str | None:
    """SHA-256 of the schema and of ``repr(data)`` (which tells 1, "1", 1.0 and True apart); None when
    the data cannot be described exactly, so it is always validated."""
    import hashlib

    try:
        text = json.dumps(schema, sort_keys=True) + "\0" + repr(data)
    except (TypeError, ValueError, RecursionError):
        return None
    if " object at 0x" in text:  # a repr that names an address says nothing about the value
        return None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _remember_valid(key: str) -> None:
    """Best effort: a cache that cannot be written only costs the next run the validator's import."""
    try:
        folder = _validated_dir()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / key).touch()
    except OSError:
        pass


def _message(error, prefix: list[Any]) -> str:
    """A schema error in words: the key path, what is expected, and (when short) what was found."""
    at = key_path(prefix + list(error.absolute_path))
    kind, value, schema = error.validator, error.instance, error.schema
    expected = schema.get("x-expected") if isinstance(schema, dict) else None
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        unknown = next(key for key in value if key not in allowed)
        from difflib import get_close_matches  # only a configuration with an unknown key needs it

        close = get_close_matches(str(unknown), allowed, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"{at}: unknown key {excerpt(unknown)}{hint}; allowed: {', '.join(allowed) or 'none'}"
    if kind == "required":
        missing = next(key for key in error.validator_value if key not in value)
        return f"{at}: missing key '{missing}'"
    if "propertyNames" in error.relative_schema_path:
        return f"{at}: key {excerpt(value)} is not valid; expected {expected or 'a different name'}"
    if kind == "enum":
        return f"{at}: expected one of {', '.join(map(str, error.validator_value))}; got {excerpt(value)}"
    if kind == "type":
        wanted = expected or _TYPES.get(str(error.validator_value), str(error.validator_value))
        return f"{at}: expected {wanted}; got {excerpt(value)}"
    if kind in ("minimum", "maximum"):
        bound = "at least" if kind == "minimum" else "at most"
        return f"{at}: must be {bound} {error.validator_value}; got {excerpt(value)}"
    if kind in ("minItems", "minProperties", "minLength"):
        return f"{at}: must not be empty"
    return f"{at}: expected {expected or 'a different value'}; got {excerpt(value)}"


def key_path(parts: Iterable[Any]) -> str:
    """``rules.CFG204.severity``, ``select[1]``; long or unprintable keys described, not quoted."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            part = str(part)
            shown = part if len(part) <= 40 and part.isprintable() else f"<key of {len(part)} characters>"
            text += f".{shown}" if text else shown
    return text or "(top level)"


def excerpt(value: Any) -> str:
    """A value as an error may show it: short printable strings and numbers quoted, the rest described."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        digits = len(str(abs(value))) if abs(value) < 10 ** 40 else None
        return str(value) if digits is not None else "a number of more than 40 digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        if len(value) <= 24 and value.isprintable():
            return repr(value)
        return f"a string of {len(value)} characters"
    if value is None:
        return "nothing (null)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


def _option_schema(option) -> dict[str, Any]:
    """The schema of a rule option, from the type the rule declares (:class:`cfgcheck.registry.Option`)."""
    if option.type is list:
        return {"type": "array", "items": {"type": "string"}, "x-expected": f"a list of {_PLURALS['string']}"}
    return {"type": {bool: "boolean", int: "integer", float: "number", str: "string"}[option.type]}


def _codes(value: str, at: str, where: str) -> set[str]:
    try:
        return resolve_codes([value])
    except ConfigError:
        raise ConfigError(f"{where}: {at}: unknown rule {excerpt(value)}; expected a rule code (CFG204), "
                          "a code prefix (CFG2) or a rule name (see `cfgcheck rules`)") from None


def _check_rules(data: dict[str, Any], where: str) -> None:
    """select/ignore/rules name rules as ``--select`` does; each rule's settings are its own options."""
    for key in ("select", "ignore"):
        for index, value in enumerate(data.get(key) or []):
            _codes(value, f"{key}[{index}]", where)
    if not data.get("rules"):
        return
    rules = by_code()
    for key, settings in data["rules"].items():
        properties: dict[str, Any] = {"severity": _schema()["$defs"]["severity"]}
        for code in sorted(_codes(key, f"rules.{key}", where)):
            for name, option in rules[code].options.items():
                properties.setdefault(name, _option_schema(option))
        schema = {"type": "object", "additionalProperties": False, "properties": properties}
        _check(schema, settings, where, ["rules", key])


# ---------------------------------------------------------------- loading


def _parse(raw: bytes, name: str, where: str) -> Any:
    """The configuration in ``raw``: YAML, or the ``[tool.cfgcheck]`` table of a TOML file."""
    if not name.endswith(".toml"):
        try:
            return data_of(raw, where) or {}
        except YamlError as exc:
            raise ConfigError(f"configuration {exc.message}") from None
    tomllib = _toml()
    try:
        table = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{where}: invalid TOML: {_first_line(exc)}") from None
    except RecursionError:  # tomllib's parser recurses into nested arrays and tables
        raise ConfigError(f"{where}: invalid TOML: nested too deeply") from None
    tool = table.get("tool")
    return tool.get("cfgcheck") if isinstance(tool, dict) else None


def _toml():
    try:
        import tomllib
    except ImportError:  # Python 3.10: the same parser, published as tomli
        import tomli as tomllib
    return tomllib


def _first_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:120]


def _check_paths(root: Path, data: dict[str, Any], where: str) -> None:
    """Paths the configuration names must stay in the repository (checked before anything is read)."""
    try:
        for key in ("model_configs", "adr_dir"):
            if isinstance(data.get(key), str):
                inside_repo(root, data[key], what=key)
        for index, entry in enumerate(data.get("values") or []):
            for pattern in entry.get("files", []):
                repo_relative(root, pattern, what=f"values[{index}].files pattern")
    except UnsafePath as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _config(root: Path, raw: bytes, name: str, where: str, source: Path | None) -> Config | None:
    data = _parse(raw, name, where)
    if data is None:  # a pyproject.toml without [tool.cfgcheck]
        return None
    data = validate(data, where)
    _check_paths(root, data, where)
    return Config(root, data, source)


def _read(root: Path, path: str | os.PathLike[str]) -> tuple[Path, bytes] | None:
    """The resolved file and its bytes; None when there is no such file; refused when it leaves ``root``."""
    real = _inside(root, path, "configuration file")
    if not real.is_file():
        return None
    try:
        if real.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES:,} bytes; not a configuration file")
        return real, real.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read configuration file {str(path)!r}: {exc.strerror or exc}") from None


def load(root: Path, explicit: Path | None = None) -> Config:
    """The work tree's configuration (``--config FILE``, else .cfgcheck.yaml, else [tool.cfgcheck])."""
    if explicit is not None:
        read = _read(root, os.path.abspath(explicit))
        if read is None:
            raise ConfigError(f"configuration file not found: {explicit}")
        path, raw = read
        return _config(root, raw, path.name, str(explicit), path) or Config(root, {}, path)
    for name in (*NAMES, PYPROJECT):
        read = _read(root, name) if (root / name).is_file() or (root / name).is_symlink() else None
        if read is not None:
            where = f"{name} [tool.cfgcheck]" if name == PYPROJECT else name
            found = _config(root, read[1], name, where, read[0])
            if found is not None:
                return found
    return Config(root)


def relative_config(root: Path, path: Path) -> Path:
    """A ``--config`` path (absolute or from the current folder) relative to ``root``; refused outside it."""
    try:
        return Path(repo_relative(root, os.path.abspath(path), what="configuration file"))
    except UnsafePath as exc:
        raise ConfigError(str(exc)) from None


def load_at_commit(root: Path, commit: str, explicit: Path | None = None) -> Config:
    """The configuration as ``commit`` has it, read from git (``review``: the base, not the pull request)."""
    names = [relative_config(root, explicit).as_posix()] if explicit else [*NAMES, PYPROJECT]
    try:
        for name in names:
            where = f"{name} at {commit[:12]}" + (" [tool.cfgcheck]" if name.endswith(".toml") else "")
            raw = blob_at(root, commit, name, what="configuration file", limit=MAX_CONFIG_BYTES)
            if raw is not None:
                found = _config(root, raw, name, where, root / name)
                if found is not None:
                    return found
    except UnsafePath as exc:
        raise ConfigError(str(exc)) from None
    return Config(root)


# ---------------------------------------------------------------- review: base against head


def reviewed(root: Path, commit: str, explicit: Path | None = None) -> tuple[Config, list[str]]:
    """The configuration a review runs with (``commit``'s), and what the work tree changes in it."""
    base = load_at_commit(root, commit, explicit)
    try:
        head = load(root, explicit)
    except ConfigError as exc:
        return base, [f"the pull request's configuration cannot be used ({exc}); it would fail after merge"]
    return base, changes(base, head)


def changes(base: Config, head: Config) -> list[str]:
    """What ``head`` changes in cfgcheck's own behaviour, one line each: rules switched off or on,
    severities lowered or raised, options, excluded paths, the failure threshold, other settings."""
    if base.data == head.data:
        return []
    before = {rule.code: rule for rule in enabled_rules(base, None, None)}
    after = {rule.code: rule for rule in enabled_rules(head, None, None)}
    lines = _listed("rules switched off", [f"{c} {r.name}" for c, r in before.items() if c not in after])
    lines += _listed("rules switched on", [f"{c} {r.name}" for c, r in after.items() if c not in before])
    lowered, raised, options = [], [], []
    for code in sorted(set(before) & set(after)):
        rule = after[code]
        (old_severity, old_options), (new_severity, new_options) = rule_options(rule, base), rule_options(rule, head)
        if old_severity != new_severity:
            bucket = lowered if SEVERITY_RANK[new_severity] < SEVERITY_RANK[old_severity] else raised
            bucket.append(f"{code} {rule.name} {old_severity} → {new_severity}")
        options += [f"{code} {key} {excerpt(old_options.get(key))} → {excerpt(new_options.get(key))}"
                    for key in sorted(set(old_options) | set(new_options))
                    if old_options.get(key) != new_options.get(key)]
    lines += _listed("severity lowered", lowered) + _listed("severity raised", raised)
    lines += _listed("rule options changed", options)
    old_exclude, new_exclude = base.get("exclude") or [], head.get("exclude") or []
    lines += _listed("paths excluded", [excerpt(p) for p in new_exclude if p not in old_exclude])
    lines += _listed("exclusions removed", [excerpt(p) for p in old_exclude if p not in new_exclude])
    for key, default in (("fail-on", "error"), ("profile", DEFAULT_PROFILE)):
        if base.get(key, default) != head.get(key, default):
            lines.append(f"{key}: {base.get(key, default)} → {head.get(key, default)}")
    handled = {"select", "ignore", "rules", "exclude", "fail-on", "profile"}
    lines += _listed("other settings changed", sorted(key for key in set(base.data) | set(head.data)
                                                      if key not in handled and base.get(key) != head.get(key)))
    return lines


def _listed(title: str, items: list[str]) -> list[str]:
    return [f"{title}: {', '.join(items)}"] if items else []
