"""Hostile configuration and templates (docs/SECURITY.md, "Promises" and its table of findings).

Each attack is reproduced as a pull request or a checkout would carry it: a real git repository, a
real symlink, the real ``review`` run against the fake GitHub server. docs/SECURITY.md names these tests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cfgcheck import templating as render_module
from cfgcheck.capacity import lookup_architecture
from cfgcheck.config import Config, ConfigError, changes, load, load_at_commit, validate
from cfgcheck.lint import rule_options
from cfgcheck.paths import UnsafePath, blob_at, inside_repo, repo_relative
from cfgcheck.registry import find
from cfgcheck.templating import Overrides, render
from helpers import REPO, git
from tests.github.test_review import PullRequest

SUMMARY = ".cfgcheck/templates/summary_comment.md.j2"
SECRET = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB-TOPSECRET\n"


def payload(marker: Path) -> str:
    """A template that runs a command through jinja's globals (the first finding of the security review)."""
    return ("{{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}"
            "{{ marker }} PWNED\n")


class Link(str):
    """A file to commit as a symlink to this target."""


class Pull(PullRequest):
    """A PullRequest whose base and head commits also carry ``base_files`` / ``head_files``."""

    def __init__(self, gh, tmp_path, monkeypatch, base_files=None, head_files=None, **kwargs):
        self.extra = {"base": base_files or {}, "change": head_files or {}}
        super().__init__(gh, tmp_path, monkeypatch, **kwargs)

    def _commit(self, text: str, message: str) -> None:
        for rel, content in self.extra.get(message, {}).items():
            write(self.repo, rel, content)
        super()._commit(text, message)

    def summary(self) -> str:
        (comment,) = [c for c in self.issue_comments() if c.user == self.gh.bot_login]
        return comment.body


def write(root: Path, rel: str, content: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    if isinstance(content, Link):
        path.symlink_to(content)
    else:
        path.write_text(content, encoding="utf-8")


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "id_ed25519"
    path.parent.mkdir()
    path.write_text(SECRET, encoding="utf-8")
    return path


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cfgcheck", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, content in files.items():
        write(root, rel, content)
    return root


def commit_all(root: Path) -> str:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return git(root, "rev-parse", "HEAD").strip()


# ---------------------------------------------------------------- #13.1 templates are code


def test_review_ignores_a_pr_head_template_payload(fake_github, tmp_path, monkeypatch) -> None:
    marker = tmp_path / "pwned"
    pull = Pull(fake_github, tmp_path, monkeypatch, head_files={SUMMARY: payload(marker)})
    result = pull.run()
    assert result.exit_code == 1, result.output
    body = pull.summary()
    assert not marker.exists()
    assert "PWNED" not in body and body.startswith("<!-- cfgcheck:summary -->\n### cfgcheck:")
    assert "template override changed, used once merged: .cfgcheck/templates/summary\\_comment.md.j2" in body


def test_sandbox_stops_the_payload_even_from_a_trusted_source(tmp_path, capsys) -> None:
    marker = tmp_path / "pwned"
    root = repo(tmp_path, {SUMMARY: payload(marker)})
    sha = commit_all(root)
    for source in (Overrides(root), Overrides(root, sha)):
        body = render_module.render("review_comment.md.j2", source, **comment_context())
        assert not marker.exists() and "PWNED" not in body and "**error**" in body
    capsys.readouterr()
    body = render_module.render("summary_comment.md.j2", Overrides(root, sha), **summary_context())
    assert not marker.exists() and "PWNED" not in body and "### cfgcheck:" in body
    note = capsys.readouterr().err
    assert "template override .cfgcheck/templates/summary_comment.md.j2 not used" in note
    assert len(note.strip().splitlines()) == 1


@pytest.mark.parametrize("template", [
    "{{ 'x' * 10**9 }}",  # memory
    "{{ 7 ** 100000000 }}",  # CPU and memory
    "{% for i in range(10**9) %}{% endfor %}",  # jinja bounds range itself
    "{{ marker.__class__.__mro__ }}",
    "{% set x = findings.append(1) %}",  # immutable: no mutation of the context
    "{{ undefined_name }}",
    "{% if %}",
])
def test_broken_or_hostile_override_falls_back(tmp_path, template, capsys) -> None:
    root = repo(tmp_path, {SUMMARY: template})
    body = render("summary_comment.md.j2", Overrides(root, commit_all(root)), **summary_context())
    assert "### cfgcheck:" in body
    assert "packaged template is used" in capsys.readouterr().err


def test_values_are_markdown_escaped_by_default(tmp_path) -> None:
    root = repo(tmp_path, {SUMMARY: "{{ marker }}\nraw {{ findings[0].message }} {{ findings[0].rule | md }}\n"})
    context = summary_context(message="@acme/admins <img src=x> [a](http://evil) **b**")
    body = render("summary_comment.md.j2", Overrides(root, commit_all(root)), **context)
    assert body.startswith("<!-- cfgcheck:summary -->\nraw ")  # the caller's marker is trusted
    assert "@\u200bacme/admins \\<img src=x\\> \\[a\\]\\(http:\u200b//evil\\) \\*\\*b\\*\\*" in body  # no autolink
    assert "memory-above-ceiling" in body and "\\\\" not in body  # `md` output is not escaped twice


def test_base_override_is_used_in_review(fake_github, tmp_path, monkeypatch) -> None:
    base_template = "{{ marker }}\nBASE TEMPLATE {{ counts.errors }} error(s)\n"
    pull = Pull(fake_github, tmp_path, monkeypatch, base_files={SUMMARY: base_template},
                head_files={SUMMARY: "{{ marker }}\nHEAD TEMPLATE\n"})
    pull.run()
    body = pull.summary()
    assert "BASE TEMPLATE 1 error(s)" in body and "HEAD TEMPLATE" not in body


# ---------------------------------------------------------------- #13.2 overrides follow symlinks


def test_symlinked_override_in_the_work_tree_is_refused(tmp_path, secret_file, capsys) -> None:
    root = repo(tmp_path, {SUMMARY: Link(str(secret_file))})
    body = render("summary_comment.md.j2", root, **summary_context())
    assert "TOPSECRET" not in body and "### cfgcheck:" in body
    err = capsys.readouterr().err
    assert "symlink" in err and "TOPSECRET" not in err and str(secret_file) not in err


def test_symlinked_override_folder_is_refused(tmp_path, secret_file) -> None:
    (secret_file.parent / "summary_comment.md.j2").write_text("LEAKED {{ marker }}")
    root = repo(tmp_path, {".cfgcheck/templates": Link(str(secret_file.parent))})
    assert "LEAKED" not in render("summary_comment.md.j2", root, **summary_context())


def test_symlink_entry_at_the_base_commit_is_refused(tmp_path, secret_file) -> None:
    # `git show` of a symlink prints its target path; the loader must refuse, not read either side
    root = repo(tmp_path, {SUMMARY: Link(str(secret_file)), ".cfgcheck/templates/review_comment.md.j2":
                           Link("../../README.md"), "README.md": "README {{ 7 * 6 }}"})
    sha = commit_all(root)
    with pytest.raises(UnsafePath, match="symlink"):
        Overrides(root, sha).text("summary_comment.md.j2")
    with pytest.raises(UnsafePath, match="symlink"):
        Overrides(root, sha).text("review_comment.md.j2")
    assert "TOPSECRET" not in render("summary_comment.md.j2", Overrides(root, sha), **summary_context())


def test_override_names_cannot_climb(tmp_path) -> None:
    root = repo(tmp_path, {"secret.j2": "SECRET"})
    for name in ("../../secret.j2", "../secret.j2"):
        with pytest.raises(UnsafePath, match=r"'\.\.'"):
            Overrides(root).text(name)


# ---------------------------------------------------------------- one helper for every path


def test_inside_repo(tmp_path, secret_file) -> None:
    root = repo(tmp_path, {"a/b.yaml": "x: 1", "inner": Link("a"), "out": Link(str(secret_file)),
                           "loop": Link("loop")})
    assert inside_repo(root, "a/b.yaml") == (root / "a/b.yaml").resolve()
    assert inside_repo(root, "inner/b.yaml") == (root / "a/b.yaml").resolve()  # a link inside is fine
    assert inside_repo(root, root / "a") == (root / "a").resolve()
    assert repo_relative(root, "a/./b.yaml") == "a/b.yaml"
    for path, message in (("out", "symlink to outside"), ("../x", r"'\.\.'"), ("/etc/passwd", "outside"),
                          ("loop", "loop")):
        with pytest.raises(UnsafePath, match=message):
            inside_repo(root, path)
    with pytest.raises(UnsafePath, match="through a symlink"):
        inside_repo(root, "inner/b.yaml", links=False)
    write(root, "gitconfig", Link(".git/config"))  # actions/checkout keeps its token there
    for path in ("gitconfig", ".git/config"):
        with pytest.raises(UnsafePath, match="into .git"):
            inside_repo(root, path)


def test_blob_at_reads_git_objects_only(tmp_path) -> None:
    root = repo(tmp_path, {"c.yaml": "base"})
    sha = commit_all(root)
    write(root, "c.yaml", "work tree")
    assert blob_at(root, sha, "c.yaml", what="f", limit=100) == b"base"
    assert blob_at(root, sha, "missing.yaml", what="f", limit=100) is None
    with pytest.raises(UnsafePath, match="larger"):
        blob_at(root, sha, "c.yaml", what="f", limit=2)
    with pytest.raises(ValueError):
        blob_at(root, "--output=/tmp/x", "c.yaml", what="f", limit=100)


# ---------------------------------------------------------------- #13.3 .cfgcheck.yaml as a symlink


def test_config_symlink_to_a_secret_is_one_line_without_the_secret(tmp_path, secret_file) -> None:
    root = repo(tmp_path, {".cfgcheck.yaml": Link(str(secret_file)), "a.yaml": "a: 1\n"})
    out = cli(root, "lint", ".")
    assert out.returncode == 2
    assert out.stderr.strip() == ("cfgcheck: error: configuration file '.cfgcheck.yaml' is a symlink to outside "
                                  "the repository; refused")
    assert "TOPSECRET" not in out.stdout + out.stderr and "OPENSSH" not in out.stdout + out.stderr


@pytest.mark.parametrize("args", [["--config", "{secret}"], ["--config", "cfg.yaml"]])
def test_explicit_config_outside_the_repository_is_refused(tmp_path, secret_file, args) -> None:
    root = repo(tmp_path, {"cfg.yaml": Link(str(secret_file)), "a.yaml": "a: 1\n"})
    out = cli(root, "lint", ".", *[a.format(secret=secret_file) for a in args])
    assert out.returncode == 2 and "refused" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "TOPSECRET" not in out.stderr


def test_a_symlink_inside_the_repository_is_followed(tmp_path) -> None:
    root = repo(tmp_path, {"conf/cfgcheck.yaml": "fail-on: never\n", ".cfgcheck.yaml": Link("conf/cfgcheck.yaml")})
    assert load(root).get("fail-on") == "never"


@pytest.mark.parametrize("text", [
    f"select: {SECRET!r}\n",
    f"rules:\n  CFG204:\n    severity: {SECRET!r}\n",
    f"gpu: [{SECRET!r}]\n",
    f"{SECRET!r}: 1\n",
])
def test_schema_errors_never_echo_long_values(tmp_path, text) -> None:
    root = repo(tmp_path, {".cfgcheck.yaml": text})
    with pytest.raises(ConfigError) as caught:
        load(root)
    message = str(caught.value)
    assert "TOPSECRET" not in message and "b3Bl" not in message and "\n" not in message


def test_model_configs_and_mapped_files_stay_inside(tmp_path, secret_file) -> None:
    root = repo(tmp_path, {"models": Link(str(secret_file.parent))})
    for text, message in (("model_configs: /etc\n", "outside"), ("model_configs: models\n", "symlink to outside"),
                          ("values: [{files: ['../other/*.yaml'], settings: {image: image}}]\n", r"'\.\.'"),
                          ("values: [{files: ['/etc/*'], settings: {image: image}}]\n", "outside"),
                          ("adr_dir: ../docs\n", r"'\.\.'")):
        write(root, ".cfgcheck.yaml", text)
        with pytest.raises(ConfigError, match=message):
            load(root)


def test_model_id_cannot_leave_model_configs(tmp_path) -> None:
    configs = tmp_path / "repo" / "model-configs"
    outside = tmp_path / "repo" / "elsewhere" / "org" / "evil"
    for folder in (configs / "org" / "ok", outside):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text('{"num_hidden_layers": 2, "num_attention_heads": 4, '
                                            '"hidden_size": 256, "max_position_embeddings": 1024}')
    assert lookup_architecture("org/ok", configs).num_layers == 2
    assert lookup_architecture("../elsewhere/org/evil", configs) is None
    assert lookup_architecture(str(outside), configs) is None


# ---------------------------------------------------------------- #13.13 review uses the base's configuration


def test_pr_cannot_switch_off_its_own_check(fake_github, tmp_path, monkeypatch) -> None:
    head_config = ("select: [unpinned-image]\nignore: [CFG205]\nexclude: ['apps/**']\nfail-on: never\n"
                   "rules:\n  CFG2: {severity: note}\n  CFG205: {min-reason-words: 0}\n")
    pull = Pull(fake_github, tmp_path, monkeypatch, base_files={".cfgcheck.yaml": "rules:\n  CFG205: {severity: warning}\n"},
                head_files={".cfgcheck.yaml": head_config})
    result = pull.run()
    assert result.exit_code == 1  # CFG204 still an error: the base's configuration ran
    body = pull.summary()
    assert "CFG204" in body and "changes cfgcheck's own configuration" in body
    for line in ("> - rules switched off: CFG000 unparseable-input", "> - paths excluded: 'apps/\\*\\*'",
                 "> - fail-on: error → never\n"):
        assert line in body, body


def test_config_changes_in_words() -> None:
    root = Path(".")
    base = Config(root, {"rules": {"CFG204": {"severity": "error"}}, "exclude": ["a/**"]})
    head = Config(root, {"ignore": ["CFG301"], "rules": {"CFG2": {"severity": "warning"},
                                                         "CFG205": {"min-reason-words": 0}},
                         "exclude": ["a/**", "charts/**"], "ceilings": []})
    assert changes(base, head) == [
        "rules switched off: CFG301 unpinned-image",
        "severity lowered: CFG201 seq-limit-without-context-cap error → warning, CFG202 context-exceeds-kv-pool error → warning, CFG204 memory-above-ceiling error → "
        "warning, CFG207 context-exceeds-model-max error → warning, CFG208 parallel-size-gpu-mismatch error → warning, "
        "CFG209 gpu-oversubscribed error → warning, CFG210 parallel-split-mismatch error → warning, "
        "CFG211 precision-unsupported-on-gpu error → warning, CFG215 disaggregated-model-mismatch error → warning",
        "rule options changed: CFG205 min-reason-words 2 → 0",
        "paths excluded: 'charts/**'",
        "other settings changed: ceilings",
    ]
    assert changes(base, base) == []


def test_invalid_head_config_is_reported_not_fatal(fake_github, tmp_path, monkeypatch, secret_file) -> None:
    pull = Pull(fake_github, tmp_path, monkeypatch, head_files={".cfgcheck.yaml": Link(str(secret_file))})
    assert pull.run().exit_code == 1
    body = pull.summary()
    assert "configuration cannot be used" in body and "TOPSECRET" not in body


def test_load_at_commit_reads_the_commit_not_the_work_tree(tmp_path, secret_file) -> None:
    root = repo(tmp_path, {".cfgcheck.yaml": "fail-on: warning\n"})
    sha = commit_all(root)
    write(root, ".cfgcheck.yaml", Link(str(secret_file)))
    assert load_at_commit(root, sha).get("fail-on") == "warning"
    write(root, ".cfgcheck.yaml", "fail-on: never\n")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    assert load_at_commit(root, sha).get("fail-on") == "warning"
    write(root, "linked.yaml", Link(str(secret_file)))
    linked = commit_all(root)
    with pytest.raises(ConfigError, match="symlink"):
        load_at_commit(root, linked, Path(root / "linked.yaml"))


# ---------------------------------------------------------------- #17.3 / #17.13 rule names everywhere, errors in words


def test_config_select_accepts_what_the_command_line_accepts(tmp_path) -> None:
    files = {"d.yaml": "servingEngineSpec:\n  modelSpec:\n    - name: m\n      repository: vllm/vllm-openai\n"
                       "      tag: latest\n"}
    root = repo(tmp_path, {**files, ".cfgcheck.yaml": "select: [CFG3, cfg1, unexplained-seq-pin]\nignore: [CFG30]\n"})
    from_file = cli(root, "lint", ".", "--format", "json")
    write(root, ".cfgcheck.yaml", "")
    from_cli = cli(root, "lint", ".", "--format", "json", "--select", "CFG3,cfg1,unexplained-seq-pin",
                   "--ignore", "CFG30")
    assert from_file.returncode == from_cli.returncode == 0, from_file.stderr
    assert from_file.stdout == from_cli.stdout


def test_rules_keys_accept_prefixes_and_the_more_specific_wins() -> None:
    config = Config(Path("."), validate({"rules": {"CFG2": {"severity": "note", "estimate-margin": 0.3},
                                                   "CFG203": {"severity": "error"}}}, "t"))
    assert rule_options(find("CFG203"), config) == ("error", {"include-defaults": False, "estimate-margin": 0.3})
    assert rule_options(find("CFG202"), config) == ("note", {"estimate-margin": 0.3})
    assert rule_options(find("CFG302"), config)[0] == "warning"  # not configured: its default


@pytest.mark.parametrize("text, message", [
    ("rules:\n  CFG204:\n    sevrity: error\n",
     "rules.CFG204: unknown key 'sevrity' (did you mean 'severity'?); allowed: severity"),
    ("rules:\n  unexplained-seq-pin: {min-reason-words: three}\n",
     "rules.unexplained-seq-pin.min-reason-words: expected a whole number; got 'three'"),
    ("rules:\n  CFG101: {allow: 5}\n", "rules.CFG101.allow: expected a list of strings; got 5"),
    ("rules:\n  CFG208: {allow-idle-gpus: 'yes'}\n", "rules.CFG208.allow-idle-gpus: expected true or false; got 'yes'"),
    ("rules:\n  CFG999: {severity: note}\n", "rules.CFG999: unknown rule 'CFG999'; expected a rule code (CFG204)"),
    ("select: [CFG1, nope]\n", "select[1]: unknown rule 'nope'"),
    ("select: CFG1\n", "select: expected a list of rule codes, code prefixes or names, such as [CFG2, unpinned-image]; "
                       "got 'CFG1'"),
    ("values: [{files: [a.yaml], models: 'a..b', settings: {image: image}}]\n",
     "values[0].models: expected a dotted path without spaces or empty parts, such as serving.contextSize; got 'a..b'"),
    ("values: [{files: [a.yaml], settings: {Image: image}}]\n",
     "values[0].settings: key 'Image' is not valid; expected a canonical setting name in snake_case"),
    ("values: [{files: [a.yaml]}]\n", "values[0]: missing key 'settings'"),
    ("limits: {max-depth: 0}\n", "limits.max-depth: must be at least 1; got 0"),
    ("fail-on: sometimes\n", "fail-on: expected one of error, warning, note, never; got 'sometimes'"),
    ("selct: [CFG1]\n", "(top level): unknown key 'selct' (did you mean 'select'?)"),
])
def test_config_errors_are_one_line_for_people(tmp_path, text, message) -> None:
    root = repo(tmp_path, {".cfgcheck.yaml": text, "a.yaml": "a: 1\n"})
    out = cli(root, "lint", ".")
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("cfgcheck: error: .cfgcheck.yaml: " + message), out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "internal error" not in out.stderr and "^" not in out.stderr  # no raw regular expressions


# ---------------------------------------------------------------- #17.4 [tool.cfgcheck] on Python 3.10


@pytest.mark.parametrize("fallback", [False, True])
def test_pyproject_table_is_read_and_validated(tmp_path, monkeypatch, fallback) -> None:
    if fallback:
        pytest.importorskip("tomli")
        monkeypatch.setitem(sys.modules, "tomllib", None)  # what Python 3.10 has: no tomllib
    root = repo(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n[tool.cfgcheck]\nselect = ['CFG2']\n"
                                             "[tool.cfgcheck.rules.CFG204]\nseverity = 'warning'\n"})
    config = load(root)
    assert config.get("select") == ["CFG2"] and config.rule_settings == {"CFG204": {"severity": "warning"}}
    write(root, "pyproject.toml", "[tool.cfgcheck]\nfail_on = 'never'\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml \[tool.cfgcheck\]: \(top level\): unknown key 'fail_on' "
                                          r"\(did you mean 'fail-on'\?\)"):
        load(root)
    write(root, "pyproject.toml", "[tool.cfgcheck\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load(root)


def test_pyproject_without_the_table_is_no_configuration(tmp_path) -> None:
    root = repo(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    assert load(root).data == {}


# ---------------------------------------------------------------- helpers


def comment_context() -> dict:
    return dict(fp="0" * 40, resolved_in=None, severity="error", code="CFG204", rule="memory-above-ceiling",
                path="a.yaml", line=1, message="m", remediation=None, model=None, doc_url="https://x/y#z",
                placement=None, link=None, fix=None)


def summary_context(message: str = "m") -> dict:
    from cfgcheck.templating import trusted

    finding = dict(comment_context(), message=message)
    return dict(marker=trusted("<!-- cfgcheck:summary -->"), step=False, config_changes=[],
                counts={"errors": 1, "warnings": 0, "notes": 0, "suppressed": 0}, findings=[finding], hidden=0,
                fixed=0, models=[], outcome=None, show_placement=False, head="", base="", version="0")


def test_environment_exposes_no_os(tmp_path) -> None:
    env = render_module.environment(None)
    template = env.from_string("{{ cycler.__init__.__globals__ }}")
    with pytest.raises(Exception) as caught:
        template.render()
    assert type(caught.value).__name__ in ("SecurityError", "UndefinedError")


def test_a_huge_configuration_file_is_refused_before_it_is_read(tmp_path) -> None:
    root = repo(tmp_path, {})
    with (root / ".cfgcheck.yaml").open("wb") as handle:
        handle.truncate(2 * 1024 * 1024 * 1024)  # sparse: 2 GiB that would be read into memory
    with pytest.raises(ConfigError, match="larger than 1,048,576 bytes"):
        load(root)


# ---------------------------------------------------------------- propose: the same protection


def test_propose_renders_base_overrides_in_the_sandbox(tmp_path) -> None:
    from tests.propose.test_propose import CAP_AND_RAISE, CONFIG, VALUES, VALUES_TEXT, make_repo, propose

    marker = tmp_path / "pwned"
    work, _ = make_repo(tmp_path, {"cfg/cfgcheck.yaml": CONFIG, VALUES: VALUES_TEXT,
                                   ".cfgcheck/templates/adr.md.j2": payload(marker),
                                   ".cfgcheck/templates/pr_body.md.j2": "BASE BODY {{ title }}\n"})
    # an uncommitted change to an override is not the base's: never used
    write(work, ".cfgcheck/templates/pr_body.md.j2", "WORK TREE BODY")
    result = propose(work, *CAP_AND_RAISE, "--dry-run", "--config", "cfg/cfgcheck.yaml")
    assert result.returncode == 0, result.stderr
    assert not marker.exists() and "PWNED" not in result.stdout
    assert "BASE BODY Cap the context at 32k and raise max-num-seqs 4 -\\> 16" in result.stdout
    assert "WORK TREE BODY" not in result.stdout
    assert "template override .cfgcheck/templates/adr.md.j2 not used" in result.stderr
    outside = propose(work, *CAP_AND_RAISE, "--dry-run", "--config", str(tmp_path / "elsewhere.yaml"))
    assert outside.returncode == 2 and "outside the repository" in outside.stderr


def test_security_md_names_tests_that_exist() -> None:
    """Every test docs/SECURITY.md cites exists (``tests/...`` marks one still to be written)."""
    import ast
    import re

    text = (REPO / "docs" / "SECURITY.md").read_text(encoding="utf-8")
    cited = 0
    for cell in re.findall(r"`(tests/[\w/]+\.py)::(\w+)`((?:, `::\w+`)*)", text):
        path = REPO / cell[0]
        names = {node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
                 if isinstance(node, ast.FunctionDef)}
        for name in [cell[1], *re.findall(r"::(\w+)", cell[2])]:
            assert name in names, f"{cell[0]}::{name} is cited in docs/SECURITY.md but does not exist"
            cited += 1
    assert cited >= 20
