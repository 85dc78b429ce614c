"""The protocol, the registry, the document and run contexts, and the recognition helpers every format shares."""
