// Round trip of every ttt op and every layer family: custom form, and the
// generic form parsed back, must print the same.
// RUN: ttt-opt %s | ttt-opt | FileCheck %s
// RUN: ttt-opt %s --mlir-print-op-generic | ttt-opt | FileCheck %s

// LaCT-LLM base: SwiGLU, all three matrices trained, per-matrix learning
// rates, momentum, Muon (5-step table), weight norm, apply-then-update.
// CHECK-LABEL: func.func @lact_llm_base
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4x?x64xf32>, %[[K:.+]]: tensor<?x4x?x64xf32>, %[[V:.+]]: tensor<?x4x?x64xf32>, %[[LR:.+]]: tensor<?x4x?x3xf32>, %[[M:.+]]: tensor<?x4x?xf32>, %[[W0:.+]]: tensor<4x64x128xf32>, %[[W1:.+]]: tensor<4x128x64xf32>, %[[W2:.+]]: tensor<4x64x128xf32>)
// CHECK: %[[O:.+]] = ttt.kvb_layer %[[Q]], %[[K]], %[[V]] : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>
// CHECK-SAME: weights(%[[W0]], %[[W1]], %[[W2]] : tensor<4x64x128xf32>, tensor<4x128x64xf32>, tensor<4x64x128xf32>)
// CHECK-SAME: lr(%[[LR]] : tensor<?x4x?x3xf32>) momentum(%[[M]] : tensor<?x4x?xf32>)
// CHECK-SAME: model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
// CHECK-SAME: loss = #ttt.loss<kind = dot>
// CHECK-SAME: update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [4.084800e+00, -6.894600e+00, 2.927000e+00, 3.950500e+00, -6.302900e+00, 2.637700e+00, 3.741800e+00, -5.591300e+00, 2.303700e+00, 2.876900e+00, -3.142700e+00, 1.204600e+00, 2.836600e+00, -3.052500e+00, 1.201200e+00]>, weight_norm = output_channels>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 2048>
// CHECK-SAME: -> tensor<?x4x?x64xf32>
// CHECK: return %[[O]]
func.func @lact_llm_base(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>,
    %v: tensor<?x4x?x64xf32>, %lr: tensor<?x4x?x3xf32>, %m: tensor<?x4x?xf32>,
    %w0: tensor<4x64x128xf32>, %w1: tensor<4x128x64xf32>,
    %w2: tensor<4x64x128xf32>) -> tensor<?x4x?x64xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>
      weights(%w0, %w1, %w2 : tensor<4x64x128xf32>, tensor<4x128x64xf32>,
                              tensor<4x64x128xf32>)
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
      -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// LaCT-LLM with only the output matrix trained (the paper's V1), returning
// the final fast weights too.
// CHECK-LABEL: func.func @lact_llm_last_layer_only
// CHECK: %[[O:.+]], %[[FINAL:.+]]:3 = ttt.kvb_layer
// CHECK-SAME: model = #ttt.model<kind = swiglu, trained = [1]>
// CHECK-SAME: -> tensor<2x4x?x64xf32>, tensor<2x4x64x128xf32>, tensor<2x4x128x64xf32>, tensor<2x4x64x128xf32>
// CHECK: return %[[O]], %[[FINAL]]#1
func.func @lact_llm_last_layer_only(%q: tensor<2x4x?x64xf32>,
    %w0: tensor<4x64x128xf32>, %w1: tensor<4x128x64xf32>,
    %w2: tensor<4x64x128xf32>, %lr: tensor<2x4x?x1xf32>)
    -> (tensor<2x4x?x64xf32>, tensor<2x4x128x64xf32>) {
  %o:4 = ttt.kvb_layer %q, %q, %q
      : tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>, tensor<2x4x?x64xf32>
      weights(%w0, %w1, %w2 : tensor<4x64x128xf32>, tensor<4x128x64xf32>,
                              tensor<4x64x128xf32>)
      lr(%lr : tensor<2x4x?x1xf32>)
      model = #ttt.model<kind = swiglu, trained = [1]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 64>
      -> tensor<2x4x?x64xf32>, tensor<2x4x64x128xf32>, tensor<2x4x128x64xf32>,
         tensor<2x4x64x128xf32>
  return %o#0, %o#2 : tensor<2x4x?x64xf32>, tensor<2x4x128x64xf32>
}

// LaCT-NVS: one update on the input-view tokens, then apply to every token
// (queries are longer than keys), Muon with the constant NVS coefficients.
// CHECK-LABEL: func.func @lact_nvs
// CHECK: ttt.kvb_layer
// CHECK-SAME: : tensor<1x1x?x96xf32>, tensor<1x1x?x96xf32>, tensor<1x1x?x96xf32>
// CHECK-SAME: model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
// CHECK-SAME: update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [3.444500e+00, -4.775000e+00, 2.031500e+00]>, weight_norm = output_channels>
// CHECK-SAME: schedule = #ttt.schedule<kind = full_batch>
func.func @lact_nvs(%q: tensor<1x1x?x96xf32>, %k: tensor<1x1x?x96xf32>,
    %v: tensor<1x1x?x96xf32>, %lr: tensor<1x1x?x3xf32>,
    %w0: tensor<1x96x192xf32>, %w1: tensor<1x192x96xf32>,
    %w2: tensor<1x96x192xf32>) -> tensor<1x1x?x96xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<1x1x?x96xf32>, tensor<1x1x?x96xf32>, tensor<1x1x?x96xf32>
      weights(%w0, %w1, %w2 : tensor<1x96x192xf32>, tensor<1x192x96xf32>,
                              tensor<1x96x192xf32>)
      lr(%lr : tensor<1x1x?x3xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5,
                 coeffs = [3.4445, -4.775, 2.0315]>,
               weight_norm = output_channels>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<1x1x?x96xf32>
  return %o : tensor<1x1x?x96xf32>
}

// LaCT-NVS as shipped: its Muon (no steps, only the normalization) computes
// in bf16 on f32 weights.
// CHECK-LABEL: func.func @lact_nvs_bf16_muon
// CHECK: ttt.kvb_layer
// CHECK-SAME: update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 0, coeffs = [1.000000e+00, 0.000000e+00, 0.000000e+00], compute = bf16>, weight_norm = output_channels>
func.func @lact_nvs_bf16_muon(%q: tensor<1x1x?x96xf32>, %k: tensor<1x1x?x96xf32>,
    %v: tensor<1x1x?x96xf32>, %w0: tensor<1x96x192xf32>,
    %w1: tensor<1x192x96xf32>, %w2: tensor<1x96x192xf32>) -> tensor<1x1x?x96xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<1x1x?x96xf32>, tensor<1x1x?x96xf32>, tensor<1x1x?x96xf32>
      weights(%w0, %w1, %w2 : tensor<1x96x192xf32>, tensor<1x192x96xf32>,
                              tensor<1x96x192xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 0,
                 coeffs = [1.0, 0.0, 0.0], compute = bf16>,
               weight_norm = output_channels>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<1x1x?x96xf32>
  return %o : tensor<1x1x?x96xf32>
}

// LaCT's minimal bidirectional layer: Muon's result added to the update it
// orthogonalized, not to the weights (`w = NS(dw); w = w + dw`).
// CHECK-LABEL: func.func @bidirectional_muon
// CHECK: ttt.kvb_layer
// CHECK-SAME: update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [3.444500e+00, -4.775000e+00, 2.031500e+00]>, weight_norm = output_channels, base = update>
func.func @bidirectional_muon(%q: tensor<2x1x64x32xf32>, %k: tensor<2x1x64x32xf32>,
    %v: tensor<2x1x64x32xf32>, %w0: tensor<1x32x32xf32>,
    %w1: tensor<1x32x32xf32>, %w2: tensor<1x32x32xf32>) -> tensor<2x1x64x32xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<2x1x64x32xf32>, tensor<2x1x64x32xf32>, tensor<2x1x64x32xf32>
      weights(%w0, %w1, %w2 : tensor<1x32x32xf32>, tensor<1x32x32xf32>,
                              tensor<1x32x32xf32>)
      model = #ttt.model<kind = swiglu, trained = [0, 1, 2]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 5,
                 coeffs = [3.4445, -4.775, 2.0315]>,
               weight_norm = output_channels, base = update>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<2x1x64x32xf32>
  return %o : tensor<2x1x64x32xf32>
}

// ViT^3, both branches: the GLU branch with identity output layer (one
// full-batch step on the mean dot-product loss, column clipping) and the
// 3x3 depth-wise convolution branch (Frobenius clipping).
// CHECK-LABEL: func.func @vit3
// CHECK: ttt.kvb_layer
// CHECK-SAME: model = #ttt.model<kind = glu, trained = [0, 1]>
// CHECK-SAME: loss = #ttt.loss<kind = dot, scale = 0.33333333333333331, reduction = mean>
// CHECK-SAME: update = #ttt.update<clip = output_channels>
// CHECK-SAME: schedule = #ttt.schedule<kind = full_batch>
// CHECK: ttt.dwconv_layer
// CHECK-SAME: : tensor<?x64x14x14xf32>, tensor<?x64x14x14xf32>, tensor<?x64x14x14xf32>, tensor<64x3x3xf32>
// CHECK-SAME: loss = #ttt.loss<kind = dot, scale = 0.33333333333333331, reduction = mean>
// CHECK-SAME: update = #ttt.update<clip = frobenius>
// CHECK-SAME: -> tensor<?x64x14x14xf32>, tensor<?x64x3x3xf32>
func.func @vit3(%q: tensor<?x6x196x64xf32>, %k: tensor<?x6x196x64xf32>,
    %v: tensor<?x6x196x64xf32>, %w1: tensor<6x64x64xf32>,
    %w2: tensor<6x64x64xf32>, %q2: tensor<?x64x14x14xf32>,
    %k2: tensor<?x64x14x14xf32>, %v2: tensor<?x64x14x14xf32>,
    %w3: tensor<64x3x3xf32>)
    -> (tensor<?x6x196x64xf32>, tensor<?x64x14x14xf32>, tensor<?x64x3x3xf32>) {
  %o1 = ttt.kvb_layer %q, %k, %v
      : tensor<?x6x196x64xf32>, tensor<?x6x196x64xf32>, tensor<?x6x196x64xf32>
      weights(%w1, %w2 : tensor<6x64x64xf32>, tensor<6x64x64xf32>)
      model = #ttt.model<kind = glu, trained = [0, 1]>
      loss = #ttt.loss<kind = dot, scale = 0.33333333333333331, reduction = mean>
      update = #ttt.update<clip = output_channels>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<?x6x196x64xf32>
  %o2, %w3f = ttt.dwconv_layer %q2, %k2, %v2, %w3
      : tensor<?x64x14x14xf32>, tensor<?x64x14x14xf32>, tensor<?x64x14x14xf32>,
        tensor<64x3x3xf32>
      loss = #ttt.loss<kind = dot, scale = 0.33333333333333331, reduction = mean>
      update = #ttt.update<clip = frobenius>
      -> tensor<?x64x14x14xf32>, tensor<?x64x3x3xf32>
  return %o1, %o2, %w3f
      : tensor<?x6x196x64xf32>, tensor<?x64x14x14xf32>, tensor<?x64x3x3xf32>
}

// TTT-Linear: linear fast weight with bias, LayerNorm-MSE loss (values are
// the reconstruction targets v - k), mini-batch 16 in the causal dual form,
// learnable per-position step sizes times per-token rates.
// CHECK-LABEL: func.func @ttt_linear
// CHECK: ttt.kvb_layer
// CHECK-SAME: token_eta(%{{.+}} : tensor<16xf32>)
// CHECK-SAME: layernorm(%{{.+}}, %{{.+}} : tensor<12x64xf32>, tensor<12x64xf32>)
// CHECK-SAME: model = #ttt.model<kind = linear, trained = [0, 1], bias = true>
// CHECK-SAME: loss = #ttt.loss<kind = layernorm_mse>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 16, order = causal>
func.func @ttt_linear(%q: tensor<?x12x?x64xf32>, %k: tensor<?x12x?x64xf32>,
    %v: tensor<?x12x?x64xf32>, %lr: tensor<?x12x?x1xf32>,
    %eta: tensor<16xf32>, %w: tensor<12x64x64xf32>, %b: tensor<12x1x64xf32>,
    %gamma: tensor<12x64xf32>, %beta: tensor<12x64xf32>)
    -> tensor<?x12x?x64xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>
      weights(%w, %b : tensor<12x64x64xf32>, tensor<12x1x64xf32>)
      lr(%lr : tensor<?x12x?x1xf32>) token_eta(%eta : tensor<16xf32>)
      layernorm(%gamma, %beta : tensor<12x64xf32>, tensor<12x64xf32>)
      model = #ttt.model<kind = linear, trained = [0, 1], bias = true>
      loss = #ttt.loss<kind = layernorm_mse, eps = 1.0e-06>
      schedule = #ttt.schedule<kind = chunked, size = 16, order = causal>
      -> tensor<?x12x?x64xf32>
  return %o : tensor<?x12x?x64xf32>
}

// TTT-MLP: two layers with biases and tanh-GELU, LayerNorm-MSE, causal.
// CHECK-LABEL: func.func @ttt_mlp
// CHECK: ttt.kvb_layer
// CHECK-SAME: model = #ttt.model<kind = mlp, trained = [0, 1, 2, 3], bias = true, activation = gelu_tanh>
// CHECK-SAME: loss = #ttt.loss<kind = layernorm_mse>
func.func @ttt_mlp(%q: tensor<?x12x?x64xf32>, %lr: tensor<?x12x?x1xf32>,
    %eta: tensor<16xf32>, %w0: tensor<12x64x256xf32>, %b0: tensor<12x1x256xf32>,
    %w1: tensor<12x256x64xf32>, %b1: tensor<12x1x64xf32>,
    %gamma: tensor<64xf32>, %beta: tensor<64xf32>) -> tensor<?x12x?x64xf32> {
  %o = ttt.kvb_layer %q, %q, %q
      : tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>, tensor<?x12x?x64xf32>
      weights(%w0, %b0, %w1, %b1 : tensor<12x64x256xf32>, tensor<12x1x256xf32>,
                                   tensor<12x256x64xf32>, tensor<12x1x64xf32>)
      lr(%lr : tensor<?x12x?x1xf32>) token_eta(%eta : tensor<16xf32>)
      layernorm(%gamma, %beta : tensor<64xf32>, tensor<64xf32>)
      model = #ttt.model<kind = mlp, trained = [0, 1, 2, 3], bias = true,
                         activation = gelu_tanh>
      loss = #ttt.loss<kind = layernorm_mse>
      schedule = #ttt.schedule<kind = chunked, size = 16, order = causal>
      -> tensor<?x12x?x64xf32>
  return %o : tensor<?x12x?x64xf32>
}

// Plain linear fast weight, dot-product loss, gradient ascent, two inner
// steps, per-sample initial weights, update-then-apply.
// CHECK-LABEL: func.func @linear_dot_ascent
// CHECK: ttt.kvb_layer
// CHECK-SAME: weights(%{{.+}} : tensor<?x2x16x8xf32>)
// CHECK-SAME: model = #ttt.model<kind = linear, trained = [0]>
// CHECK-SAME: update = #ttt.update<sign = ascent, lr_scale = 5.000000e-01>
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 4, order = update_then_apply, inner_steps = 2>
func.func @linear_dot_ascent(%q: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>,
    %w: tensor<?x2x16x8xf32>) -> tensor<?x2x?x8xf32> {
  %o = ttt.kvb_layer %q, %q, %v
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>
      weights(%w : tensor<?x2x16x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<sign = ascent, lr_scale = 0.5>
      schedule = #ttt.schedule<kind = chunked, size = 4,
                               order = update_then_apply, inner_steps = 2>
      -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// Plain linear fast weight with the MSE loss (affine in the state).
// CHECK-LABEL: func.func @linear_mse
// CHECK: ttt.kvb_layer
// CHECK-SAME: loss = #ttt.loss<kind = mse, scale = 2.500000e-01>
func.func @linear_mse(%q: tensor<?x?x?x16xf64>, %w: tensor<?x16x16xf64>)
    -> tensor<?x?x?x16xf64> {
  %o = ttt.kvb_layer %q, %q, %q
      : tensor<?x?x?x16xf64>, tensor<?x?x?x16xf64>, tensor<?x?x?x16xf64>
      weights(%w : tensor<?x16x16xf64>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = mse, scale = 0.25>
      schedule = #ttt.schedule<kind = chunked, size = 1>
      -> tensor<?x?x?x16xf64>
  return %o : tensor<?x?x?x16xf64>
}

// A two-layer MLP fast weight with ReLU, dot-product loss, output layer only.
// CHECK-LABEL: func.func @mlp_relu_dot
// CHECK: ttt.kvb_layer
// CHECK-SAME: model = #ttt.model<kind = mlp, trained = [1], activation = relu>
func.func @mlp_relu_dot(%q: tensor<1x1x32x8xf32>, %w0: tensor<1x8x32xf32>,
    %w1: tensor<1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  %o = ttt.kvb_layer %q, %q, %q
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>
      weights(%w0, %w1 : tensor<1x8x32xf32>, tensor<1x32x8xf32>)
      model = #ttt.model<kind = mlp, trained = [1], activation = relu>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 8>
      -> tensor<1x1x32x8xf32>
  return %o : tensor<1x1x32x8xf32>
}

// A linear fast weight in canonical chunk-loop form: applied to each chunk's
// queries, then moved by the chunk's keys and values.
// CHECK-LABEL: func.func @chunk_loop_linear
// CHECK: %[[O:.*]], %[[W:.*]] = ttt.chunk_loop chunk(16) state(%{{.*}} : tensor<8x8xf32>)
// CHECK-SAME: windows(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) along [0, 0, 0]
// CHECK-SAME: outputs along [0] {
// CHECK: ^bb0(%[[S:.*]]: tensor<8x8xf32>, %[[QC:.*]]: tensor<?x8xf32>, %[[KC:.*]]: tensor<?x8xf32>, %[[VC:.*]]: tensor<?x8xf32>):
// CHECK: %[[OC:.*]] = linalg.matmul ins(%[[QC]], %[[S]] :
// CHECK: %[[S1:.*]] = linalg.matmul {{.*}}ins(%[[KC]], %[[VC]] : {{.*}}) outs(%[[S]] :
// CHECK: ttt.chunk_yield outputs(%[[OC]] : tensor<?x8xf32>) state(%[[S1]] : tensor<8x8xf32>)
// CHECK: } -> outputs(tensor<?x8xf32>) state(tensor<8x8xf32>)
// CHECK: return %[[O]], %[[W]]
func.func @chunk_loop_linear(%w0: tensor<8x8xf32>, %q: tensor<?x8xf32>,
    %k: tensor<?x8xf32>, %v: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<8x8xf32>) {
  %o, %w = ttt.chunk_loop chunk(16)
      state(%w0 : tensor<8x8xf32>)
      windows(%q, %k, %v : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
        along [0, 0, 0]
      outputs along [0] {
  ^bb0(%s: tensor<8x8xf32>, %qc: tensor<?x8xf32>, %kc: tensor<?x8xf32>,
       %vc: tensor<?x8xf32>):
    %c0 = arith.constant 0 : index
    %n = tensor.dim %qc, %c0 : tensor<?x8xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty(%n) : tensor<?x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
    %oc = linalg.matmul ins(%qc, %s : tensor<?x8xf32>, tensor<8x8xf32>)
        outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
    %s1 = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%kc, %vc : tensor<?x8xf32>, tensor<?x8xf32>)
        outs(%s : tensor<8x8xf32>) -> tensor<8x8xf32>
    ttt.chunk_yield outputs(%oc : tensor<?x8xf32>) state(%s1 : tensor<8x8xf32>)
  } -> outputs(tensor<?x8xf32>) state(tensor<8x8xf32>)
  return %o, %w : tensor<?x8xf32>, tensor<8x8xf32>
}

// One chunk (full batch): the windows are the whole sequences, so queries may
// be longer than keys; an invariant is read whole, and a static length that
// the chunk divides gives static windows.
// CHECK-LABEL: func.func @chunk_loop_single_and_static
// CHECK: ttt.chunk_loop chunk(0) windows(%{{.*}}, %{{.*}} : tensor<2x12x4xf32>, tensor<2x6x4xf32>) along [1, 1] invariants(%{{.*}} : tensor<4xf32>) outputs along [1]
// CHECK: ttt.chunk_yield outputs(%{{.*}} : tensor<2x12x4xf32>)
// CHECK: ttt.chunk_loop chunk(3) windows(%{{.*}} : tensor<2x6x4xf32>) along [1] outputs along [1]
// CHECK: ^bb0(%{{.*}}: tensor<2x3x4xf32>):
func.func @chunk_loop_single_and_static(%q: tensor<2x12x4xf32>,
    %k: tensor<2x6x4xf32>, %g: tensor<4xf32>)
    -> (tensor<2x12x4xf32>, tensor<2x6x4xf32>) {
  %o = ttt.chunk_loop chunk(0)
      windows(%q, %k : tensor<2x12x4xf32>, tensor<2x6x4xf32>) along [1, 1]
      invariants(%g : tensor<4xf32>)
      outputs along [1] {
  ^bb0(%qc: tensor<2x12x4xf32>, %kc: tensor<2x6x4xf32>, %gc: tensor<4xf32>):
    ttt.chunk_yield outputs(%qc : tensor<2x12x4xf32>)
  } -> outputs(tensor<2x12x4xf32>)
  %p = ttt.chunk_loop chunk(3)
      windows(%k : tensor<2x6x4xf32>) along [1]
      outputs along [1] {
  ^bb0(%kc: tensor<2x3x4xf32>):
    ttt.chunk_yield outputs(%kc : tensor<2x3x4xf32>)
  } -> outputs(tensor<2x6x4xf32>)
  return %o, %p : tensor<2x12x4xf32>, tensor<2x6x4xf32>
}
