"""Run cfgcheck on a judged blind round of real repositories and score it against the round's labels.

    python bench/realworld/run.py round5 [--repos DIR] [--json OUT] [--stubs] [--cfgcheck PATH]

A round lives in bench/realworld/<round>/: labels.json (written before cfgcheck ever ran on the files),
SOURCES.md, files/<owner>__<repo>/... (copies where the licence allows) and judgments.json (a verdict for
every finding that no label expects). The tree of each repository is rebuilt in a temporary folder from
the copies, or from a local bare clone DIR/<owner>+<name> (or DIR/<owner>+<name>/repo) by blob SHA; a
repository with neither is skipped with a note. cfgcheck runs offline (`lint` and `capacity`, JSON) on
each tree, and the script prints a markdown table: served models found (and with the right model), GPU
identified where the repository states it, expected findings found (all and pinning aside), and the
verdicts on everything else. `--cfgcheck PATH` runs another cfgcheck executable (an older commit installed
in its own venv, for a "before" column) instead of the one importable here. The protocol is
bench/realworld/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PINNING = {"CFG301", "CFG302", "CFG303"}
MODEL_SLACK = 3  # lines a served model may be reported outside its labelled span
VERDICTS = ("true", "debatable", "false")


def blob_sha(data: bytes) -> str:
    """The git blob SHA-1 of a file's bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _git_dir(repos: Path | None, repo: str) -> Path | None:
    if repos is None:
        return None
    base = repos / repo.replace("/", "+")
    for cand in (base, base / "repo", base / ".git"):
        if (cand / "objects").is_dir():
            return cand
    return None


def _from_clone(git_dir: Path, sha: str) -> bytes | None:
    out = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "blob", sha], capture_output=True)
    return out.stdout if out.returncode == 0 else None


def build_tree(round_dir: Path, entry: dict, dest: Path, repos: Path | None) -> list[str]:
    """Write the repository's labelled files under dest; return notes on what could not be written."""
    copies = round_dir / "files" / entry["repo"].replace("/", "__")
    git_dir = _git_dir(repos, entry["repo"])
    notes = []
    for f in entry["files"]:
        src = copies / f["path"]
        data = src.read_bytes() if entry.get("vendored") and src.is_file() else None
        if data is None and git_dir is not None:
            data = _from_clone(git_dir, f["blob"])
        if data is None:
            notes.append(f"{entry['repo']}: {f['path']} not available (no copy, no clone)")
            continue
        if blob_sha(data) != f["blob"]:
            notes.append(f"{entry['repo']}: {f['path']} differs from blob {f['blob'][:12]}")
        out = dest / f["path"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    for f in entry.get("placeholders", []):
        out = dest / f["path"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("# placeholder: present upstream, not copied (its path names a secret)\n")
    return notes


DEFAULT_CFGCHECK = (sys.executable, "-m", "cfgcheck")


def run_cfgcheck(tree: Path, command: str, cfgcheck: tuple[str, ...] = DEFAULT_CFGCHECK) -> dict:
    extra = ["--fail-on", "never"] if command == "lint" else []
    args = [*cfgcheck, command, "--format", "json", "--offline", *extra, "."]
    out = subprocess.run(args, cwd=tree, capture_output=True, text=True)
    try:
        return json.loads(out.stdout)
    except json.JSONDecodeError:
        return {"error": (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]}


def norm_model(text: str | None) -> str:
    """A model id or path in a comparable form: no hf:// scheme, no @revision, lower case."""
    if not text:
        return ""
    text = text.strip().lower().removeprefix("hf://")
    return text.split("@", 1)[0].rstrip("/")


def _in_span(line: int, span: list[int]) -> bool:
    return span[0] - MODEL_SLACK <= line <= span[1] + MODEL_SLACK


def _model_places(label: dict) -> list[tuple[str, list[int]]]:
    return [(label["file"], label["lines"])] + [(a["file"], a["lines"]) for a in label.get("alt", [])]


def _written_forms(written: str) -> set[str]:
    """The model as written, and the default of a `${VAR:-default}` in it (the value when VAR is unset)."""
    forms = {norm_model(written)}
    if written.startswith("${") and ":-" in written and written.endswith("}"):
        forms.add(norm_model(written[2:-1].split(":-", 1)[1]))
    return forms


def _right_model(label: dict, found: str | None) -> bool:
    want = norm_model(label["model"])
    got = norm_model(found)
    if want == "*" or want.startswith("("):
        return bool(got)
    return bool(got) and (got == want or got in _written_forms(label["model_as_written"]) or want in got)


@dataclass
class Score:
    """Counts for one repository (or the total)."""

    files: int = 0
    models: int = 0
    found: int = 0
    right_model: int = 0
    gpu_stated: int = 0
    gpu_found: int = 0
    expected: int = 0
    expected_found: int = 0
    expected_np: int = 0
    expected_np_found: int = 0
    no_rule: int = 0
    extra_models: int = 0
    errors: dict = field(default_factory=lambda: dict.fromkeys(VERDICTS + ("unjudged",), 0))
    findings_np: dict = field(default_factory=lambda: dict.fromkeys(VERDICTS + ("unjudged",), 0))
    missed_models: list = field(default_factory=list)
    missed_hazards: list = field(default_factory=list)
    extras: list = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name, value in vars(other).items():
            if isinstance(value, int):
                setattr(self, name, getattr(self, name) + value)
            elif isinstance(value, dict):
                for k, v in value.items():
                    getattr(self, name)[k] += v
            else:
                getattr(self, name).extend(value)


def score_models(entry: dict, found: list[dict], score: Score) -> None:
    """Match each labelled served model to one reported model in its file and span, the right model first.

    A model reported with engine "unknown" counts as found (the launch was seen) but not as the right model.
    """
    free = list(found)
    for label in entry["models"]:
        score.models += 1
        gpu_counts = label.get("gpu_stated") and not label.get("cpu")
        score.gpu_stated += bool(gpu_counts)
        hits = [m for m in free for path, span in _model_places(label)
                if m.get("path") == path and _in_span(m.get("line", 0), span)
                and m.get("engine") in (label["engine"], "unknown", None)]
        if not hits:
            score.missed_models.append({"repo": entry["repo"], **label})
            continue
        hits.sort(key=lambda m: (not _right_model(label, m.get("model")), abs(m.get("line", 0) - label["line"])))
        best = hits[0]
        free.remove(best)
        score.found += 1
        score.right_model += best.get("engine") == label["engine"] and _right_model(label, best.get("model"))
        score.gpu_found += bool(gpu_counts and best.get("gpu"))
    score.extra_models += len(free)


def _hazard_places(h: dict) -> list[tuple[str, int]]:
    return [(h["file"], h["line"])] + [(a["file"], a["line"]) for a in h.get("alt", [])]


def _matches(h: dict, f: dict) -> bool:
    codes = {h["code"], *h.get("alt_codes", [])}
    return f["code"] in codes and any(f["path"] == p and abs(f["line"] - ln) <= 2 for p, ln in _hazard_places(h))


def finding_key(repo: str, f: dict) -> str:
    return f"{repo}|{f['path']}|{f['line']}|{f['code']}"


def score_findings(entry: dict, findings: list[dict], judgments: dict, score: Score) -> None:
    """Expected-finding recall, then a verdict for every finding: matched to a label (true) or judged."""
    live = [f for f in findings if not f.get("suppressed")]
    matched: set[int] = set()
    for h in entry["hazards"]:
        if h["code"] == "no rule":
            score.no_rule += 1
            continue
        pinning = h.get("pinning") or h["code"] in PINNING
        score.expected += 1
        score.expected_np += not pinning
        hit = [i for i, f in enumerate(live) if _matches(h, f)]
        matched.update(hit)
        score.expected_found += bool(hit)
        score.expected_np_found += bool(hit) and not pinning
        if not hit:
            score.missed_hazards.append({"repo": entry["repo"], **h})
    for i, f in enumerate(live):
        key = finding_key(entry["repo"], f)
        verdict = "true" if i in matched else (judgments.get(key) or {}).get("verdict") or "unjudged"
        if i not in matched:
            score.extras.append({"key": key, "severity": f["severity"], "message": f["message"], "verdict": verdict})
        if f["severity"] == "error":
            score.errors[verdict] += 1
        if f["code"] not in PINNING:
            score.findings_np[verdict] += 1


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "-"


def _precision(counts: dict) -> str:
    judged = counts["true"] + counts["false"]
    return f"{100 * counts['true'] / judged:.1f}%" if judged else "-"


def _verdicts(counts: dict) -> str:
    text = f"{counts['true']} / {counts['debatable']} / {counts['false']}"
    return text + (f" (+{counts['unjudged']} unjudged)" if counts["unjudged"] else "")


def table(rows: list[tuple[str, Score]], total: Score) -> str:
    head = ("| repository | files | served models found / right model | GPU identified / stated "
            "| expected findings found | pinning aside | no rule | errors t/d/f | findings t/d/f, pinning aside |")
    lines = [head, "|" + "---|" * 9]
    for name, s in [*rows, ("**total**", total)]:
        lines.append(f"| {name} | {s.files} | {s.found} / {s.right_model} of {s.models} | {s.gpu_found} / {s.gpu_stated} "
                     f"| {_pct(s.expected_found, s.expected)} | {_pct(s.expected_np_found, s.expected_np)} "
                     f"| {s.no_rule} | {_verdicts(s.errors)} | {_verdicts(s.findings_np)} |")
    lines += ["", f"Served-model recall {_pct(total.found, total.models)}, with the right model "
              f"{_pct(total.right_model, total.models)} ({total.extra_models} more reported models match no label); GPU identified {_pct(total.gpu_found, total.gpu_stated)} "
              f"of the served models whose GPU the repository states; expected findings "
              f"{_pct(total.expected_found, total.expected)}, pinning (CFG301-303) aside "
              f"{_pct(total.expected_np_found, total.expected_np)}; {total.no_rule} hazards have no rule.",
              f"Error precision {_precision(total.errors)}; precision of all findings, pinning aside, "
              f"{_precision(total.findings_np)} (true / (true + false); debatable shown, not counted)."]
    return "\n".join(lines)


def evaluate(round_dir: Path, repos: Path | None,
             cfgcheck: tuple[str, ...] = DEFAULT_CFGCHECK) -> tuple[list[tuple[str, Score]], Score, list[str]]:
    labels = json.loads((round_dir / "labels.json").read_text())
    jpath = round_dir / "judgments.json"
    judgments = json.loads(jpath.read_text()).get("findings", {}) if jpath.is_file() else {}
    rows, total, notes = [], Score(), []
    for entry in labels["repos"]:
        with tempfile.TemporaryDirectory(prefix="realworld-") as tmp:
            tree = Path(tmp)
            missing = build_tree(round_dir, entry, tree, repos)
            notes += missing
            if len(missing) == len(entry["files"]):
                notes.append(f"{entry['repo']}: skipped")
                continue
            lint, capacity = run_cfgcheck(tree, "lint", cfgcheck), run_cfgcheck(tree, "capacity", cfgcheck)
        for result, name in ((lint, "lint"), (capacity, "capacity")):
            if "error" in result:
                notes.append(f"{entry['repo']}: cfgcheck {name} failed: {result['error']}")
        score = Score(files=len(entry["files"]) - len(missing))
        score_models(entry, capacity.get("models", []), score)
        score_findings(entry, lint.get("findings", []), judgments, score)
        rows.append((entry["repo"], score))
        total.add(score)
    return rows, total, notes


def write_stubs(round_dir: Path, total: Score) -> int:
    """Add a null verdict for every unjudged extra finding to judgments.json; return how many were added."""
    path = round_dir / "judgments.json"
    data = json.loads(path.read_text()) if path.is_file() else {"findings": {}}
    added = 0
    for extra in total.extras:
        if extra["key"] not in data["findings"]:
            data["findings"][extra["key"]] = {"verdict": None, "severity": extra["severity"],
                                              "message": extra["message"], "reason": ""}
            added += 1
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("round", help="round folder name under bench/realworld, e.g. round5")
    parser.add_argument("--repos", type=Path, help="folder of bare clones <owner>+<name> for files not copied")
    parser.add_argument("--json", type=Path, help="also write the scores and the misses as JSON")
    parser.add_argument("--stubs", action="store_true", help="add unjudged findings to judgments.json")
    parser.add_argument("--cfgcheck", type=Path, help="cfgcheck executable to run (default: python -m cfgcheck)")
    args = parser.parse_args(argv)
    round_dir = HERE / args.round
    if not (round_dir / "labels.json").is_file():
        parser.error(f"no labels.json in {round_dir}")
    cfgcheck = (str(args.cfgcheck),) if args.cfgcheck else DEFAULT_CFGCHECK
    rows, total, notes = evaluate(round_dir, args.repos, cfgcheck)
    print(table(rows, total))
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.stubs:
        print(f"judgments.json: {write_stubs(round_dir, total)} findings added to judge", file=sys.stderr)
    if args.json:
        report = {"rows": {name: vars(s) for name, s in rows}, "total": vars(total), "notes": notes}
        args.json.write_text(json.dumps(report, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
