"""The two signatures of a rule's ``check``: ``ModelCheck`` (one served model) or, for a rule that declares
``SCOPE = "run"``, ``RunCheck`` (every served model at once). typing Protocols, so a module of their own: a
run imports it only when a rule or a plugin asks ``cfgcheck.api`` for one of them (cfgcheck's own modules
name them under ``if TYPE_CHECKING:``), and a one-file lint imports no ``typing``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Protocol

if TYPE_CHECKING:
    from .context import RuleContext
    from .model import Finding, ServedModel


class ModelCheck(Protocol):
    """``check(model, ctx)``: the findings of one served model."""

    def __call__(self, model: ServedModel, ctx: RuleContext, /) -> Iterable[Finding]: ...


class RunCheck(Protocol):
    """``check(models, ctx)`` of a rule with ``SCOPE = "run"``: the findings of every served model at once,
    each naming its served model (``Finding.model``, ``Finding.model_identity``)."""

    def __call__(self, models: list[ServedModel], ctx: RuleContext, /) -> Iterable[Finding]: ...
