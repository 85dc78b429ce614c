"""CFG205 reads the reason a person wrote above the whole command of a shell script, not only the flag's line."""

from __future__ import annotations

from pathlib import Path

from helpers import codes, lint_text

_COMMAND = """#!/bin/sh
{heading}vllm serve Qwen/Qwen3-8B \\
  --max-model-len 8192 \\
  --gpu-memory-utilization 0.9 \\
  --max-num-seqs 4
"""


def test_a_reason_above_the_script_command_explains_its_pin(tmp_path: Path) -> None:
    heading = "# Reduced parameters for 16GB VRAM to avoid KV cache issues\n"
    assert "CFG205" not in codes(lint_text(tmp_path, _COMMAND.format(heading=heading), "serve.sh"))


def test_a_label_above_the_script_command_is_no_reason(tmp_path: Path) -> None:
    heading = "# Start the server\n"
    assert "CFG205" in codes(lint_text(tmp_path, _COMMAND.format(heading=heading), "serve.sh"))
