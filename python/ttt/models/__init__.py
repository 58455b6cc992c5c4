"""PyTorch reference models of the TTT-KVB layer families, exportable to ONNX.

Needs torch (python/requirements-models.txt); nothing under test/ imports this package.
"""

from .blocks import TinyTTTBlock
from .export import adapt, export_scripted, export_traced
from .layers import (
    LACT_NS_COEFFS,
    NVS_NS_COEFFS,
    LaCTLinear,
    LaCTSwiGLU,
    PlainLinear,
    TTTLayer,
    TTTLinear,
    TTTMLP,
    ViT3DWConv,
    ViT3GLU,
    lact_llm,
    lact_nvs,
    lact_variant,
)

__all__ = [
    "LACT_NS_COEFFS", "NVS_NS_COEFFS", "TTTLayer", "LaCTSwiGLU", "LaCTLinear", "ViT3GLU",
    "ViT3DWConv", "TTTLinear", "TTTMLP", "PlainLinear", "TinyTTTBlock", "lact_llm",
    "lact_variant", "lact_nvs", "adapt", "export_traced", "export_scripted",
]
