//===- Passes.td - ttt dialect passes ----------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_TRANSFORMS_PASSES_TD
#define TTT_DIALECT_TTT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TTTExplain : Pass<"ttt-explain"> {
  let summary = "Explain, per layer, what is proven and which lowering is exact";
  let description = [{
    Emits one remark per TTT layer: whether its output layer is linear (the
    assumption of Theorem 5.1), whether its feature map is static, whether the
    chunk-to-chunk state update is additive, affine or non-affine in the
    state, which lowering is exact (prefix sum, affine scan, single
    full-batch step, chunk-sequential loop), what blocks a better one, and
    whether `ttt-to-linattn` rewrites it, and, for a layer it rewrites,
    which form `ttt-to-cpu` (`form=auto`) runs it in on a CPU with `cores`
    cores and why. The IR is not changed.

    ```
    remark: ttt-explain: exact lowering: chunk-sequential loop; proven: output
    layer W1 (out) is linear and bias-free; blocked by: W0 (gate), W2 (up)
    are trained, so the features of q and k depend on the history (dynamic
    kernel); row weight normalization after each update ...
    ```
  }];
  let options = [
    Option<"cores", "cores", "unsigned", /*default=*/"0",
           "The cores of the CPU whose form choice is explained (0: this "
           "machine's)">,
  ];
}

def TTTSimplify : Pass<"ttt-simplify"> {
  let summary = "Exact folds, and the paper's model-changing variants on request";
  let description = [{
    By default only exact folds run, each keeping the layer's function:
    gradient ascent becomes descent with a negated `lr_scale` (the update is
    odd in the gradient), an all-zero momentum operand is dropped, a splat
    constant learning rate folds into `lr_scale`, final-weight results that
    nobody uses are dropped, and a chunked update-then-apply layer whose
    static sequence fits in one chunk becomes a single full-batch step.

    The simplifications of the paper's ablation (Table 2) change the model
    and need retraining; each runs only behind its own option and emits a
    remark saying what changed:
    `freeze-inner` (V1: only the output layer trains), `drop-weight-norm`
    (V2), `collapse-mlp` (V3: one linear layer, q^ = q, k^ = k; needs the
    output weight to be square), `drop-token-lr` (V4), `drop-momentum` (V5),
    `drop-muon` (V6; on a layer without Muon it removes the gradient
    clipping, as the paper's V6 of ViT^3 does).
  }];
  let options = [
    Option<"freezeInner", "freeze-inner", "bool", /*default=*/"false",
           "V1: train only the output layer (changes the model)">,
    Option<"dropWeightNorm", "drop-weight-norm", "bool", /*default=*/"false",
           "V2: remove weight normalization (changes the model)">,
    Option<"collapseMLP", "collapse-mlp", "bool", /*default=*/"false",
           "V3: replace the fast-weight network by one linear layer (changes "
           "the model)">,
    Option<"dropTokenLR", "drop-token-lr", "bool", /*default=*/"false",
           "V4: remove per-token learning rates (changes the model)">,
    Option<"dropMomentum", "drop-momentum", "bool", /*default=*/"false",
           "V5: remove momentum (changes the model)">,
    Option<"dropMuon", "drop-muon", "bool", /*default=*/"false",
           "V6: remove Newton-Schulz orthogonalization, or the gradient "
           "clipping of a layer without it (changes the model)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TTTResolveRaised : Pass<"ttt-resolve-raised"> {
  let summary = "Keep a raised layer's rewrite, or its original nodes";
  let description = [{
    Replaces every `ttt.raised %layer from %nodes` by `%layer` when no ttt
    layer op is left in its computation (a pass rewrote the layer), and by
    `%nodes` otherwise, with a remark on the layer that says why it was kept
    as it was. What the chosen operand no longer needs is erased. The
    `ttt-onnx-optimize` pipeline runs it after `ttt-to-linattn` when
    `ttt-simplify` options are given for an ONNX model:

    ```
    ttt-opt model.onnx -o v2.onnx \
        --ttt-simplify="freeze-inner drop-weight-norm"
    ```
  }];
}

#endif // TTT_DIALECT_TTT_TRANSFORMS_PASSES_TD
