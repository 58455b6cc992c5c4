// ttt-explain: one remark per layer, naming what was proven, the exact
// lowering and what blocks a better one.
// RUN: ttt-opt %s --ttt-explain --split-input-file -verify-diagnostics -o /dev/null

// LaCT-LLM base: trained inner layers and weight norm keep it sequential.
func.func @lact_base(%q: tensor<1x2x16x8xf32>, %w0: tensor<2x8x8xf32>, %w1: tensor<2x8x8xf32>, %w2: tensor<2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-remark @+1 {{exact lowering: chunk-sequential loop; proven: output layer W1 (out) is linear and bias-free; blocked by: W0 (gate), W2 (up) are trained, so the features of q and k depend on the history (dynamic kernel); row weight normalization after each update rescales the state by its own norms (non-linear in the state); not rewritten: only the chunk-sequential loop is exact}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w0, %w1, %w2 : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]> loss = #ttt.loss<kind = dot>
      update = #ttt.update<weight_norm = output_channels>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// V5: static kernel, Muon, dot loss: a prefix sum over chunk states.
func.func @lact_v5(%q: tensor<1x2x16x8xf32>, %w0: tensor<2x8x8xf32>, %w1: tensor<2x8x8xf32>, %w2: tensor<2x8x8xf32>, %lr: tensor<1x2x16x3xf32>) -> tensor<1x2x16x8xf32> {
  // expected-remark @+1 {{exact lowering: prefix sum over chunk states; proven: output layer W1 (out) is linear and bias-free; the feature map is static (only W1 (out) trains); the state update is additive (the dot-product gradient does not depend on the state); per-token learning rates fold into the values; Muon acts on each chunk's state-independent update (parallel over chunks); ttt-to-linattn rewrites it}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w0, %w1, %w2 : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x8xf32>)
      lr(%lr : tensor<1x2x16x3xf32>)
      model = #ttt.model<kind = swiglu, trained = [1]> loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [3.4445, -4.775, 2.0315]>>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// Linear fast weights with the MSE loss: an affine scan.
func.func @linear_mse(%q: tensor<1x2x16x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-remark @+1 {{exact lowering: affine scan over chunk states; proven: output layer W is linear and bias-free; the feature map is the identity (only the output layer trains); the state update is affine in the state (MSE gradient frozen per chunk); ttt-to-linattn rewrites it}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// TTT-Linear: LayerNorm in the loss; the bias is a constant feature.
func.func @ttt_linear(%q: tensor<1x2x16x8xf32>, %w: tensor<2x8x8xf32>, %b: tensor<2x1x8xf32>, %g: tensor<8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-remark @+1 {{exact lowering: chunk-sequential loop; proven: output layer W is linear with its bias as a constant feature; the feature map is the identity (only the output layer trains); blocked by: LayerNorm inside the loss makes the gradient non-linear in the state}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w, %b : tensor<2x8x8xf32>, tensor<2x1x8xf32>)
      layernorm(%g, %g : tensor<8xf32>, tensor<8xf32>)
      model = #ttt.model<kind = linear, trained = [0, 1], bias = true> loss = #ttt.loss<kind = layernorm_mse>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// ViT^3: a GLU output is not linear, but a single full-batch step is exact.
func.func @vit3(%q: tensor<1x2x16x8xf32>, %wa: tensor<2x8x8xf32>, %wg: tensor<2x8x8xf32>) -> tensor<1x2x16x8xf32> {
  // expected-remark @+1 {{exact lowering: single full-batch step (reduce, transform, apply); proven: one full-batch step: the state is materialized once, so any transform of it is exact; blocked by: the output (x Wa) * silu(x Wg) gates every output channel, so it is not a linear map of fixed features; not rewritten: this full-batch step transforms its state}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%wa, %wg : tensor<2x8x8xf32>, tensor<2x8x8xf32>)
      model = #ttt.model<kind = glu, trained = [0, 1]> loss = #ttt.loss<kind = dot, reduction = mean>
      update = #ttt.update<clip = output_channels>
      schedule = #ttt.schedule<kind = full_batch> -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

func.func @conv(%q: tensor<1x4x5x5xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  // expected-remark @+1 {{exact lowering: single full-batch step (reduce, transform, apply); proven: a depth-wise convolution is per-channel linear attention with 9-dimensional keys}}
  %o = ttt.dwconv_layer %q, %q, %q, %w : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<4x3x3xf32>
      loss = #ttt.loss<kind = dot> -> tensor<1x4x5x5xf32>
  return %o : tensor<1x4x5x5xf32>
}

// -----

// Each remaining blocker and unsupported case, one layer each.
func.func @blockers(%q: tensor<1x2x16x8xf32>, %w: tensor<2x8x8xf32>, %b: tensor<2x1x8xf32>,
    %lr: tensor<1x2x16x2xf32>, %m: tensor<1x2x16xf32>, %qh: tensor<1x2x16x8xbf16>,
    %wh: tensor<2x8x8xbf16>) {
  // expected-remark @+1 {{Newton-Schulz (Muon) of a state-dependent MSE gradient is non-linear in the state}}
  %0 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [1.5, -0.5, 0.0]>>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{clipping a state-dependent MSE gradient is non-linear in the state}}
  %1 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse>
      update = #ttt.update<clip = frobenius> schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{blocked by: the output layer W does not train}}
  %2 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w, %b : tensor<2x8x8xf32>, tensor<2x1x8xf32>) model = #ttt.model<kind = linear, trained = [1], bias = true>
      loss = #ttt.loss<kind = dot> schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: the output bias is fixed while W trains}}
  %3 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w, %b : tensor<2x8x8xf32>, tensor<2x1x8xf32>) model = #ttt.model<kind = linear, trained = [0], bias = true>
      loss = #ttt.loss<kind = dot> schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: the output weight and its bias have separate learning-rate columns}}
  %4 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w, %b : tensor<2x8x8xf32>, tensor<2x1x8xf32>) lr(%lr : tensor<1x2x16x2xf32>)
      model = #ttt.model<kind = linear, trained = [0, 1], bias = true>
      loss = #ttt.loss<kind = dot> schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: Muon orthogonalizes the output weight and its bias separately, which the stacked [W; b] state would not}}
  %13 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w, %b : tensor<2x8x8xf32>, tensor<2x1x8xf32>) model = #ttt.model<kind = linear, trained = [0, 1], bias = true>
      loss = #ttt.loss<kind = dot> update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1, coeffs = [1.5, -0.5, 0.0]>>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: clipping each chunk's update is not expressed in linattn yet}}
  %5 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      update = #ttt.update<clip = output_channels> schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: several inner steps with momentum or Muon}}
  %6 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) momentum(%m : tensor<1x2x16xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4, inner_steps = 2> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: the causal order of an affine (MSE) layer reads state-dependent values inside the chunk}}
  %8 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = causal> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: momentum of an affine update (a two-state affine scan)}}
  %9 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) momentum(%m : tensor<1x2x16xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: several inner steps of an affine update}}
  %10 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse>
      schedule = #ttt.schedule<kind = chunked, size = 4, inner_steps = 3> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{not rewritten: several inner steps}}
  %11 = ttt.kvb_layer %q, %q, %q : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
      weights(%w : tensor<2x8x8xf32>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = full_batch, inner_steps = 2> -> tensor<1x2x16x8xf32>
  // expected-remark @+1 {{a 16-bit layer is computed in f32 and rounded once at the end, in either form; ttt-to-linattn rewrites it}}
  %12 = ttt.kvb_layer %qh, %qh, %qh : tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>
      weights(%wh : tensor<2x8x8xbf16>) model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<1x2x16x8xbf16>
  return
}
