"""Where a rendered value came from, and the rendered served models placed there.

A renderer knows the files it rendered from (a kustomization's bases, overlays and patches in apply order;
a chart's values files and templates). ``SourceMap`` indexes their scalar values and shell words by text,
each with its key (or the flag before it) and the object its document defines or patches; a value of a
rendered served model is then placed where the sources hold it under its key, in its own object's
documents before another object's equal text (another Deployment's ``replicas: 1``), with the comments written
there (kubectl prints none: a reason stated above a setting in the base is still beside it), else at the
source object the rendered one was built from (``Fallback``: where the object is defined, not a patch of
it), else at the file that was rendered. The rendered text itself is read by the adapter registry like any
file (``Reader``): the renderers know no format.
"""

from __future__ import annotations

import re
from pathlib import Path
from ..model import Location, PodFacts, ServedModel, Service, Setting
from ..records import Record
from ..notes import note
from ..yamlio import Document, LoadedFile, YNode, load_file, parse_text
from ..adapters.core.contexts import DocContext, Workspace, directives_of, served_limit
from ..adapters.core.references import recorded_count, relocate_since
from ..adapters.launch.shell import shell_tokens

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:  # typing is not imported by a run: a protocol and aliases for the checkers only
    from typing import Callable, Iterator, Protocol

    class Reader(Protocol):
        """What the adapter registry hands a renderer: its walks over a file, as over any file of the run."""

        workspace: Workspace  # the run's

        def index(self, loaded: LoadedFile) -> None:
            """Add to the run's index what the rendering makes that its own documents refer to (its ConfigMaps)."""

        def models(self, loaded: LoadedFile) -> list[ServedModel]:
            """The served models of the file's documents, each read by the first adapter that owns it."""

        def serving(self, text: str) -> bool:
            """Whether ``text`` holds a serving marker of a registered adapter (the prefilter's test)."""

    Fallback = Callable[[str, str, Document], "Location | None"]


class Written(Record):
    """A value the sources write: where, the word it follows (``_followed``), and the object its document
    defines or patches (None: no one object's, such as a kustomization's own fields or a JSON patch)."""

    __slots__ = ("location", "follows", "object")

    def __init__(self, location: Location, follows: str | None, object: tuple[str, str] | None) -> None:
        self.location = location
        self.follows = follows
        self.object = object


class SourceMap:
    """Scalar values and shell words of the source files, by text, in apply order (``Written``); ``raw``
    files (templates, not YAML) are searched for a value as a whole word when no source value holds it.
    ``keyed``: the sources write a value under the key it is rendered under, in a document of its object
    (a kustomization's resources and patches; a chart's values files do neither)."""

    keyed = True

    def __init__(self, repo: Path, files: list[Path], workspace: Workspace, raw: list[tuple[str, str]] = ()):
        self.by_text: dict[str, list[Written]] = {}
        self.by_follows: dict[tuple[str, str], list[Written]] = {}  # those of by_text that follow a word
        self.objects: dict[tuple[str, str], Location] = {}
        self.entries: dict[str, list[tuple[int, int]]] = {}  # path -> (first, last line) of each list entry
        # path -> (first, last line, object) of each document
        self.spans: dict[str, list[tuple[int, int, tuple[str, str] | None]]] = {}
        self.raw = list(raw)  # (repo-relative path, text)
        self.files: dict[str, LoadedFile] = {}  # the YAML sources by path, for their comments
        for file in files:
            loaded = self._load(repo, file)
            for document in loaded.documents:
                if document.root is None:
                    continue
                ctx, owner = DocContext(loaded, document, workspace), _object(document.root)
                self._walk(ctx, document.root, owner)
                node = document.root.path("metadata", "name")
                if owner is not None and node is not None:
                    # the resource that defines the object, not a patch applied to it later
                    self.objects.setdefault(owner, ctx.location(node))

    def _load(self, repo: Path, file: Path) -> LoadedFile:
        loaded = load_file(repo, file)
        if loaded.path not in self.files:
            self.files[loaded.path] = loaded
            first, spans = 1, self.spans.setdefault(loaded.path, [])
            for document in loaded.documents:
                end = document.root.end_line if document.root is not None else document.line
                spans.append((first, end, _object(document.root)))
                first = end + 1
        return loaded

    def comments(self, location: Location) -> tuple[str, ...] | None:
        """The comments on and directly above ``location`` in its source file; None for a place that is not
        in a YAML source (a template's word)."""
        loaded = self.files.get(location.path)
        return loaded.comments_for(location.line) if loaded is not None else None

    def document_comments(self, location: Location) -> list:
        """The comments of the source document that holds ``location`` (the object a served model is)."""
        for first, end, _ in self.spans.get(location.path, ()):
            if first <= location.line <= end:
                return [c for line, c in sorted(self.files[location.path].comments.items()) if first <= line <= end]
        return []

    def object_at(self, location: Location) -> tuple[str, str] | None:
        """The object (kind, name) the source document that holds ``location`` defines or patches."""
        return next((owner for first, end, owner in self.spans.get(location.path, ())
                     if first <= location.line <= end), None)

    def _walk(self, ctx: DocContext, node: YNode, owner: tuple[str, str] | None = None) -> None:
        for current, before in _followed(node):
            if current.kind == "seq":
                self.entries.setdefault(ctx.path, []).extend(
                    (item.line, item.end_line) for item in current.value if item.kind == "map")
            elif current.kind != "map" and current.value is not None:
                self._add(ctx, current, before, owner)

    def _add(self, ctx: DocContext, current: YNode, before: str | None, owner: tuple[str, str] | None) -> None:
        text, at = str(current.value), ctx.location(current)
        self._hold(text, Written(at, before, owner))
        if isinstance(current.value, str) and (" " in text or "\n" in text) and len(text) < 20000:
            previous = None
            for token in shell_tokens(ctx, current, "index", segment=False):
                self._hold(token.text, Written(token.location, previous, owner))
                previous = token.text
        if isinstance(current.value, str) and ":" in text and "/" in text:
            tag = text.rsplit(":", 1)[1]
            self._hold(f"tag:{tag}", Written(at, None, owner))
            if "://" in text:  # a model URL (KubeAI's hf://org/name): the engine is given the ref
                self._hold(f"ref:{text.partition('://')[2]}", Written(at, None, owner))

    def _hold(self, text: str, written: Written) -> None:
        self.by_text.setdefault(text, []).append(written)
        if written.follows is not None:
            self.by_follows.setdefault((text, written.follows), []).append(written)

    def find(self, text: str, previous: str | None, near: Location | None = None,
             own: tuple[str, str] | None = None) -> Location | None:
        """Where the sources hold ``text``: after the word ``previous`` (its key, or the flag before it)
        when one does; of those, in a document of ``own`` (the object the value is rendered from: where it
        is defined, its patches) or of no one object when one holds it, an equal text in another object's
        document (another Deployment's ``replicas: 1``) never taken before it; then in the list entry
        that holds ``near`` (a chart's ``models:`` entry whose model the served model is) when one does;
        else the last found (the last applied: a patch's over the base it patches)."""
        candidates = self.by_text.get(text) or []
        if not candidates:
            return self._find_raw(text)
        found = self.by_follows.get((text, previous), candidates) if previous is not None else candidates
        if own is not None and len(found) > 1:
            found = [held for held in found if held.object is None or held.object == own] or found
        if near is not None and len(found) > 1:
            entry = self._entry(near)
            found = [held for held in found if entry is not None and held.location.path == near.path
                     and entry[0] <= held.location.line <= entry[1]] or found
        return found[-1].location

    def _entry(self, near: Location) -> tuple[int, int] | None:
        """The innermost list entry of the sources that holds ``near``."""
        spans = [span for span in self.entries.get(near.path, ()) if span[0] <= near.line <= span[1]]
        return min(spans, key=lambda span: span[1] - span[0]) if spans else None

    def _find_raw(self, text: str) -> Location | None:
        if not 2 <= len(text) <= 200 or "\n" in text:
            return None  # a word a template holds literally, not a block
        word = re.compile(rf"(?<![\w.-]){re.escape(text)}(?![\w.-])")
        for path, source in self.raw:
            for number, line in enumerate(source.splitlines(), start=1):
                match = word.search(line)
                # a comment (a script's "# tested with image: ...") renders into no value
                if match and not line.lstrip().startswith("#"):
                    return Location(path, number, match.start() + 1, number, match.end() + 1)
        return None


class ScopedSourceMap(SourceMap):
    """A :class:`SourceMap` over values files, each whole (key None) or only under one top-level key."""

    keyed = False  # a values file's keys are the chart's own (``replicaCount``), not the rendered ones

    def __init__(self, repo: Path, files: list[tuple[Path, str | None]], workspace: Workspace,
                 raw: list[tuple[str, str]]):
        super().__init__(repo, [], workspace, raw)
        for file, key in files:
            loaded = self._load(repo, file)
            for document in loaded.documents:
                node = document.root
                if node is not None and key is not None:
                    node = node.get(key) if node.kind == "map" else None
                if node is not None:
                    self._walk(DocContext(loaded, document, workspace), node)


def _object(root: YNode | None) -> tuple[str, str] | None:
    """The object (kind, metadata.name) a source document defines or patches; None for a document of no
    one object (a kustomization, a JSON patch: its target is named in the kustomization)."""
    if root is None or root.kind != "map":
        return None
    kind, name = root.scalar("kind"), root.scalar("metadata", "name")
    if not isinstance(kind, str) or not isinstance(name, str) or kind in ("Kustomization", "Component"):
        return None
    return kind, name


def _followed(root: YNode) -> Iterator[tuple[YNode, str | None]]:
    """Every node under ``root`` with the word it follows: a value its key (``_field_set``), a list item
    the scalar item before it (an argument list's value follows its flag: ``- --max-num-seqs`` then
    ``- "8"``)."""
    stack: list[tuple[YNode, str | None]] = [(root, None)]
    while stack:
        current, before = stack.pop()
        yield current, before
        if current.kind == "map":
            stack.extend((value, _field_set(current, key)) for key, value in current.items())
        elif current.kind == "seq":
            stack.extend((item, str(prior.value) if prior is not None and prior.kind == "scalar" else None)
                         for prior, item in zip([None, *current.value], current.value))


def _field_set(pairs: YNode, key: YNode) -> str | None:
    """The field a value of the map ``pairs`` sets in the rendered object: its key, but for a JSON patch
    operation's ``value`` (RFC 6902 ``{op, path, value}``) the last field of its ``path``, and for the
    ``count`` of a kustomization's ``replicas:`` entry (``{name, count}``) the object's ``replicas``."""
    word = str(key.value) if key.kind == "scalar" else None
    if word == "value" and isinstance(path := pairs.scalar("path"), str) and pairs.get("op") is not None:
        fields = [part for part in path.split("/") if part and part != "-" and not part.isdigit()]
        # RFC 6901: "~1" is a "/" of the field's name, "~0" a "~"
        return fields[-1].replace("~1", "/").replace("~0", "~") if fields else word
    if word == "count" and pairs.get("name") is not None:
        return "replicas"
    return word


def _place_of(node: YNode) -> tuple[int, int]:
    """The line and column a rendered scalar's value is read at (``DocContext.location``: inside quotes)."""
    at = node.location("", inside_quotes=True)
    return at.line, at.column



def read_rendering(ctx: DocContext, rendered_text: str, sources: SourceMap, fallback_of: Fallback, identity: str,
                   reader: Reader, keep_unchanged: bool = False, indexed: bool = False) -> list[ServedModel]:
    """Served models of the rendered output, read by the registry like any file (its ConfigMaps indexed
    first, unless ``indexed``) and located in the source files they came from: a value where ``sources``
    finds it, else the object ``fallback_of(kind, name, document)`` names, else the file of ``ctx``.
    ``identity`` prefixes their identities. Unless ``keep_unchanged``, a served model whose every setting
    sits in one source file is left out (linting that file covers it). What the registry could not read
    in a rendered document is reported at the rendered file's own document."""
    rendered = parse_text(ctx.path, rendered_text)
    if rendered.error is not None:
        note(f"{ctx.path}: rendered output is not YAML: {rendered.error.message}")
        return []
    if not indexed:
        reader.index(rendered)  # env taken from a ConfigMap the same rendering holds
    mark = recorded_count(ctx.workspace)
    found: list[ServedModel] = []
    objects = {(root.scalar("kind"), root.scalar("metadata", "name")): document for document in rendered.documents
               if (root := document.root) is not None and root.kind == "map"}

    def service_place(model: ServedModel, service: Service) -> _Places | None:
        """Where a Service of this rendered text is defined (None for one of another part of the rendering:
        placed with that part); its own positions, apart from the model's."""
        document = objects.get(("Service", service.name))
        if document is None:
            return None
        return _Places(model, fallback_of("Service", service.name, document) or Location(ctx.path, 1, 1), sources,
                       document.root)

    done: set[int] = set()  # the pod facts and Services the rendering's models share, each placed once
    source = ctx.document.root
    at = (source.line, source.column) if source is not None else (ctx.document.line, 1)
    models, limit = reader.models(rendered), served_limit(ctx.workspace)
    if len(models) > limit:  # as a file's own are (registry.served_models): said at what renders them, not dropped
        ctx.document.problems.append((f"the rendering holds more than {limit:,} served models (limit "
                                      f"max-served-models): only the first {limit:,} are checked", *at))
        models = models[:limit]
    for model in models:
        root = rendered.documents[model.document].root
        kind, name = (root.scalar("kind"), root.scalar("metadata", "name")) if root is not None else (None, None)
        own = fallback_of(kind, name, rendered.documents[model.document]) or Location(ctx.path, 1, 1)
        place = _Places(model, own, sources, root)
        mapped = relocate(model, place.fallback, sources, identity, keep_unchanged, place)
        if mapped is not None and mapped.pod is not None:
            _place_pod(mapped.pod, place, ctx.path, done, lambda service, model=model: service_place(model, service))
        if mapped is not None:
            found.append(mapped)
    for document in rendered.documents:
        ctx.document.problems.extend((message, *at) for message, _, _ in document.problems)
    relocate_since(ctx.workspace, mark, lambda location: _in_sources(location, rendered, sources, fallback_of, ctx.path))
    return found


def _in_sources(location: Location, rendered: LoadedFile, sources: SourceMap, fallback_of: Fallback,
                path: str) -> Location:
    """Where the sources write what a rendered line holds (a reference the rendering names: a patch's value),
    else the source object of the rendered document that holds the line, else the rendered file's start:
    never a line of the rendered text, which the file named does not have."""
    if location.path != path:
        return location
    lines = rendered.text.splitlines()
    line = lines[location.line - 1] if 0 < location.line <= len(lines) else ""
    end = location.end_column if location.end_line in (None, location.line) and location.end_column else len(line) + 1
    text = line[location.column - 1:end - 1].strip().strip("\"'")
    found = sources.find(text, None) if text else None
    if found is not None:
        return found
    document = next((d for d in reversed(rendered.documents) if d.line <= location.line), None)
    root = document.root if document is not None else None
    if root is not None and root.kind == "map":
        own = fallback_of(root.scalar("kind"), root.scalar("metadata", "name"), document)
        if own is not None:
            return own
    return Location(path, 1, 1)


def relocate(model: ServedModel, fallback: Location, sources: SourceMap, identity: str,
             keep_unchanged: bool, place: _Places | None = None) -> ServedModel | None:
    """``model`` of a rendered file with every location moved to the source (see ``read_rendering``);
    ``place``: the positions of the model already placed (its pod's)."""
    place = place or _Places(model, fallback, sources)
    place.set_near(model.model)
    written = [token for token in model.argv if not token.synthetic]
    for token in written:  # a flag is where its word is (a switch's setting holds True, not the word)
        token.location = place.where(token.location, token.text)
    settings: list[Setting] = [s for group in model.occurrences.values() for s in group]
    settings += [s for s in (model.image, model.model, model.model_revision, model.gpus, model.replicas, model.strategy)
                 if s is not None]
    settings += list(model.env.values()) + [s for s, _ in model.inert]
    settings = list({id(s): s for s in settings}.values())
    for setting in settings:
        text = setting.text if setting.text is not None else (str(setting.value) if setting.value is not None else None)
        value, key = setting.location, setting.key_location
        setting.location = place.inline(value, key, setting.source) or place.where(value, text)
        if key is not None:
            setting.key_location = place.where(key, setting.source if setting.is_flag else None)
        setting.comments = place.comments((setting.key_location, setting.location), setting.comments)
    for token in model.argv:
        if token.synthetic:  # emitted by the operator or chart for a typed field: where that field is
            token.location = place.where(token.location, None)
        token.comments = place.comments((token.location,), token.comments)
    for directive in model.directives:
        directive.location = fallback
    model.location = fallback
    model.path = fallback.path
    model.comments = [(c.line, c.text) for c in sources.document_comments(fallback)]
    model.directives += directives_of(fallback.path, sources.document_comments(fallback))
    files = {s.location.path for s in settings if s.location is not fallback}
    if not keep_unchanged and not place.unmapped and len(files | {fallback.path}) == 1:
        return None  # nothing the overlay changed: the base file's own lint covers it
    model.identity = f"{identity}/{model.identity.split('#', 1)[1]}"
    return model


def _place_pod(pod: PodFacts, place: _Places, rendered: str, done: set[int],
               service_place: Callable[[Service], _Places | None]) -> None:
    """The locations of the pod around a rendered engine (probes, ports, volumes, resources) and of the
    Services that select it, moved from the rendered text to the sources: a probe at the word of its path
    where a source writes it, a port at its number, anything else at the object's template. A finding on
    the pod is then in the file and at the line that sets it, never at a line of the rendered text
    reported in the chart's or kustomization's own file."""

    def at(location: Location | None, text: str | None = None, where: _Places = place) -> Location | None:
        return where.where(location, text) if location is not None and location.path == rendered else location

    if id(pod) not in done:
        done.add(id(pod))
        pod.location = at(pod.location) or pod.location
        pod.resources_at = at(pod.resources_at)
        for name in ("shm", "gpu_access", "host_gpus", "shared_gpus"):
            fact = getattr(pod, name)
            if fact is not None:
                setattr(pod, name, (fact[0], at(fact[1])))
        for item in [*pod.volumes.values(), *pod.mounts]:
            item.location = at(item.location) or item.location
        for probe in pod.probes.values():
            written = at(probe.location, probe.path) or probe.location
            # a path only a template holds, found in another template than the object's: its template
            probe.location = written if written.path in place.sources.files or written.path == place.fallback.path \
                else place.fallback
            probe.port_location = at(probe.port_location, str(probe.port) if isinstance(probe.port, int) else None)
            if probe.timeout_location is not None and probe.timeout_location.path == rendered:
                probe.timeout_location = probe.location  # a bare number: placed with its probe
        settings = [*pod.requests.values(), *pod.limits.values(), *pod.env.values(),
                    *(s for s in (pod.devices, pod.max_surge, pod.max_unavailable) if s is not None)]
        for setting in settings:
            text = setting.text if setting.text is not None else str(setting.value)
            setting.location = at(setting.location, text) or setting.location
            setting.key_location = at(setting.key_location)
    for port in pod.pod_ports:
        if id(port) not in done:
            done.add(id(port))
            port.location = at(port.location, str(port.number) if isinstance(port.number, int) else None) or port.location
    for service in pod.services:
        where = service_place(service) if id(service) not in done and service.location.path == rendered else None
        if where is None:
            continue
        done.add(id(service))
        service.targets = [(target, at(location, str(target), where) or location) for target, location in service.targets]
        service.location = where.fallback


class _Places:
    """Where each rendered position of one served model is in the sources (each position mapped once)."""

    def __init__(self, model: ServedModel, fallback: Location, sources: SourceMap, rendered: YNode | None = None):
        self.fallback, self.sources = fallback, sources
        # the word each rendered value follows: its key in ``rendered`` (the object's document) where the
        # sources write the rendered keys, else (and for the argv's words) the word before it
        self.previous_of: dict[tuple[int, int], str | None] = {}
        if rendered is not None and sources.keyed:
            self.previous_of = {_place_of(node): before for node, before in _followed(rendered)
                                if before is not None and node.kind == "scalar"}
        self.previous_of.update({(token.location.line, token.location.column): before.text
                                 for before, token in zip(model.argv, model.argv[1:])})
        self.own = sources.object_at(fallback) if sources.keyed else None  # the object it is rendered from
        self.mapped: dict[tuple[int, int], Location] = {}
        self.found: set[int] = set()  # ids of the locations a source holds (not the fallback)
        self.anchor = (model.location.line, model.location.column)
        self.unmapped = False  # a value the sources do not hold: generated by the rendering
        self.near: Location | None = None  # where the sources set the model, once placed

    def where(self, location: Location, text: str | None) -> Location:
        key = (location.line, location.column)
        if key in self.mapped:
            return self.mapped[key]
        if key == self.anchor:  # the object itself (defaults such as the strategy are placed there)
            self.mapped[key] = self.fallback
            return self.fallback
        found = self.sources.find(text, self.previous_of.get(key), self.near, self.own) if text is not None else None
        if found is None and text is not None and f"ref:{text}" in self.sources.by_text:
            found = self.sources.find(f"ref:{text}", None)  # the reference inside a URL a source writes
        if found is None and text is not None and ":" in text:
            tag = text.rsplit(':', 1)[1]
            # an image written whole in a source, else its tag set alone (Helm values: image.tag)
            found = self.sources.find(f"tag:{tag}", None) or (self.sources.find(tag, None) if not tag.isdigit() else None)
        if found is None:
            self.unmapped = self.unmapped or text is not None
            found = self.fallback
        else:
            self.found.add(id(found))
        self.mapped[key] = found
        return found

    def set_near(self, model: Setting | None) -> None:
        """Place the model first: its other values are then looked for in the list entry that sets it
        first (a chart rendering one Deployment per ``models:`` entry, each with the same ``tp: 2``)."""
        if model is not None and self.near is None:
            text = model.text if model.text is not None else (str(model.value) if model.value is not None else None)
            placed = self.where(model.location, text)
            self.near = placed if id(placed) in self.found else None

    def inline(self, value: Location, key: Location | None, flag: str) -> Location | None:
        """The value of an inline ``--flag=value`` word (its span inside the flag's) at the same offset
        inside the source word the flag was placed at; searched alone, its text ("8") would be taken for
        any equal value of the sources (another field's ``targetRequests: 8``)."""
        if key is None or value.line != key.line or key.end_column is None \
                or not key.column < value.column < key.end_column:
            return None
        placed = self.where(key, flag)  # the word's own place (an argv token's, mapped first)
        if id(placed) not in self.found:
            return None
        if placed.end_column is None or placed.end_column - placed.column != key.end_column - key.column:
            return None  # the source word is not the rendered one written alike: no offset to carry over
        offset = value.column - key.column
        return Location(placed.path, placed.line, placed.column + offset, placed.line, placed.end_column)

    def comments(self, places: tuple[Location | None, ...], rendered: tuple[str, ...]) -> tuple[str, ...]:
        """The comments written at the source ``places`` (a setting's key line, then its value line when
        another), as the adapter reads them beside a value; ``rendered`` when no place is in a YAML source."""
        found: list[str] = []
        lines: set[tuple[str, int]] = set()
        for place in places:
            if place is None or id(place) not in self.found or (place.path, place.line) in lines:
                continue
            lines.add((place.path, place.line))
            written = self.sources.comments(place)
            if written is None:
                return rendered
            found.extend(written)
        return tuple(found) if lines else rendered
