"""`lint`'s options are declared once (``lint_command.LINT_OPTIONS``): typer's command is built from the
table and the fast path reads its flags from it, so a new option is one table entry."""

from __future__ import annotations

import typer

from cfgcheck import cli
from cfgcheck.lint_command import FLAG_OPTIONS, LINT_OPTIONS, fast_lint_arguments, lint_defaults


def _typer_options() -> dict[str, tuple]:
    command = typer.main.get_command(cli.app).commands["lint"]
    return {param.name: (tuple(param.opts) + tuple(param.secondary_opts), param.default, param.help)
            for param in command.params if param.param_type_name == "option"}


def test_the_typer_command_is_the_table() -> None:
    options = _typer_options()
    assert list(options) == [option.parameter for option in LINT_OPTIONS]
    for option in LINT_OPTIONS:
        names, default, help_text = options[option.parameter]
        assert set(names) == {name for declared in option.declarations for name in declared.split("/")}
        assert (default, help_text) == (option.default, option.help)


def test_every_valueless_option_of_the_table_takes_the_fast_path() -> None:
    valueless = {name for option in LINT_OPTIONS if option.takes in ("flag", "switch")
                 for declared in option.declarations for name in declared.split("/")}
    assert set(FLAG_OPTIONS) == valueless
    for name, (parameter, value) in FLAG_OPTIONS.items():
        assert fast_lint_arguments(["lint", name]) == {**lint_defaults(), parameter: value}
