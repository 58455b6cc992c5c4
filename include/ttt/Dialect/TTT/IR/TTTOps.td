//===- TTTOps.td - ttt layer ops ---------------------------*- tablegen -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_DIALECT_TTT_IR_TTTOPS_TD
#define TTT_DIALECT_TTT_IR_TTTOPS_TD

include "ttt/Dialect/TTT/IR/TTTBase.td"
include "ttt/Dialect/TTT/IR/TTTAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TTT_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;

def TTT_KVBLayerOp : TTT_Op<"kvb_layer", [AttrSizedOperandSegments, Pure]> {
  let summary = "A test-time-training layer with key-value binding";
  let description = [{
    Runs the inner loop of a TTT-KVB layer over one sequence per (batch, head)
    stream: fast weights start at `weights`, take gradient steps on a loss
    that binds keys `k` to values `v`, and are applied to the queries `q`.
    The exact semantics, step by step, are in `docs/Semantics.md`.

    Shapes: `q : [B, H, Tq, Din]`, `k : [B, H, T, Din]`, `v : [B, H, T, Dout]`
    (B, H, T may be dynamic; `Tq == T` unless the schedule is `full_batch`);
    each weight `[H, r, c]` (shared by the batch) or `[B, H, r, c]`;
    `lr : [B, H, T, 1 or #weights]` per-token learning rates (one column per
    weight, or one shared); `token_eta : [C]` per-position factors of the
    `causal` order; `momentum : [B, H, T]` per-token momentum coefficients
    (the chunk uses their mean); `layernorm(gamma, beta) : [H, Dout] or [Dout]`
    for the `layernorm_mse` loss. Results: `o : [B, H, Tq, Dout]`, optionally
    followed by the final value of every weight, `[B, H, r, c]`.

    Example: the LaCT-LLM layer (SwiGLU fast weights, all trained, per-weight
    learning rates, momentum, Muon, weight norm, apply-then-update):

    ```mlir
    %o = ttt.kvb_layer %q, %k, %v
        : tensor<?x4x?x384xf32>, tensor<?x4x?x384xf32>, tensor<?x4x?x384xf32>
        weights(%w0, %w1, %w2 : tensor<4x384x384xf32>, tensor<4x384x384xf32>,
                                tensor<4x384x384xf32>)
        lr(%lr : tensor<?x4x?x3xf32>) momentum(%m : tensor<?x4x?xf32>)
        model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
        loss = #ttt.loss<kind = dot>
        update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5,
                   coeffs = [4.0848, -6.8946, 2.927, 3.9505, -6.3029, 2.6377,
                             3.7418, -5.5913, 2.3037, 2.8769, -3.1427, 1.2046,
                             2.8366, -3.0525, 1.2012]>,
                 weight_norm = output_channels>
        schedule = #ttt.schedule<kind = chunked, size = 2048,
                                 order = apply_then_update>
        -> tensor<?x4x?x384xf32>
    ```
  }];
  let arguments = (ins
    TTT_FloatTensor:$q,
    TTT_FloatTensor:$k,
    TTT_FloatTensor:$v,
    Variadic<TTT_FloatTensor>:$weights,
    Optional<TTT_FloatTensor>:$lr,
    Optional<TTT_FloatTensor>:$token_eta,
    Optional<TTT_FloatTensor>:$momentum,
    Optional<TTT_FloatTensor>:$ln_gamma,
    Optional<TTT_FloatTensor>:$ln_beta,
    TTT_ModelAttr:$model,
    TTT_LossAttr:$loss,
    OptionalAttr<TTT_UpdateAttr>:$update,
    TTT_ScheduleAttr:$schedule
  );
  let results = (outs
    TTT_FloatTensor:$output,
    Variadic<TTT_FloatTensor>:$final_weights
  );
  let assemblyFormat = [{
    $q `,` $k `,` $v `:` type($q) `,` type($k) `,` type($v)
    `weights` `(` $weights `:` type($weights) `)`
    (`lr` `(` $lr^ `:` type($lr) `)`)?
    (`token_eta` `(` $token_eta^ `:` type($token_eta) `)`)?
    (`momentum` `(` $momentum^ `:` type($momentum) `)`)?
    (`layernorm` `(` $ln_gamma^ `,` $ln_beta `:` type($ln_gamma) `,` type($ln_beta) `)`)?
    `model` `=` qualified($model)
    `loss` `=` qualified($loss)
    (`update` `=` qualified($update)^)?
    `schedule` `=` qualified($schedule)
    attr-dict `->` type($output) (`,` type($final_weights)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The update attribute, or plain SGD descent when it is absent.
    ::mlir::ttt::UpdateAttr getUpdateOrDefault();
    /// Input feature dimension Din (of q and k).
    int64_t getInputDim();
    /// Output feature dimension Dout (of v and o).
    int64_t getOutputDim();
  }];
}

def TTT_DWConvLayerOp : TTT_Op<"dwconv_layer", [Pure]> {
  let summary = "A TTT layer whose fast weight is a depth-wise convolution kernel";
  let description = [{
    ViT^3's second branch: the fast weight is a depth-wise `kh x kw` kernel
    (odd sizes, zero "same" padding). One full-batch step on the loss between
    `conv(k)` and `v` over all spatial positions (repeated `inner_steps` times),
    with optional `frobenius` clipping per channel, then `o = conv(q)` with the
    updated kernel.

    Shapes: `q, k, v : [B, C, Hs, Ws]`, `kernel : [C, kh, kw]` or
    `[B, C, kh, kw]`; results `o : [B, C, Hs, Ws]` and optionally the final
    kernel `[B, C, kh, kw]`.

    ```mlir
    %o = ttt.dwconv_layer %q, %k, %v, %w
        : tensor<?x64x14x14xf32>, tensor<?x64x14x14xf32>, tensor<?x64x14x14xf32>,
          tensor<64x3x3xf32>
        loss = #ttt.loss<kind = dot, scale = 0.33333333333333331, reduction = mean>
        update = #ttt.update<clip = frobenius>
        -> tensor<?x64x14x14xf32>
    ```
  }];
  let arguments = (ins
    TTT_FloatTensor:$q,
    TTT_FloatTensor:$k,
    TTT_FloatTensor:$v,
    TTT_FloatTensor:$kernel,
    TTT_LossAttr:$loss,
    OptionalAttr<TTT_UpdateAttr>:$update,
    DefaultValuedAttr<I64Attr, "1">:$inner_steps
  );
  let results = (outs
    TTT_FloatTensor:$output,
    Optional<TTT_FloatTensor>:$final_kernel
  );
  let assemblyFormat = [{
    $q `,` $k `,` $v `,` $kernel `:` type($q) `,` type($k) `,` type($v) `,` type($kernel)
    `loss` `=` qualified($loss)
    (`update` `=` qualified($update)^)?
    attr-dict `->` type($output) (`,` type($final_kernel)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::ttt::UpdateAttr getUpdateOrDefault();
  }];
}

def TTT_RaisedOp : TTT_Op<"raised", [Pure,
    AllTypesMatch<["raised", "original", "result"]>]> {
  let summary = "A layer raised from a model's nodes, with the nodes kept";
  let description = [{
    `ttt-raise-onnx{keep-original}` replaces the output of a layer it raises
    but cannot rewrite by `ttt.raised %layer from %nodes`: `%layer` is the
    `ttt.kvb_layer` form, `%nodes` the model's own computation of the same
    tensor. Passes in between transform the `ttt.kvb_layer` (for instance
    `ttt-simplify`'s variants, which make it linear attention);
    `ttt-resolve-raised` then keeps `%layer` if no ttt layer op is left in
    it, and `%nodes` otherwise, so that a layer no pass could rewrite leaves
    the model as it was. The result is `%layer`.

    ```mlir
    %o = ttt.raised %layer from %concat : tensor<1x2x64x8xf32>
    ```
  }];
  let arguments = (ins AnyTensor:$raised, AnyTensor:$original);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $raised `from` $original attr-dict `:` type($result)
  }];
}

def TTT_ChunkLoopOp : TTT_Op<"chunk_loop", [
    AttrSizedOperandSegments, AttrSizedResultSegments, IsolatedFromAbove,
    RecursiveMemoryEffects, SingleBlock]> {
  let summary = "A recurrence over the chunks of sequences, in canonical form";
  let description = [{
    The one form every schedule of a chunked layer is brought to before its
    math is read (`docs/Semantics.md` is normative, `docs/Architecture.md`
    says where it sits): unrolled copies, loops over chunks and single steps
    all become this op, so that what a layer computes per chunk is read in
    one place, whatever the exporter wrote.

    The `sequences` are cut along their `window_axes` into consecutive
    windows of `chunk` tokens (the last one may be shorter); `chunk(0)` is a
    single chunk whose windows are the whole sequences, which may then differ
    in length (queries longer than keys). The body runs once per chunk, in
    order, on the carried `state` (starting at the `inits`), that chunk's
    windows and the `invariants` (read whole by every chunk), and yields the
    chunk's outputs and the next state. Each output is assembled along its
    `output_axes` entry into one result; the final state follows the
    outputs.

    The body is closed: it reads only its arguments, and its ops come from a
    small set in which layout and orientation do not matter — linalg
    structured ops on tensors (contractions by indexing maps, elementwise
    ops, reductions, fills, transposes, broadcasts), the views
    `tensor.extract_slice`, `tensor.expand_shape` and
    `tensor.collapse_shape`, `tensor.concat` (sums stacked into one tensor,
    as ViT^3 stacks its kernel gradient), `tensor.empty`, `tensor.dim`,
    `arith.constant` and index arithmetic. Ops inside linalg regions must be free of memory
    effects. The verifier rejects anything else, naming it.

    A linear fast weight applied to each chunk's queries, then updated by
    the chunk's keys and values (LaCT's apply-then-update order):

    ```mlir
    %o, %w = ttt.chunk_loop chunk(16)
        state(%w0 : tensor<8x8xf32>)
        windows(%q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
          along [0, 0, 0]
        outputs along [0] {
    ^bb0(%s: tensor<8x8xf32>, %qc: tensor<?x8xf32>, %kc: tensor<?x8xf32>,
         %vc: tensor<?x8xf32>):
      ...  // %oc = %qc * %s; %s1 = %s + %kc^T * %vc
      ttt.chunk_yield outputs(%oc : tensor<?x8xf32>)
                      state(%s1 : tensor<8x8xf32>)
    } -> outputs(tensor<?x8xf32>) state(tensor<8x8xf32>)
    ```
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$inits,
    Variadic<AnyRankedTensor>:$sequences,
    Variadic<AnyType>:$invariants,
    ConfinedAttr<I64Attr, [IntNonNegative]>:$chunk,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$window_axes,
    DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$output_axes
  );
  let results = (outs
    Variadic<AnyRankedTensor>:$outputs,
    Variadic<AnyRankedTensor>:$final_states
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `chunk` `(` $chunk `)`
    (`state` `(` $inits^ `:` type($inits) `)`)?
    (`windows` `(` $sequences^ `:` type($sequences) `)` `along` $window_axes)?
    (`invariants` `(` $invariants^ `:` type($invariants) `)`)?
    `outputs` `along` $output_axes
    $body attr-dict-with-keyword
    `->` (`outputs` `(` type($outputs)^ `)`)?
    (`state` `(` type($final_states)^ `)`)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the whole sequences form one chunk (`chunk(0)`).
    bool isSingleChunk() { return getChunk() == 0; }
    /// The body's arguments: state, windows, invariants, in that order.
    ::mlir::Block::BlockArgListType getStateArgs();
    ::mlir::Block::BlockArgListType getWindowArgs();
    ::mlir::Block::BlockArgListType getInvariantArgs();
    /// The body's terminator.
    ChunkYieldOp getYield();
    /// Why `op`, directly in the body, is outside the canonical op set, or
    /// an empty string when it is in it.
    static std::string whyNotCanonical(::mlir::Operation *op);
  }];
}

def TTT_ChunkYieldOp : TTT_Op<"chunk_yield", [
    Pure, Terminator, HasParent<"ChunkLoopOp">, AttrSizedOperandSegments]> {
  let summary = "The outputs and next state of one chunk of a ttt.chunk_loop";
  let description = [{
    Ends the body of a `ttt.chunk_loop`: the chunk's outputs, in the order of
    the loop's output results, then the state the next chunk starts from, in
    the order of the loop's `state` operands.

    ```mlir
    ttt.chunk_yield outputs(%o : tensor<?x8xf32>) state(%w : tensor<8x8xf32>)
    ```
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$outputs,
    Variadic<AnyRankedTensor>:$next_state
  );
  let assemblyFormat = [{
    (`outputs` `(` $outputs^ `:` type($outputs) `)`)?
    (`state` `(` $next_state^ `:` type($next_state) `)`)?
    attr-dict
  }];
}

#endif // TTT_DIALECT_TTT_IR_TTTOPS_TD
