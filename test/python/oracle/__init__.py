"""Independent NumPy reference implementation of the `ttt` layer ops.

See `ttt_oracle.py` and docs/Semantics.md (normative).
"""

from .ttt_oracle import (  # noqa: F401
    LACT_NS_COEFFS,
    NVS_NS_COEFF,
    dwconv_forward,
    dwconv_layer,
    dwconv_loss_and_grad,
    kvb_layer,
    loss_and_grads,
    model_forward,
    newton_schulz,
    output_transform,
    token_losses_and_factors,
    weight_names,
)
