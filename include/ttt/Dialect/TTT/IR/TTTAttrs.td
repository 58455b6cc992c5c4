//===- TTTAttrs.td - ttt layer attributes ------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each knob of a TTT layer is its own attribute so that analyses can read one
// aspect (the model, the loss, the update, the schedule) without the others,
// and a new knob slots in without touching the rest.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_IR_TTTATTRS_TD
#define TTT_DIALECT_TTT_IR_TTTATTRS_TD

include "ttt/Dialect/TTT/IR/TTTBase.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def TTT_ModelKind : I32EnumAttr<"ModelKind", "fast-weight network", [
    I32EnumAttrCase<"linear", 0>, I32EnumAttrCase<"mlp", 1>,
    I32EnumAttrCase<"swiglu", 2>, I32EnumAttrCase<"glu", 3>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_Activation : I32EnumAttr<"Activation", "hidden activation", [
    I32EnumAttrCase<"silu", 0>, I32EnumAttrCase<"gelu_tanh", 1>,
    I32EnumAttrCase<"relu", 2>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_LossKind : I32EnumAttr<"LossKind", "inner key-value binding loss", [
    I32EnumAttrCase<"dot", 0>, I32EnumAttrCase<"mse", 1>,
    I32EnumAttrCase<"layernorm_mse", 2>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_Reduction : I32EnumAttr<"Reduction", "how token losses are combined", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_Sign : I32EnumAttr<"Sign", "direction of the inner step", [
    I32EnumAttrCase<"descent", 0>, I32EnumAttrCase<"ascent", 1>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_ClipKind : I32EnumAttr<"ClipKind", "gradient clipping G / (|G| + 1)", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"output_channels", 1>,
    I32EnumAttrCase<"frobenius", 2>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_WeightNormKind : I32EnumAttr<"WeightNormKind",
    "weight normalization after each update", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"output_channels", 1>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_UpdateBase : I32EnumAttr<"UpdateBase",
    "what the step adds the scaled update to", [
    I32EnumAttrCase<"weights", 0>, I32EnumAttrCase<"update", 1>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_ScheduleKind : I32EnumAttr<"ScheduleKind", "how the sequence is scheduled", [
    I32EnumAttrCase<"chunked", 0>, I32EnumAttrCase<"full_batch", 1>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

def TTT_UpdateOrder : I32EnumAttr<"UpdateOrder", "update/apply order in a chunk", [
    I32EnumAttrCase<"apply_then_update", 0>,
    I32EnumAttrCase<"update_then_apply", 1>,
    I32EnumAttrCase<"causal", 2>]> {
  let cppNamespace = "::mlir::ttt";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def TTT_ModelAttr : TTT_Attr<"FastWeightModel", "model"> {
  let summary = "The fast-weight network f and which of its weights train";
  let description = [{
    Row-vector convention, weights stored input x output:

    | kind | weights, in operand order | f(x) |
    |---|---|---|
    | `linear` | W (, b if `bias`) | `x W (+ b)` |
    | `mlp` | W0 (, b0), W1 (, b1) | `act(x W0 + b0) W1 + b1` |
    | `swiglu` | W0 (gate), W1 (out), W2 (up) | `(silu(x W0) * (x W2)) W1` |
    | `glu` | Wa, Wg | `(x Wa) * silu(x Wg)` |

    `trained` lists the indices (into the weight operands) that the inner loop
    updates, sorted and unique. `activation` only applies to `mlp`; `bias` only
    to `linear` and `mlp`.

    Example (LaCT with only the output layer trained):

    ```mlir
    #ttt.model<kind = swiglu, trained = [1]>
    ```
  }];
  let parameters = (ins
    EnumParameter<TTT_ModelKind>:$kind,
    TTT_I64ListParameter<"indices of the trained weights">:$trained,
    DefaultValuedParameter<"bool", "false">:$bias,
    TTT_DefaultEnumParameter<TTT_Activation, "::mlir::ttt::Activation::silu">:$activation
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of weight operands this model takes.
    unsigned getNumWeights() const;
    /// True if weight `index` is a bias vector (a constant input feature).
    bool isBias(unsigned index) const;
    /// True if weight `index` is listed in `trained`.
    bool isTrained(unsigned index) const;
    /// Index of the layer whose output is the model's output (the one the
    /// linear-attention theorems need to be linear and bias-free).
    unsigned getOutputWeightIndex() const;
    /// Index of the output layer's bias, if the model has one.
    std::optional<unsigned> getOutputBiasIndex() const;
    /// The weight's name in the model's math, e.g. "W0 (gate)".
    ::llvm::StringRef getWeightRole(unsigned index) const;
  }];
}

def TTT_LossAttr : TTT_Attr<"Loss", "loss"> {
  let summary = "The inner loss that binds keys to values";
  let description = [{
    Per token: `dot` is `-<F(k), v>`, `mse` is `1/2 |F(k) - v|^2`,
    `layernorm_mse` is `1/2 |gamma * LN(f(k)) + beta - v|^2` (LayerNorm over the
    output features with epsilon `eps`; the layer's output then is
    `gamma * LN(f(q)) + beta` too). The loss of a set of n tokens is
    `scale / (n if reduction = mean else 1) * sum of lr_t * loss_t`.

    ```mlir
    #ttt.loss<kind = dot, scale = 0.33333333333333331, reduction = mean>
    ```
  }];
  let parameters = (ins
    EnumParameter<TTT_LossKind>:$kind,
    TTT_F64Parameter<"constant loss factor", "1.0">:$scale,
    TTT_DefaultEnumParameter<TTT_Reduction, "::mlir::ttt::Reduction::sum">:$reduction,
    TTT_F64Parameter<"LayerNorm epsilon (layernorm_mse only)", "1e-6">:$eps
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TTT_NewtonSchulzAttr : TTT_Attr<"NewtonSchulz", "newton_schulz"> {
  let summary = "Muon: Newton-Schulz orthogonalization of each update";
  let description = [{
    `X = U` (transposed if it has more rows than columns), `X /= |X|_F + eps`,
    then for each step s: `A = X X^T; X = a_s X + (b_s A + c_s A A) X`, and the
    transpose is undone. `coeffs` holds one `(a, b, c)` triple used for every
    step, or one triple per step. `steps = 0` only normalizes the update
    (LaCT-NVS's default, `muon_update_steps = 0`).

    `compute = bf16` (or `f16`) runs the iteration as LaCT ships it: the
    update rounded to that type, every product and sum of the iteration
    rounded to it after being computed in f32 (matrix products accumulate
    in f32, as PyTorch's and cuBLAS's bf16 GEMMs do), the result widened
    back. Without it the iteration runs in the weights' type.

    ```mlir
    #ttt.newton_schulz<steps = 5, coeffs = [3.4445, -4.775, 2.0315]>
    #ttt.newton_schulz<steps = 0, coeffs = [1.0, 0.0, 0.0], compute = bf16>
    ```
  }];
  let parameters = (ins
    "int64_t":$steps,
    TTT_F64ListParameter<"(a, b, c) per step, flattened">:$coeffs,
    TTT_F64Parameter<"added to the Frobenius norm", "1e-7">:$eps,
    OptionalParameter<"::mlir::Type",
                      "the narrower float type it computes in">:$compute
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The (a, b, c) coefficients of step `step` (0-based).
    std::array<double, 3> getStepCoeffs(int64_t step) const;
  }];
}

// Prints the nested attribute with its full name so the update reads as
// `orthogonalize = #ttt.newton_schulz<...>`.
def TTT_OptionalNewtonSchulzParameter
    : OptionalParameter<"::mlir::ttt::NewtonSchulzAttr", "Muon, if present"> {
  let printer = [{ $_printer.printAttribute($_self) }];
}

def TTT_UpdateAttr : TTT_Attr<"Update", "update"> {
  let summary = "How a gradient becomes a weight update";
  let description = [{
    In this order: `clip` the gradient G to `G / (|G| + 1)` (per output column
    or whole matrix); take `U = -G` (`descent`) or `+G` (`ascent`); apply
    momentum when the layer has a `momentum` operand; `orthogonalize` U (Muon);
    add `lr_scale * U`; re-normalize each output column of every trained,
    non-bias weight to its initial norm (`weight_norm = output_channels`,
    `W[:, j] / (|W[:, j]| + weight_norm_eps) * r_j`).

    `base = update` (with `orthogonalize` only) adds `lr_scale * NS(U)` to
    the update U it orthogonalized instead of to the weights:
    `W' = U + lr_scale * NS(U)`, nothing of W kept but the column norms the
    weight norm restores. LaCT's minimal bidirectional layer writes its
    Muon step so (`w = NS(dw); w = w + dw`).

    ```mlir
    #ttt.update<sign = ascent, lr_scale = 0.5, weight_norm = output_channels>
    ```
  }];
  let parameters = (ins
    TTT_DefaultEnumParameter<TTT_Sign, "::mlir::ttt::Sign::descent">:$sign,
    TTT_F64Parameter<"constant step size", "1.0">:$lr_scale,
    TTT_DefaultEnumParameter<TTT_ClipKind, "::mlir::ttt::ClipKind::none">:$clip,
    TTT_OptionalNewtonSchulzParameter:$orthogonalize,
    TTT_DefaultEnumParameter<TTT_WeightNormKind,
                             "::mlir::ttt::WeightNormKind::none">:$weight_norm,
    TTT_F64Parameter<"weight normalization epsilon", "1e-5">:$weight_norm_eps,
    TTT_DefaultEnumParameter<TTT_UpdateBase,
                             "::mlir::ttt::UpdateBase::weights">:$base
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def TTT_ScheduleAttr : TTT_Attr<"Schedule", "schedule"> {
  let summary = "Chunk size, update/apply order and inner steps";
  let description = [{
    `chunked`: the sequence is cut into chunks of `size` tokens (the last may be
    shorter). `apply_then_update` (LaCT-LLM) reads the state left by earlier
    chunks; `update_then_apply` also reads the chunk's own update; `causal`
    (TTT-Linear/MLP) gives token i the chunk-start weights plus the gradients of
    tokens j <= i of its chunk. `full_batch` (LaCT-NVS, ViT^3): one update over
    all key/value tokens, then one apply to all queries; `size` and `order` are
    not used. `inner_steps` repeats each update on the same tokens.

    ```mlir
    #ttt.schedule<kind = chunked, size = 2048, order = apply_then_update>
    #ttt.schedule<kind = full_batch>
    ```
  }];
  let parameters = (ins
    EnumParameter<TTT_ScheduleKind>:$kind,
    DefaultValuedParameter<"int64_t", "0">:$size,
    TTT_DefaultEnumParameter<TTT_UpdateOrder,
                             "::mlir::ttt::UpdateOrder::apply_then_update">:$order,
    DefaultValuedParameter<"int64_t", "1">:$inner_steps
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // TTT_DIALECT_TTT_IR_TTTATTRS_TD
