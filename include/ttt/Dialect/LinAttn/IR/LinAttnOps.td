//===- LinAttnOps.td - linattn ops -------------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_LINATTN_IR_LINATTNOPS_TD
#define TTT_DIALECT_LINATTN_IR_LINATTNOPS_TD

include "ttt/Dialect/LinAttn/IR/LinAttnBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def LinAttn_FeatureMapKind : I32EnumAttr<"FeatureMapKind", "feature map", [
    I32EnumAttrCase<"identity", 0>, I32EnumAttrCase<"mlp", 1>,
    I32EnumAttrCase<"swiglu", 2>]> {
  let cppNamespace = "::mlir::linattn";
}

def LinAttn_Activation : I32EnumAttr<"Activation", "hidden activation", [
    I32EnumAttrCase<"silu", 0>, I32EnumAttrCase<"gelu_tanh", 1>,
    I32EnumAttrCase<"relu", 2>]> {
  let cppNamespace = "::mlir::linattn";
}

def LinAttn_Mask : I32EnumAttr<"Mask", "which keys a query reads", [
    I32EnumAttrCase<"token_causal", 0>, I32EnumAttrCase<"chunk_strict", 1>,
    I32EnumAttrCase<"chunk_inclusive", 2>, I32EnumAttrCase<"full", 3>]> {
  let cppNamespace = "::mlir::linattn";
}

def LinAttn_ScanKind : I32EnumAttr<"ScanKind", "chunk-state recurrence", [
    I32EnumAttrCase<"additive", 0>, I32EnumAttrCase<"decayed", 1>,
    I32EnumAttrCase<"affine", 2>, I32EnumAttrCase<"residual_affine", 3>]> {
  let cppNamespace = "::mlir::linattn";
}

def LinAttn_ScanMode : I32EnumAttr<"ScanMode", "which state a chunk gets", [
    I32EnumAttrCase<"inclusive", 0>, I32EnumAttrCase<"exclusive", 1>]> {
  let cppNamespace = "::mlir::linattn";
}

def LinAttn_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

def LinAttn_FeatureMapOp : LinAttn_Op<"feature_map", [Pure]> {
  let summary = "A static feature map phi applied to every token";
  let description = [{
    `identity`: `phi(x) = x`; `mlp`: `phi(x) = act(x W0 (+ b0))` with weights
    `W0 [D, F]` (and `b0 [1, F]` when two weights are given); `swiglu`:
    `phi(x) = silu(x W0) * (x W2)` with weights `W0, W2 : [D, F]`. With
    `append_one`, a constant 1 is appended as the last feature (the bias of a
    linear output layer is an extra constant feature). Weights are
    `[H, rows, cols]` or `[B, H, rows, cols]`.

    ```mlir
    %kf = linattn.feature_map %k weights(%w0, %w2 : tensor<4x64x128xf32>, tensor<4x64x128xf32>)
        kind = swiglu : tensor<?x4x?x64xf32> -> tensor<?x4x?x128xf32>
    ```
  }];
  let arguments = (ins
    LinAttn_FloatTensor:$input,
    Variadic<LinAttn_FloatTensor>:$weights,
    LinAttn_FeatureMapKind:$kind,
    DefaultValuedAttr<LinAttn_Activation, "::mlir::linattn::Activation::silu">:$activation,
    UnitAttr:$append_one
  );
  let results = (outs LinAttn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weights` `(` $weights^ `:` type($weights) `)`)? `kind` `=` $kind
    (`activation` `=` $activation^)? (`append_one` $append_one^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LinAttn_AttentionOp : LinAttn_Op<"attention", [AttrSizedOperandSegments, Pure]> {
  let summary = "Linear attention in its general one-op form";
  let description = [{
    With `S_{-1} = initial` (zero when absent) and `alpha` the optional decay:

    - `token_causal`: `S_t = alpha_t S_{t-1} + k_t^T v_t`, `o_t = q_t S_t`
      (decay `[B, H, T]`);
    - `chunk_inclusive`: `S_c = alpha_c S_{c-1} + K_c^T V_c`, `O_c = Q_c S_c`;
    - `chunk_strict`: `O_c = Q_c S_{c-1}`, then `S_c` as above (chunks of
      `chunk_size` tokens, decay `[B, H, N]`);
    - `full`: `O = Q (S_{-1} + K^T V)` for all queries (q may be longer or
      shorter than k and v; no decay).

    With `scale`, `factor` or `mean`, each `k_t^T v_t` above is weighed by
    `factor * eta_t`, divided by the number of tokens it is summed over (the
    chunk's, or all T for `full`) when `mean` is set, as `chunk_reduce`
    weighs it; `token_causal` takes no `mean`. `scale` is `[B, H, T]` or
    `[B, H, T, n]` with `scale_column` naming the column to use (a TTT
    layer's per-weight learning rates).

    `q, k : [B, H, T, F]`, `v : [B, H, T, Dv]`, `initial : [H, F, Dv]` or
    `[B, H, F, Dv]`, result `[B, H, Tq, Dv]`. `linattn-decompose` rewrites the
    op into `chunk_reduce`, `scan` and `chunk_apply`.

    ```mlir
    %o = linattn.attention %q, %k, %v initial(%s0 : tensor<4x128x64xf32>)
        mask = chunk_strict chunk_size = 2048
        : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x64xf32>
        -> tensor<?x4x?x64xf32>
    %f = linattn.attention %q, %k, %v scale(%lr : tensor<?x4x?x3xf32>)
        scale_column = 1 mask = full factor = 0.5 mean
        : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x64xf32>
        -> tensor<?x4x?x64xf32>
    ```
  }];
  let arguments = (ins
    LinAttn_FloatTensor:$q,
    LinAttn_FloatTensor:$k,
    LinAttn_FloatTensor:$v,
    Optional<LinAttn_FloatTensor>:$initial,
    Optional<LinAttn_FloatTensor>:$decay,
    Optional<LinAttn_FloatTensor>:$scale,
    DefaultValuedAttr<I64Attr, "0">:$scale_column,
    LinAttn_Mask:$mask,
    OptionalAttr<I64Attr>:$chunk_size,
    DefaultValuedAttr<F64Attr, "1.0">:$factor,
    UnitAttr:$mean
  );
  let results = (outs LinAttn_FloatTensor:$output);
  let assemblyFormat = [{
    $q `,` $k `,` $v
    (`initial` `(` $initial^ `:` type($initial) `)`)?
    (`decay` `(` $decay^ `:` type($decay) `)`)?
    (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`scale_column` `=` $scale_column^)?
    `mask` `=` $mask (`chunk_size` `=` $chunk_size^)?
    (`factor` `=` $factor^)? (`mean` $mean^)?
    attr-dict `:` type($q) `,` type($k) `,` type($v) `->` type($output)
  }];
  let hasVerifier = 1;
}

def LinAttn_ChunkReduceOp : LinAttn_Op<"chunk_reduce", [Pure]> {
  let summary = "Per-chunk state contributions G_c = factor * sum of eta k^T v";
  let description = [{
    `G_c = factor / (n_c if mean else 1) * sum over tokens t of chunk c of
    eta_t k_t^T v_t`, with chunks of `chunk_size` tokens (the last one may be
    shorter; n_c is its length; without `chunk_size` the whole sequence is
    one chunk), `eta` the optional per-token scale `[B, H, T]`, or column
    `scale_column` of `[B, H, T, n]` (1 when absent), and `factor` a constant
    (the learning rate, loss scale and step sign of a TTT layer fold into
    it). `k : [B, H, T, F]`, `v : [B, H, T, Dv]`, result `[B, H, N, F, Dv]`,
    `N = ceil(T / chunk_size)` (1 without `chunk_size`).

    ```mlir
    %g = linattn.chunk_reduce %k, %v scale(%eta : tensor<?x4x?xf32>) chunk_size = 64
        factor = -1.0 mean
        : tensor<?x4x?x128xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x128x64xf32>
    ```
  }];
  let arguments = (ins
    LinAttn_FloatTensor:$k,
    LinAttn_FloatTensor:$v,
    Optional<LinAttn_FloatTensor>:$scale,
    DefaultValuedAttr<I64Attr, "0">:$scale_column,
    OptionalAttr<I64Attr>:$chunk_size,
    DefaultValuedAttr<F64Attr, "1.0">:$factor,
    UnitAttr:$mean
  );
  let results = (outs LinAttn_FloatTensor:$result);
  let assemblyFormat = [{
    $k `,` $v (`scale` `(` $scale^ `:` type($scale) `)`)?
    (`scale_column` `=` $scale_column^)?
    (`chunk_size` `=` $chunk_size^)? (`factor` `=` $factor^)? (`mean` $mean^)?
    attr-dict `:` type($k) `,` type($v) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LinAttn_ChunkMeanOp : LinAttn_Op<"chunk_mean", [Pure]> {
  let summary = "The mean of a per-token value over each chunk";
  let description = [{
    `m_c = mean over the tokens t of chunk c of x_t` for `x : [B, H, T]`,
    result `[B, H, N]` (a shorter last chunk averages its own tokens). LaCT's
    momentum coefficient of a chunk is this mean of per-token coefficients.

    ```mlir
    %mu = linattn.chunk_mean %m chunk_size = 2048 : tensor<?x4x?xf32> -> tensor<?x4x?xf32>
    ```
  }];
  let arguments = (ins LinAttn_FloatTensor:$input, I64Attr:$chunk_size);
  let results = (outs LinAttn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `chunk_size` `=` $chunk_size attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LinAttn_ScanOp : LinAttn_Op<"scan", [AttrSizedOperandSegments, Pure]> {
  let summary = "A scan over chunk states";
  let description = [{
    With `S_{-1} = initial` (zero when absent) and per-chunk inputs `G_c`:

    - `additive`: `S_c = S_{c-1} + G_c` (a prefix sum);
    - `decayed`: `S_c = alpha_c S_{c-1} + G_c` with `decay : [B, H, N]`
      (momentum, gated linear attention);
    - `affine`: `S_c = A_c S_{c-1} + G_c` with `transition : [B, H, N, F, F]`;
    - `residual_affine`: `S_c = S_{c-1} + A_c S_{c-1} + G_c`, the same with
      `I + A_c` as transition, which is how a gradient step on the MSE loss
      (gradient frozen per chunk) moves the state without materializing I.

    `inclusive` returns `S_c` for chunk c, `exclusive` returns `S_{c-1}`.
    The recurrence is associative on pairs `(A, G)`, so it may be evaluated
    by any parallel scan. `inputs : [B, H, N, F, Dv]`, result the same shape.

    ```mlir
    %u = linattn.scan %g decay(%mu : tensor<?x4x?xf32>) kind = decayed mode = inclusive
        : tensor<?x4x?x128x64xf32> -> tensor<?x4x?x128x64xf32>
    ```
  }];
  let arguments = (ins
    LinAttn_FloatTensor:$inputs,
    Optional<LinAttn_FloatTensor>:$initial,
    Optional<LinAttn_FloatTensor>:$decay,
    Optional<LinAttn_FloatTensor>:$transition,
    LinAttn_ScanKind:$kind,
    LinAttn_ScanMode:$mode
  );
  let results = (outs LinAttn_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs
    (`initial` `(` $initial^ `:` type($initial) `)`)?
    (`decay` `(` $decay^ `:` type($decay) `)`)?
    (`transition` `(` $transition^ `:` type($transition) `)`)?
    `kind` `=` $kind `mode` `=` $mode
    attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LinAttn_StateTransformOp : LinAttn_Op<"state_transform", [Pure]> {
  let summary = "Newton-Schulz orthogonalization of every chunk state";
  let description = [{
    Applies Muon's Newton-Schulz iteration to each `[F, Dv]` state of
    `[B, H, N, F, Dv]` independently: transpose if `F > Dv`, divide by the
    Frobenius norm plus `eps`, then `steps` times
    `A = X X^T; X = a X + (b A + c A A) X` with the step's `(a, b, c)` from
    `coeffs` (one triple for every step, or one per step), transpose back.
    The states must not depend on each other, which is what makes Muon on a
    state-independent update parallel over chunks.

    ```mlir
    %d = linattn.state_transform %u steps = 5
        coeffs = [3.4445, -4.775, 2.0315] eps = 1.0e-07
        : tensor<?x4x?x128x64xf32> -> tensor<?x4x?x128x64xf32>
    ```
  }];
  let arguments = (ins
    LinAttn_FloatTensor:$inputs,
    I64Attr:$steps,
    DenseF64ArrayAttr:$coeffs,
    DefaultValuedAttr<F64Attr, "1e-7">:$eps,
    DefaultValuedAttr<F64Attr, "1.0">:$factor
  );
  let results = (outs LinAttn_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs `steps` `=` $steps `coeffs` `=` $coeffs (`eps` `=` $eps^)?
    (`factor` `=` $factor^)?
    attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def LinAttn_ChunkApplyOp : LinAttn_Op<"chunk_apply", [AttrSizedOperandSegments, Pure]> {
  let summary = "Apply per-chunk states to queries";
  let description = [{
    `o_t = q_t S_{chunk(t)}` for queries `q : [B, H, T, F]` and states
    `[B, H, N, F, Dv]`; without `chunk_size` there is one state (N = 1) that
    every query reads. With `intra(k, v)` (which needs `chunk_size`) it also
    adds the token-causal term inside the chunk, `intra_factor / (n_c if
    intra_mean else 1) * sum over j <= t in chunk(t) of eta_j (q_t . k_j)
    v_j`, with `eta` the optional per-token scale `intra_scale : [B, H, T]`,
    or column `scale_column` of `[B, H, T, n]` (1 when absent), and n_c the
    chunk's length, as `chunk_reduce` scales the chunk states. Result
    `[B, H, T, Dv]`.

    ```mlir
    %o = linattn.chunk_apply %q, %s chunk_size = 64
        : tensor<?x4x?x128xf32>, tensor<?x4x?x128x64xf32> -> tensor<?x4x?x64xf32>
    %c = linattn.chunk_apply %q, %s intra(%k, %v : tensor<?x4x?x128xf32>,
        tensor<?x4x?x64xf32>) intra_scale(%eta : tensor<?x4x?xf32>)
        chunk_size = 64 intra_factor = 0.5
        : tensor<?x4x?x128xf32>, tensor<?x4x?x128x64xf32> -> tensor<?x4x?x64xf32>
    ```
  }];
  let arguments = (ins
    LinAttn_FloatTensor:$q,
    LinAttn_FloatTensor:$states,
    Optional<LinAttn_FloatTensor>:$intra_k,
    Optional<LinAttn_FloatTensor>:$intra_v,
    Optional<LinAttn_FloatTensor>:$intra_scale,
    DefaultValuedAttr<I64Attr, "0">:$scale_column,
    OptionalAttr<I64Attr>:$chunk_size,
    DefaultValuedAttr<F64Attr, "1.0">:$intra_factor,
    UnitAttr:$intra_mean
  );
  let results = (outs LinAttn_FloatTensor:$output);
  let assemblyFormat = [{
    $q `,` $states
    (`intra` `(` $intra_k^ `,` $intra_v `:` type($intra_k) `,` type($intra_v) `)`)?
    (`intra_scale` `(` $intra_scale^ `:` type($intra_scale) `)`)?
    (`scale_column` `=` $scale_column^)?
    (`chunk_size` `=` $chunk_size^)?
    (`intra_factor` `=` $intra_factor^)? (`intra_mean` $intra_mean^)?
    attr-dict `:` type($q) `,` type($states) `->` type($output)
  }];
  let hasVerifier = 1;
}

#endif // TTT_DIALECT_LINATTN_IR_LINATTNOPS_TD
