"""The GPU a script beside the run's launch scripts starts their host with: ``aws ec2 run-instances
--instance-type g6e.xlarge`` or ``gcloud compute instances create --machine-type g2-standard-8`` (an instance
type the GPU table maps to its GPU). Repositories that start vLLM from scripts on one cloud machine keep
the script that rents the machine beside them; that machine is where their engines run.

An assumption, like a README's statement (``cluster.Statement``, read with the README files by
``readme_nodes`` and only when nothing nearer names a GPU): the scripts may start other machines too. A
folder whose scripts name several GPUs decides nothing.
"""

from __future__ import annotations

import posixpath

from ... import lazy
from ...capacity.evidence import one_gpu
from ...cluster import Statement
from ...model import Location
from ..core.contexts import Workspace
from .named_files import read_text

SCRIPT_ENDINGS = (".sh", ".bash")
# the command that starts a machine, and the option naming its type, within one (continued) command line
_STARTS = lazy.Pattern(r"\b(?:ec2\s+run-instances|compute\s+instances\s+create)\b")
_TYPE = lazy.Pattern(r"""--(?:instance|machine)-type(?:=|\s+)["']?([A-Za-z0-9][\w.-]*)""")
_LINE_END = lazy.Pattern(r"(?<!\\)\n")


def provisioned(workspace: Workspace, folder: str, names: list[str]) -> Statement | None:
    """What the scripts of ``folder`` (its file names: ``named_files.files_in``) start their host with: the one
    GPU their instance types name, with the line; or why they decide nothing (several GPUs, or one cfgcheck does
    not know); None when none starts one."""
    named: dict[str, tuple[str, str]] = {}
    for name in names:
        if not name.endswith(SCRIPT_ENDINGS):
            continue
        rel = posixpath.join(folder, name) if folder else name
        text = read_text(workspace, rel) or ""
        named.update(instance_types(rel, text) if "instances" in text else {})
    found = one_gpu((where, value) for where, (_, value) in named.items())
    if found is None:
        return None
    if isinstance(found, str):
        return Statement(None, Location(folder or ".", 1, 1), f"the hosts the scripts of {folder or 'the root'} start: {found}")
    gpu, _, where = found
    at, _, number = where.rpartition(":")
    return Statement(gpu, Location(at, int(number), 1), named[where][0])


def instance_types(path: str, text: str) -> dict[str, tuple[str, str]]:
    """(``path:line`` -> (the option as written, the instance type)) of each command in ``text`` that starts a
    cloud machine."""
    found = {}
    for start in _STARTS.finditer(text):
        end = _LINE_END.search(text, start.end())
        command = text[start.start():end.start() if end else len(text)]
        written = _TYPE.search(command)
        if written is not None and not text[text.rfind("\n", 0, start.start()) + 1:start.start()].lstrip().startswith("#"):
            line = text.count("\n", 0, start.start() + written.start()) + 1
            found[f"{path}:{line}"] = (" ".join(written.group(0).replace('"', "").replace("'", "").split()), written.group(1))
    return found
