"""Start-up: the git processes of a one-file lint. Outside a repository none is started (git
could find nothing: ``git grep --untracked`` fails there whatever the configuration); inside one the
repository root is still git's answer, and the users of a named file and the files that document a GPU
ceiling come from one ``git grep``, finding what one search per process found. Real repositories in
temporary folders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers import git, make_repo

from cfgcheck import related_files
from cfgcheck import git as cfgcheck_git
from cfgcheck.adapters.core.registry import file_suffixes
from cfgcheck.config import load as load_config
from cfgcheck.config import repo_root
from cfgcheck.related_files import CEILING_SEARCH, RepoSearch
from cfgcheck.git import HARDENING
from cfgcheck.lint import gather
from cfgcheck.paths import git_may_find_repository
from tests.cli.test_output_formats import SECRET_APP

# a served Deployment that sets a memory fraction (the ceiling search is asked for)
APP = SECRET_APP.replace('"--api-key", "sk-live-abcdefghijklmnopqrstuvwxyz0123"]', '"--gpu-memory-utilization", "0.80"]')
# a sibling on the same GPUs that documents the ceiling the named file must respect
CEILING = APP.replace("name: chat", "name: embed").replace(
    '"0.80"]', '"0.10"]  # ceiling 0.10: never raise, chat needs the rest')


@pytest.fixture
def git_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The argument lists of the git processes started while the test runs."""
    started: list[list[str]] = []

    class Recording(subprocess.Popen):
        def __init__(self, args, *rest, **kwargs):
            if list(args)[:1] == ["git"]:
                started.append([str(arg) for arg in args])
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Recording)
    return started


def _gather_named(root: Path, name: str):
    config = load_config(repo_root(root / name))
    return gather([root / name], config)


def test_outside_a_repository_no_git_process_starts_and_the_ceiling_file_is_still_read(tmp_path, git_runs):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "app.yaml").write_text(APP)
    (folder / "embed.yaml").write_text(CEILING)
    collection = _gather_named(folder, "app.yaml")
    assert [m.path for m in collection.models] == ["app.yaml"]
    assert [m.path for m in collection.context] == ["embed.yaml"]  # read by walking the folder
    assert git_runs == []


def test_outside_a_repository_a_crowded_folder_is_not_searched_and_the_run_says_so(tmp_path, monkeypatch, capsys):
    # a file linted in a home or downloads folder: the search for related files would read the whole tree
    # under it (a folder of 556 entries with venvs and mirrors took six minutes); past the bound it is not
    # searched, the file itself is linted as ever, and a note says why its neighbours were not read
    folder = tmp_path / "downloads"
    (folder / "many").mkdir(parents=True)
    (folder / "app.yaml").write_text(APP)
    (folder / "embed.yaml").write_text(CEILING)
    for index in range(6):
        (folder / "many" / f"other-{index}.yaml").write_text("kind: ConfigMap\n")
    monkeypatch.setattr(related_files, "WALKED_SEARCH_ENTRIES", 5)
    collection = _gather_named(folder, "app.yaml")
    assert [m.path for m in collection.models] == ["app.yaml"]
    assert collection.context == []  # the sibling that documents the ceiling is not read
    assert f"related files not searched: {folder} is not in a git work tree and holds more than 5 entries" \
        in capsys.readouterr().err
    monkeypatch.setattr(related_files, "WALKED_SEARCH_ENTRIES", 10)  # 3 at the top, 6 below: within the bound
    assert [m.path for m in _gather_named(folder, "app.yaml").context] == ["embed.yaml"]
    assert "not searched" not in capsys.readouterr().err


def test_in_a_repository_one_git_grep_finds_users_and_ceilings(tmp_path, git_runs):
    repo = make_repo(tmp_path, {"app.yaml": APP, "k8s/embed.yaml": CEILING, "k8s/other.yaml": "kind: List\n"})
    git_runs.clear()
    collection = _gather_named(repo, "app.yaml")
    assert [m.path for m in collection.context] == ["k8s/embed.yaml"]
    # every git process starts with the same hardening options, then its subcommand (cfgcheck/git.py)
    assert all(run[:1 + len(HARDENING)] == ["git", *HARDENING] for run in git_runs)
    # the top level, the one search, and the index once (files the repository names are read only when
    # Git holds them: cfgcheck/adapters/launch/named_files.py)
    assert [run[1 + len(HARDENING)] for run in git_runs] == ["rev-parse", "grep", "ls-files"]


def test_the_tracked_files_are_listed_once_while_the_index_is_unchanged(tmp_path, git_runs):
    # a lint of a folder asks for them twice (the whole-run cache's key, the reads of repository files)
    repo = make_repo(tmp_path, {"app.yaml": APP})
    git_runs.clear()
    first = cfgcheck_git.ls_files(repo)
    first.append("changed by the caller")  # a copy: the next caller gets git's list
    assert cfgcheck_git.ls_files(repo) == ["app.yaml"]
    assert len(git_runs) == 1
    (repo / "k8s").mkdir()
    (repo / "k8s" / "new.yaml").write_text("kind: List\n")
    git(repo, "add", "k8s/new.yaml")  # a new index: listed again
    git_runs.clear()
    assert cfgcheck_git.ls_files(repo) == ["app.yaml", "k8s/new.yaml"]
    assert cfgcheck_git.ls_files(repo, "-c") == ["app.yaml", "k8s/new.yaml"]  # options: always asked
    assert len(git_runs) == 2


def test_discovery_s_tagged_listing_gives_the_tracked_files_without_another_process(tmp_path, git_runs):
    """Its cached entries (H, S skip-worktree, M unmerged once per stage; not R deleted, ? untracked) are what
    ``git ls-files`` lists, in its order; a lint of the repository's root starts two git processes."""
    repo = make_repo(tmp_path, {"a.yaml": "a: 1\n", "b.yaml": "b: 1\n", "c.yaml": "c: 1\n", "d/x.yaml": "x: 1\n"})
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "a.yaml").write_text("a: 2\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "a.yaml").write_text("a: 3\n")
    git(repo, "commit", "-qam", "main")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "other"], capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})  # a conflict in a.yaml
    (repo / "b.yaml").unlink()
    git(repo, "update-index", "--skip-worktree", "c.yaml")
    (repo / "untracked.yaml").write_text("u: 1\n")
    plain = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True)
    expected = [name for name in plain.stdout.decode().split("\0") if name]
    assert expected.count("a.yaml") == 3 and "untracked.yaml" not in expected
    git_runs.clear()
    tagged = cfgcheck_git.ls_files(repo, "-t", "-c", "-o", "-d", "--exclude-standard")
    assert "R b.yaml" in tagged and "? untracked.yaml" in tagged
    assert cfgcheck_git.ls_files(repo) == expected and len(git_runs) == 1
    git_runs.clear()
    cfgcheck_git.ls_files(repo, "-t", "-c", "-o")  # another listing: the tracked files are still those
    assert cfgcheck_git.ls_files(repo) == expected and len(git_runs) == 1


def test_the_work_tree_listed_ahead_is_discovery_s_listing_and_an_unused_one_is_ended(tmp_path, git_runs):
    """``git.listing_ahead``: the lint command starts discovery's listing of a work tree's top before it imports
    the lint; discovery takes that answer (the same as its own), and one nobody asked for is killed and reaped."""
    repo = make_repo(tmp_path, {"app.yaml": APP, "k8s/svc.yaml": "kind: Service\n"})
    (repo / "new.yaml").write_text("kind: List\n")
    expected = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", *cfgcheck_git.WORK_TREE_LISTING, "--", "."],
                              capture_output=True, check=True).stdout.decode().split("\0")[:-1]
    git_runs.clear()
    with cfgcheck_git.listing_ahead([repo, repo / "k8s", repo / "app.yaml"]):  # only the work tree's top
        assert len(git_runs) == 1 and len(cfgcheck_git._AHEAD) == 1
        assert cfgcheck_git.ls_files(repo, *cfgcheck_git.WORK_TREE_LISTING) == expected
        assert cfgcheck_git.ls_files(repo) == ["app.yaml", "k8s/svc.yaml"]  # its cached entries
    assert len(git_runs) == 1 and not cfgcheck_git._AHEAD
    with cfgcheck_git.listing_ahead([repo]):
        [(_, running)] = cfgcheck_git._AHEAD.values()
    assert running.process.returncode is not None and not cfgcheck_git._AHEAD  # ended and waited for


def test_one_process_for_several_searches_finds_what_one_search_each_found(tmp_path):
    """The files git lists for the first pattern of each search are matched here against the whole
    search: the same files as git's ``--all-match`` per search, CRLF lines, tabs and case included."""
    files = {
        "crlf.yaml": "apiVersion: v1\r\nkind: Model\r\nmetadata:\r\n  name: qwen\r\n",
        "tabs.yaml": "kind:\tModel \nmetadata:\n\tname:\t'qwen'\t\n",
        "upper.yaml": "KIND: MODEL\nmetadata:\n  NAME: QWEN\n",
        "split.yaml": "kind: Model\n---\nmetadata:\n  name: llama\n",
        "notes.yaml": "# qwen\nkind: Deployment\nmetadata:\n  name: qwen-chat\n",
        "ceiling.yaml": "# Do not raise: HARD CEILING\nimage: lmsysorg/sglang:v0.4\n",
        "ceiling-only.yaml": "# never raise this\nimage: nginx\n",
        "scripts/serve.sh": "# ceiling 0.9\nvllm serve qwen\n",
        "app.yaml": "volumes:\n  - configMap:\n      name: \"qwen-engine\"\n",
        "app-split.yaml": "configMap:\n  x: 1\nmetadata:\n  name: qwen-engine  \r\n",
    }
    repo = make_repo(tmp_path, files)
    searches = [(r"^[[:space:]]+name:[[:space:]]*['\"]?(qwen|llama)['\"]?[[:space:]]*$", r"^kind:[[:space:]]*Model[[:space:]]*$"),
                CEILING_SEARCH, (r"name:[[:space:]]*['\"]?qwen\-engine['\"]?[[:space:]]*$", r"configMap:"),
                (r"app\.yaml",)]
    together = related_files._grep(repo, searches, file_suffixes())
    alone = [related_files._grep(repo, [search], file_suffixes())[0] for search in searches]
    assert together == alone
    assert alone[0] == {"crlf.yaml", "tabs.yaml", "upper.yaml", "split.yaml"}
    assert alone[1] == {"ceiling.yaml", "scripts/serve.sh"}
    assert alone[2] == {"app.yaml", "app-split.yaml"}
    # and the per-run memory: a search asked again starts no process, pending ones join the first
    search = RepoSearch(repo, [], pending=[CEILING_SEARCH], suffixes=file_suffixes())
    assert search.files([searches[3]]) == set()
    assert set(search.found) == {searches[3], CEILING_SEARCH}


def test_repository_root_is_gits_answer_for_worktrees_and_git_dir(tmp_path, monkeypatch):
    repo = make_repo(tmp_path, {"app.yaml": APP})
    (repo / "sub").mkdir()
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", str(tree))  # its .git is a file naming the repository's
    assert (tree / ".git").is_file()
    link = tmp_path / "link"
    link.symlink_to(repo / "sub")  # git sees the folder a link leads to
    for folder, root in ((repo / "sub", repo), (tree, tree), (link, repo)):
        assert git_may_find_repository(folder), folder
        assert repo_root(folder) == root.resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert not git_may_find_repository(plain)
    assert repo_root(plain) == plain.resolve()
    assert not git_may_find_repository(repo.parent)
    assert git_may_find_repository(repo / ".git" / "refs")  # inside a git directory: git decides
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo))
    assert git_may_find_repository(plain)
    assert repo_root(plain) == repo.resolve()


def test_a_ceiling_directory_is_left_to_git(tmp_path, monkeypatch):
    """With GIT_CEILING_DIRECTORIES git stops above the folder: the ``.git`` found here only means git
    is asked, and git's answer (no repository) is the one used."""
    repo = make_repo(tmp_path, {"app.yaml": APP})
    (repo / "sub").mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo))
    assert git_may_find_repository(repo / "sub")
    assert repo_root(repo / "sub") == (repo / "sub").resolve()


def test_files_listed_for_several_searches_are_read_only_inside_the_repository(tmp_path):
    """A tracked link out of the repository is listed by git (its target's name holds the pattern) but
    never opened here: the callers drop it anyway (``escapes``), and its target may be anything."""
    outside = tmp_path / "ceiling-notes.yaml"
    outside.write_text("# ceiling: never raise\nimage: vllm/vllm-openai\n")
    repo = make_repo(tmp_path, {"app.yaml": APP, "k8s/embed.yaml": CEILING})
    (repo / "k8s" / "notes.yaml").symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "link")
    found = RepoSearch(repo, []).files([CEILING_SEARCH, (r"app\.yaml",)])
    assert found == {"k8s/embed.yaml"}


def test_the_folders_git_holds_are_every_folder_above_a_tracked_file() -> None:
    """``named_files``: a folder the repository holds is one above a file Git tracks (each, at any depth)."""
    from cfgcheck.adapters.launch.named_files import _folders_of

    tracked = {"apps/prod/api/kustomization.yaml", "apps/prod/web/deploy.yaml", "apps/dev/api/x.yaml", "README.md",
               "a//b/c.yaml"}
    assert _folders_of(tracked) == {"apps", "apps/prod", "apps/prod/api", "apps/prod/web", "apps/dev", "apps/dev/api",
                                    "a", "a/", "a//b"}
