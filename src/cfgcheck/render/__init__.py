"""The input stage: Helm charts and kustomizations rendered, sandboxed, into files with a source map.

- ``kustomize.py`` and ``helm.py`` render (``kubectl kustomize``, ``helm template`` on a staged copy of what
  Git tracks, in the sandbox of ``sandbox.py``), hand each rendered stream to the adapter registry, which
  reads it like any file (``Reader``), and place what it read at the source lines (``source_map.py``).
- ``source_map.py``: where each rendered value came from (a base, an overlay, a patch, a values file, the
  word of a template), with the comments written there.
- ``helm_sandbox.py`` stages a chart with its local dependencies and runs ``helm template``;
  ``staging.py`` is what of the repository a renderer may see.
- ``charts.py``: what the run knows of charts without rendering one (where they are, whether helm
  renders in this run, the notes on templates that are not linted one by one).

The adapter registry imports ``kustomize`` and ``helm`` when it reads a file they render, as it imports a
format; the lint run and diff mode import only ``charts`` and ``staging``.
"""
