"""How an engine is started, whatever the format: shell words, env, wrappers, containers, pods, scripts, files."""
