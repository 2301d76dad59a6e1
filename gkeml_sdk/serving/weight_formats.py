"""How weights are stored: bytes per parameter for each dtype and quantization, and the CUDA
compute capability each needs (GKE's "Best practices for optimizing LLM inference with GPUs")."""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.core.lookup import UnknownName


@dataclass(frozen=True)
class WeightFormat:
    """Storage of weights: bytes per parameter, and whether it needs a pre-quantized checkpoint.

    Example:
        >>> weight_format("awq").bytes_per_param, weight_format("awq").prequantized
        (0.54, True)
    """

    name: str
    bytes_per_param: float
    prequantized: bool = False  # AWQ/GPTQ load quantized checkpoints; others quantize in flight
    min_compute: float = 7.0  # CUDA compute capability its kernels need
    note: str = ""


DTYPE_BYTES: dict[str, float] = {"bfloat16": 2.0, "float16": 2.0, "float32": 4.0}
DTYPE_MIN_COMPUTE: dict[str, float] = {"bfloat16": 8.0, "float16": 7.0, "float32": 7.0}
KV_CACHE_BYTES: dict[str, float | None] = {"auto": None, "fp8": 1.0}  # None: same as dtype

# 4-bit formats carry per-group scales and zeros, +5-10 % by GKE's sizing guide; 8 % keeps the
# estimate on the safe side (70B -> 37.8 GB against the table's 35-38 GB).
_INT4 = 0.5 * 1.08

QUANTIZATIONS: tuple[WeightFormat, ...] = (
    # Native from 8.9 (L4, H100); Ampere runs fp8 weights through weight-only kernels.
    WeightFormat("fp8", 1.0, min_compute=8.0),
    WeightFormat("int8", 1.0),
    WeightFormat("awq", _INT4, prequantized=True, min_compute=7.5),
    WeightFormat("gptq", _INT4, prequantized=True),
    WeightFormat("bitsandbytes", 1.0),
    WeightFormat("bitsandbytes-nf4", _INT4),
)


def weight_format(name: str) -> WeightFormat:
    """The row of a quantization name (`UnknownName` lists the valid ones).

    Example:
        >>> weight_format("fp8").bytes_per_param
        1.0
    """
    for row in QUANTIZATIONS:
        if row.name == name:
            return row
    raise UnknownName("quantization", name, [q.name for q in QUANTIZATIONS])
