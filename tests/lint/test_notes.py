"""The notes channel: one per run, each note said once in it, a run inside another saying into the outer one."""

from __future__ import annotations

from cfgcheck import notes


def test_a_run_says_each_note_once_and_collects_them(capsys) -> None:
    with notes.run() as channel:
        notes.note("chart x not rendered")
        notes.note("chart x not rendered")
        notes.note("tag \x1b[2Jlatest")
    assert channel.said == ["chart x not rendered", "tag \x1b[2Jlatest"]
    assert capsys.readouterr().err == "cfgcheck: note: chart x not rendered\ncfgcheck: note: tag \\x1b[2Jlatest\n"


def test_a_run_inside_a_run_says_into_the_outer_one_and_runs_do_not_share_what_they_said() -> None:
    heard: list[str] = []

    @notes.per_run
    def base_and_head() -> None:
        notes.note("helm not found")

    with notes.run(notes.Notes(heard.append)):
        base_and_head()
        base_and_head()
    with notes.run(notes.Notes(heard.append)):
        base_and_head()
    assert heard == ["helm not found", "helm not found"]  # once per run, the second run a new channel


def test_a_note_outside_a_run_is_written_at_once(capsys) -> None:
    notes.note("a")
    notes.note("a")
    assert capsys.readouterr().err == "cfgcheck: note: a\ncfgcheck: note: a\n"
