"""The memory vLLM gives an MXFP4 mixture-of-experts checkpoint (gpt-oss) once loaded: it depends on the MoE
backend the GPU and the install select, because each backend pads the expert matrices differently and one keeps
the block scales twice.

From ``vllm/model_executor/layers/quantization/mxfp4.py`` (0.11.0 wheel; the same branches in 0.14):

* ``get_mxfp4_backend``: a GPU below compute capability 9 takes Marlin; Hopper and Blackwell datacenter GPUs take
  the Triton kernels where ``triton_kernels`` is installed with torch >= 2.8 (the vllm/vllm-openai image; the 0.11.0
  wheel does not require it, so a pip install falls back to Marlin), Blackwell (SM100) FlashInfer's MXFP4 x BF16
  MoE where FlashInfer is installed; from 0.12 the Triton path is limited to capabilities 9.0-10.x
  (vllm#29317), so SM12x (GB10, RTX 50) takes Marlin. ``VLLM_MXFP4_USE_MARLIN=1`` forces Marlin.
* ``create_weights``: experts hold 4-bit weights and one uint8 scale per 32 weights; Marlin pads the intermediate
  size per rank to 128 and the hidden size to 256, FlashInfer on SM100 both to 256, Triton the intermediate
  size to 64 only; biases are bf16.
* ``process_weights_after_loading`` (TRITON): the swizzled scales go to a ``PrecisionConfig`` while the layer keeps
  the loaded ``w13_weight_scale``/``w2_weight_scale``, so the scales are held twice, and the biases become fp32.

Measured: Marlin 65.97 GiB (gpt-oss-120b, H100, 0.10.1, vllm#23278), 13.72 GiB (gpt-oss-20b, A100, 0.19,
myoceane.fr; GB10, 0.13, "Using Marlin backend"), 17.22 GiB per rank at TP 4 (gpt-oss-120b, A100, 0.10.1.1);
Triton 64.38 GiB (gpt-oss-120b, H100, 0.14.1, vllm#33155 "Using Triton backend") and 13.47 GiB (gpt-oss-20b,
H100, llm-d-benchmark). The rest of the model (attention, embeddings and the LM head) loads at 16 bits.
"""

from __future__ import annotations

from ..engines.defaults import parse_version
from ..settings import truthy
from .architecture import Architecture
from .tables import GiB

TYPE_CHECKING = False  # true for type checkers: docs/ARCHITECTURE.md, "Code families"
if TYPE_CHECKING:
    from typing import Any

# torch 2.8, which the Triton MXFP4 path checks for (is_torch_equal_or_newer("2.8.0")), is pinned from 0.10.2
TRITON_SINCE = (0, 10, 2)
# vllm#29317: triton_kernels only for capabilities [9.0, 11.0) from 0.12
TRITON_SM12_UNTIL = (0, 12, 0)
MXFP4_BLOCK = 32
# backend -> (intermediate-size padding per rank, hidden-size padding, scale copies held, bias bytes)
_LAYOUT = {"marlin": (128, 256, 1, 2), "triton": (64, 1, 2, 4), "flashinfer": (256, 256, 1, 2)}


def _round_up(n: int, align: int) -> int:
    return -(-n // align) * align


def applies(arch: Architecture | None) -> bool:
    """Whether ``arch`` is an MXFP4 mixture of experts whose loaded size the shapes give."""
    return bool(arch is not None and (arch.quantization or "").lower() == "mxfp4" and arch.num_experts
                and arch.hidden_size and arch.intermediate_size and arch.num_layers and arch.vocab_size)


def vllm_backend(gpu: Any, version: str | None, env: dict) -> str:
    """The MoE backend vLLM ``version`` picks on ``gpu`` from the vllm/vllm-openai image (FlashInfer and triton_kernels
    installed), unless the container forces Marlin."""
    forced = env.get("VLLM_MXFP4_USE_MARLIN")
    if forced is not None and truthy(forced.value):
        return "marlin"
    try:
        cc = tuple(int(p) for p in str(getattr(gpu, "compute_capability", "") or "").split("."))
    except ValueError:
        cc = ()
    v = parse_version(version)
    if not cc or cc[0] < 9 or (v is not None and v < TRITON_SINCE):
        return "marlin"
    if cc[0] == 10:
        return "flashinfer"
    if cc[0] >= 11 and (v is None or v >= TRITON_SM12_UNTIL):
        return "marlin"
    return "triton"


def expert_bytes(arch: Architecture, tp: int, backend: str) -> int:
    """One rank's bytes of every layer's experts: gate/up and down weights, their scales and biases."""
    i_pad, h_pad, scale_copies, bias_bytes = _LAYOUT[backend]
    inter = _round_up(arch.intermediate_size // max(1, tp), i_pad)
    hidden = _round_up(arch.hidden_size, h_pad)
    elements = 3 * inter * hidden
    per_expert = elements // 2 + scale_copies * elements // MXFP4_BLOCK + (2 * inter + hidden) * bias_bytes
    return arch.num_layers * arch.num_experts * per_expert


def dense_bytes(arch: Architecture, tp: int) -> int:
    """One rank's 16-bit bytes outside the experts: attention projections (split by TP), the router and the
    vocabulary-parallel embeddings and LM head."""
    h = arch.hidden_size
    attn = 2 * h * arch.head_dim * (arch.num_attention_heads + arch.num_kv_heads) // max(1, tp)
    router = h * arch.num_experts
    return 2 * (arch.num_layers * (attn + router) + int(arch.embedding_params()) // max(1, tp))


def vllm_weight_bytes(model: Any, arch: Architecture, gpu: Any, version: str | None, tp: int, pp: int) -> tuple[int, str]:
    """One rank's loaded bytes and the backend that sizes them."""
    backend = vllm_backend(gpu, version, getattr(model, "env", None) or {})
    return (expert_bytes(arch, tp, backend) + dense_bytes(arch, tp)) // max(1, pp), backend


def resize_for_vllm(model: Any, run: Any, est: Any) -> None:
    """vLLM's MXFP4 MoE: the weights per GPU the backend loads, in place of the checkpoint's share."""
    if run.engine != "vllm" or not applies(run.arch):
        return
    per_rank, backend = vllm_weight_bytes(model, run.arch, run.gpu, run.version, run.tp, run.pp)
    est.weight_bytes_per_gpu = per_rank + run.extra.weight_bytes
    est.reasons.append(f"MXFP4 experts as vLLM's {backend} MoE backend loads them on {run.gpu.name}: "
                       f"{per_rank / GiB:.2f} GiB per GPU")
