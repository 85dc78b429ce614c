"""Flag value validators: what each engine ``type=`` callable accepts.

``scripts/build_catalogs.py`` proves each class equal to the engine's own ``type=`` callable on a set of
samples before it assigns the class to an option; ``Catalog.check_value`` converts a written value with
the option's class. Sizes go through the settings vocabulary's parsers (one per engine).
"""

from __future__ import annotations

import json
import re

from ..settings import sglang_size, vllm_size

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any


class Invalid:
    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Invalid({self.reason!r})"


def _hri(text: str) -> Any:
    try:
        return vllm_size(text)
    except ValueError as refused:
        return Invalid(str(refused))


def _si_iec(text: str) -> Any:
    try:
        return sglang_size(text)
    except ValueError as refused:
        return Invalid(str(refused))


def _hri_auto(text: str) -> Any:
    value = text.strip()
    if value == "-1" or value.lower() == "auto":
        return -1
    return _hri(text)


def _int(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return Invalid("expects an integer")


def _float(text: str) -> Any:
    try:
        return float(text)
    except ValueError:
        return Invalid("expects a number")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # json's decoder recurses: deep nesting is a RecursionError
        return Invalid("expects JSON")


def _dict_or_str(text: str) -> Any:
    if not re.match(r"(?s)^\s*{.*}\s*$", text):
        return str(text)
    return _json(text)


def _json_object(text: str) -> Any:
    # engines validate config objects further (field names, human-readable numbers): only the
    # shape is checked here, so a value that the engine could accept is never refused
    if not re.match(r"(?s)^\s*{.*}\s*$", text):
        return Invalid("expects a JSON object")
    return text


def _lower_snake(text: str) -> Any:
    return text.lower().replace("-", "_")


def _python_bool(text: str) -> Any:
    # ``type=bool``: every non-empty string is True (``--x false`` sets True)
    return bool(text)


def _str(text: str) -> Any:
    return text


def _lower(text: str) -> Any:
    return text.lower()


def _bool_str(text: str) -> Any:
    low = text.lower()
    if low in ("true", "1", "yes", "y", "t", "on"):
        return True
    if low in ("false", "0", "no", "n", "f", "off"):
        return False
    return Invalid("expects true or false")


def _bool_tf(text: str) -> Any:
    low = text.lower()
    if low == "true":
        return True
    if low == "false":
        return False
    return Invalid("expects true or false")


_CONVERTERS = {
    "int": _int,
    "float": _float,
    "human-readable-int": _hri,
    "human-readable-int-or-auto": _hri_auto,
    "si-iec-int": _si_iec,
    "json": _json,
    "dict-or-str": _dict_or_str,
    "bool": _bool_str,
    "bool-true-false": _bool_tf,
    "str": _str,
    "lower-str": _lower,
    "lower-snake": _lower_snake,
    "json-object": _json_object,
    "python-bool": _python_bool,
}
VALUE_FREE = frozenset({"json-object"})  # the converted value is not comparable with the engine's
TYPE_CLASSES = tuple(_CONVERTERS)


def convert(cls: str | None, text: str, optional: bool = False) -> Any:
    """Convert ``text`` as the engine's ``type=`` callable of class ``cls`` would; Invalid if refused."""
    if optional and text in ("", "None"):
        return None
    func = _CONVERTERS.get(cls or "str")
    if func is None:
        return text  # an unclassified callable: not checked
    return func(text)
