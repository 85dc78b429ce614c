"""The objects rules reason about: located settings of served models, and findings.

Adapters turn YAML documents into ``ServedModel`` objects; rules receive them and yield ``Finding``
objects; the lint engine stamps code and severity. Nothing here knows about YAML or files.
"""

from __future__ import annotations

from collections import namedtuple

from . import lazy
from .records import Record

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any, Callable
    from .served import (ArgToken, Directive, Download, EngineSource, GroupPod, Mount, PodFacts, Port, Probe,  # noqa: F401
                         RepositoryModel, ServedModel, Service, Setting, Volume)

# A Location is compared and hashed by value (the same span reached twice: rayserve.py, port_mismatch.py,
# propose/upgrade.py) and never changed: a named tuple, which costs a fifth of a frozen dataclass to create
# and to build (collections.namedtuple: typing.NamedTuple imports typing and builds one twice as slowly).
# The other classes are compared by identity, as every use does: Edit, Fix and Finding are
# records (records.Record), whose __init__ costs the import no exec.


class Location(namedtuple("Location", ("path", "line", "column", "end_line", "end_column"), defaults=(None, None))):
    """A span in a source file: repo-relative POSIX path, 1-based line and column, inclusive start."""

    __slots__ = ()
    path: str  # the fields' types, for type checkers (a value here would hide the field)
    line: int
    column: int
    end_line: int | None
    end_column: int | None

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column)


class Edit(Record):
    """Replace the exact source text ``old`` found at ``location`` (a single-line span) with ``new``.

    Edits are textual so that every byte outside the span is kept: comments, quoting, indentation.
    """

    __slots__ = ("location", "old", "new")

    def __init__(self, location: Location, old: str, new: str) -> None:
        self.location = location
        self.old = old
        self.new = new


class Fix(Record):
    """A mechanical remediation: data that ``cfgcheck fix`` and ``propose --fix`` apply."""

    __slots__ = ("description", "edits")

    def __init__(self, description: str, edits: tuple[Edit, ...]) -> None:
        self.description = description
        self.edits = edits


class Comments(tuple):
    """``(line, text)`` of every comment of a document (of a script: the file), in line order.

    One object is shared by every served model of the document, not a copy each: a script that starts
    thousands of engines, or a pod of many containers, holds its comments once. What capacity and the
    rules look for in them is worked out once for all those models (``derived``).
    """

    def derived(self, name: str, find: Callable[[Comments], Any]) -> Any:
        """``find(self)``, computed once per object and ``name``."""
        if name not in self.__dict__:
            self.__dict__[name] = find(self)
        return self.__dict__[name]


def derived(comments, name: str, find: Callable[[Any], Any]) -> Any:
    """``comments.derived(name, find)`` for shared ``Comments``; ``find(comments)`` for any other sequence."""
    return comments.derived(name, find) if isinstance(comments, Comments) else find(comments or ())


class Finding(Record):
    """A located problem. Rules fill message, location and optional parts; the engine stamps the rest."""

    __slots__ = ("message", "location", "remediation", "fix", "setting", "related", "model", "model_identity", "code",
                 "rule", "severity", "suppressed", "introduced")

    def __init__(self, message: str, location: Location, remediation: str | None = None, fix: Fix | None = None,
                 setting: str | None = None, related: tuple[Location, ...] = (), model: str | None = None,
                 model_identity: str | None = None, code: str = "", rule: str = "", severity: str = "",
                 suppressed: str | None = None, introduced: bool | None = None) -> None:
        self.message = message
        self.location = location
        self.remediation = remediation
        self.fix = fix
        self.setting = setting  # the canonical setting or flag the finding is about (for fingerprints)
        self.related = related
        self.model = model
        self.model_identity = model_identity
        self.code = code
        self.rule = rule
        self.severity = severity
        self.suppressed = suppressed  # the reason, when a suppression applies
        self.introduced = introduced  # diff mode: True when the change introduced it

    def __repr__(self) -> str:  # as the dataclass wrote it
        return (f"{type(self).__qualname__}(message={self.message!r}, location={self.location!r}, "
                f"remediation={self.remediation!r}, fix={self.fix!r}, setting={self.setting!r}, "
                f"related={self.related!r}, model={self.model!r}, model_identity={self.model_identity!r}, "
                f"code={self.code!r}, rule={self.rule!r}, severity={self.severity!r}, "
                f"suppressed={self.suppressed!r}, introduced={self.introduced!r})")

    def fingerprint(self) -> str:
        """Identity of a finding that survives line shifts: rule, served model and setting."""
        anchor = self.setting or self.message
        return f"{self.code}|{self.model_identity or self.location.path}|{anchor}"


# a shell parameter ($TP, ${TP}, and the positional $1, $@, $*), a command or Kubernetes $(...)
# substitution, or a Go template; compiled on first use, as most values hold neither sign
_VARIABLE = lazy.Pattern(r"\$[({A-Za-z_0-9@*]|\{\{")


def unresolved(value: Any) -> bool:
    """A value still holding a shell or Kubernetes variable or a template (``$TP``, ``$2``, ``$(LEN)``,
    ``{{ .Values.x }}``): what the engine receives is not known."""
    return isinstance(value, str) and ("$" in value or "{{" in value) and bool(_VARIABLE.search(value))


# The records of a served model (``served.py``), named here as every adapter and rule imports them: imported
# the first time one is asked for, so a run whose files hold no served model does not create their classes.
SERVED = frozenset(("Setting", "ArgToken", "Directive", "Probe", "Volume", "Mount", "Port", "GroupPod", "Download",
                    "RepositoryModel", "EngineSource", "Service", "PodFacts", "ServedModel"))


def __getattr__(name: str) -> Any:
    if name in SERVED:
        from . import served

        return getattr(served, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SEVERITIES = ("error", "warning", "note")
# ServedModel.kind of a container of an engine image that starts no engine (a shell kept up for ``docker exec``, a Ray
# node): a runtime template that only the rules that check an image look at (adapters/launch/engine_containers.py)
CONTAINER_KIND = "container"
SEVERITY_RANK = {"note": 1, "warning": 2, "error": 3}
