"""Adapters: the only format-aware code, in three layers whose imports run downward only.

- ``formats/``: one module per input format (a Kubernetes workload, a KServe resource, a compose file, a
  shell script ...): it recognises its documents and builds their located served models.
- ``launch/``: how an engine is started, whatever the format: the shell lexer, env values spliced into
  the argv, wrapper images, containers and the pod around them, scripts, Dockerfiles, engine
  ``--config`` files, the repository files a model names.
- ``core/``: the protocol every adapter meets, the registry that tries them, the document and run
  contexts, and the recognition helpers every format shares.

``tests/architecture/test_layout.py`` keeps the direction (formats -> launch -> core) and
that no format imports another.
"""
