//===- Passes.td - ttt conversion passes -------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_CONVERSION_PASSES_TD
#define TTT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TTTLowerRecurrent : Pass<"ttt-lower-recurrent"> {
  let summary = "Lower every ttt layer to its exact sequential reference loop";
  let description = [{
    Replaces each `ttt.kvb_layer` and `ttt.dwconv_layer` with upstream
    linalg/scf/tensor/arith/math ops that compute exactly what
    `docs/Semantics.md` specifies, the way the reference models do: for each
    (batch, head) stream (an `scf.forall`), a sequential `scf.for` over
    chunks that applies the fast weights to the chunk's queries, takes the
    hand-derived loss gradient of every trained weight on the chunk's keys and
    values, and updates the weights (clipping, sign, momentum, Newton-Schulz,
    weight normalization, inner steps). The `causal` order is lowered in its
    dual form (per-token weights from chunk-start gradients). A trailing
    partial chunk is handled; batch, heads and sequence length may be dynamic.
    16-bit layers are computed in f32 and rounded at the end.

    This lowering is the semantic oracle of every rewrite and the baseline of
    every benchmark; it makes no attempt to be parallel over chunks.

    Example:

    ```mlir
    %o = ttt.kvb_layer %q, %k, %v : ... weights(%w : tensor<2x16x16xf32>)
        model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
        schedule = #ttt.schedule<kind = chunked, size = 64> -> tensor<?x2x?x16xf32>
    ```

    becomes

    ```mlir
    %r = scf.forall (%b, %h) in (%B, 2) shared_outs(%out = %init) -> (...) {
      %o = scf.for %c = %c0 to %chunks step %c1 iter_args(%w0 = %w, %acc = %o0) {
        ... linalg.generic (apply, gradient, update) ...
      }
      scf.forall.in_parallel { tensor.parallel_insert_slice ... }
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // TTT_CONVERSION_PASSES_TD
