"""The one definition of a secret's name, for every place that must not repeat a value: environment
values (``redact``), env-file variables (unknown to the adapters, adapters/launch/dotenv.py), and the
options and settings whose values rules do not quote (CFG105, CFG106).

Apart from ``redact`` because a lint run asks only this: the redaction patterns are the bots' (each
compiled pattern costs start-up time, bench/RESULTS.md "One file: start-up").
"""

from __future__ import annotations


from . import lazy

# KEY is a word of the name (API_KEY, KEY_ID, not KEYBOARD_LAYOUT); TOKEN is not a count
# (MAX_NUM_BATCHED_TOKENS) or a tokenizer; AUTH is not an author (GIT_AUTHOR_NAME).
_SECRET_NAME = lazy.Pattern(r"(?i)TOKEN(?!S|IZER)|SECRET|PASSW|CREDENTIAL|AUTH(?!OR)|PRIVATE|(?:^|_)(?:API)?KEYS?(?:$|_)")
# names that match the pattern but hold no secret (paths, switches, sockets)
_NOT_SECRET = lazy.Pattern(r"(?i)(_PATH|_FILE|_DIR|_URL|_SOCK|_LOGIN|_NAME|_THROTTLE|_TIMEOUT)$")


def secret_name(name: str) -> bool:
    """Whether a variable, option or setting name says it holds a secret (``HF_TOKEN``, ``VLLM_API_KEY``,
    ``--api-key``, ``DB_PASSWORD``); an option is read as its variable would be written."""
    name = name.lstrip("-").replace("-", "_")
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET.search(name)
