// ttt-to-linattn: layers proven to be linear attention become linattn ops;
// the others stay as they are, with a remark naming the blocker.
// RUN: ttt-opt %s --ttt-to-linattn --split-input-file -verify-diagnostics | FileCheck %s

// LaCT V5 (static SwiGLU features, per-token lr, momentum, Muon,
// apply-then-update): features, per-chunk contributions with the lr as the
// per-token scale, momentum as a decayed scan of chunk means, Muon with the
// step size after it, W1 as the initial state of an exclusive prefix sum.
// CHECK-LABEL: func.func @lact_v5
// CHECK-SAME: (%[[Q:[^:]+]]: {{.*}}, %[[K:[^:]+]]: {{.*}}, %[[V:[^:]+]]: {{.*}}, %[[W0:[^:]+]]: {{.*}}, %[[W1:[^:]+]]: {{.*}}, %[[W2:[^:]+]]: {{.*}}, %[[LR:[^:]+]]: {{.*}}, %[[M:[^:]+]]: tensor<?x2x?xf32>)
// CHECK-NOT: ttt.kvb_layer
// CHECK: %[[QF:.+]] = linattn.feature_map %[[Q]] weights(%[[W0]], %[[W2]] : {{.*}}) kind = swiglu : tensor<?x2x?x8xf32> -> tensor<?x2x?x12xf32>
// CHECK: %[[KF:.+]] = linattn.feature_map %[[K]] weights(%[[W0]], %[[W2]] : {{.*}}) kind = swiglu
// CHECK: %[[G:.+]] = linattn.chunk_reduce %[[KF]], %[[V]] scale(%[[LR]] : tensor<?x2x?x3xf32>) scale_column = 1 chunk_size = 4 factor = 2.500000e-01 : {{.*}} -> tensor<?x2x?x12x8xf32>
// CHECK: %[[MU:.+]] = linattn.chunk_mean %[[M]] chunk_size = 4
// CHECK: %[[U:.+]] = linattn.scan %[[G]] decay(%[[MU]] : tensor<?x2x?xf32>) kind = decayed mode = inclusive
// CHECK: %[[D:.+]] = linattn.state_transform %[[U]] steps = 5 coeffs = [3.444500e+00, -4.775000e+00, 2.031500e+00] factor = 5.000000e-01
// CHECK: %[[S:.+]] = linattn.scan %[[D]] initial(%[[W1]] : tensor<2x12x8xf32>) kind = additive mode = exclusive
// CHECK: %[[O:.+]] = linattn.chunk_apply %[[QF]], %[[S]] chunk_size = 4 : tensor<?x2x?x12xf32>, tensor<?x2x?x12x8xf32> -> tensor<?x2x?x8xf32>
// CHECK: return %[[O]]
func.func @lact_v5(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>,
    %w0: tensor<2x8x12xf32>, %w1: tensor<2x12x8xf32>, %w2: tensor<2x8x12xf32>,
    %lr: tensor<?x2x?x3xf32>, %m: tensor<?x2x?xf32>) -> tensor<?x2x?x8xf32> {
  %o = ttt.kvb_layer %q, %k, %v : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      weights(%w0, %w1, %w2 : tensor<2x8x12xf32>, tensor<2x12x8xf32>, tensor<2x8x12xf32>)
      lr(%lr : tensor<?x2x?x3xf32>) momentum(%m : tensor<?x2x?xf32>)
      model = #ttt.model<kind = swiglu, trained = [1]> loss = #ttt.loss<kind = dot, scale = 0.25>
      update = #ttt.update<lr_scale = 0.5, orthogonalize = #ttt.newton_schulz<steps = 5, coeffs = [3.4445, -4.775, 2.0315]>>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// Update-then-apply and gradient ascent: an inclusive scan, and the sign and
// step size fold into the contribution factor (no Muon, so lr folds too).
// CHECK-LABEL: func.func @ascent_update_first
// CHECK: %[[G:.+]] = linattn.chunk_reduce %{{.+}}, %{{.+}} chunk_size = 8 factor = -3.000000e-01 mean
// CHECK: linattn.scan %[[G]] initial(%{{.+}} : tensor<2x8x8xf32>) kind = additive mode = inclusive
func.func @ascent_update_first(%q: tensor<2x2x20x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<2x2x20x8xf32> {
  %o = ttt.kvb_layer %q, %q, %q : tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot, reduction = mean>
      update = #ttt.update<sign = ascent, lr_scale = 0.3>
      schedule = #ttt.schedule<kind = chunked, size = 8, order = update_then_apply> -> tensor<2x2x20x8xf32>
  return %o : tensor<2x2x20x8xf32>
}

// -----

// A trained output bias is a constant feature: k^ and q^ get a trailing 1 and
// the initial state stacks W on b.
// CHECK-LABEL: func.func @mlp_bias_feature
// CHECK: linattn.feature_map %{{.+}} weights(%{{.+}}, %{{.+}} : tensor<2x8x16xf32>, tensor<2x1x16xf32>) kind = mlp activation = relu append_one : tensor<2x2x20x8xf32> -> tensor<2x2x20x17xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x17x8xf32>
// CHECK: %[[S1:.+]] = tensor.insert_slice %{{.+}} into %[[E]][0, 0, 0] [2, 16, 8]
// CHECK: %[[S0:.+]] = tensor.insert_slice %{{.+}} into %[[S1]][0, 16, 0] [2, 1, 8]
// CHECK: linattn.scan %{{.+}} initial(%[[S0]] : tensor<2x17x8xf32>) kind = additive mode = exclusive
func.func @mlp_bias_feature(%q: tensor<2x2x20x8xf32>, %w0: tensor<2x8x16xf32>, %b0: tensor<2x1x16xf32>,
    %w1: tensor<2x16x8xf32>, %b1: tensor<2x1x8xf32>) -> tensor<2x2x20x8xf32> {
  %o = ttt.kvb_layer %q, %q, %q : tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>
      weights(%w0, %b0, %w1, %b1 : tensor<2x8x16xf32>, tensor<2x1x16xf32>, tensor<2x16x8xf32>, tensor<2x1x8xf32>)
      model = #ttt.model<kind = mlp, trained = [2, 3], bias = true, activation = relu>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 8> -> tensor<2x2x20x8xf32>
  return %o : tensor<2x2x20x8xf32>
}

// -----

// The causal order of a dot-product layer: exclusive chunk states plus the
// token-causal term inside each chunk, its values scaled as the chunk states
// are (step, per-token rates, the mean over each chunk), all in linattn ops.
// CHECK-LABEL: func.func @causal_dot
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x20x8xf32>, %[[W:.+]]: tensor<2x8x8xf32>, %[[LR:.+]]: tensor<2x2x20x1xf32>)
// CHECK: %[[G:.+]] = linattn.chunk_reduce %[[Q]], %[[Q]] scale(%[[LR]] : tensor<2x2x20x1xf32>) chunk_size = 8 factor = 5.000000e-01 mean
// CHECK: %[[S:.+]] = linattn.scan %[[G]] initial(%[[W]] : tensor<2x8x8xf32>) kind = additive mode = exclusive
// CHECK: linattn.chunk_apply %[[Q]], %[[S]] intra(%[[Q]], %[[Q]] : tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>) intra_scale(%[[LR]] : tensor<2x2x20x1xf32>) chunk_size = 8 intra_factor = 5.000000e-01 intra_mean
// CHECK-NOT: linalg.
func.func @causal_dot(%q: tensor<2x2x20x8xf32>, %w: tensor<2x8x8xf32>, %lr: tensor<2x2x20x1xf32>) -> tensor<2x2x20x8xf32> {
  %o = ttt.kvb_layer %q, %q, %q : tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>
      weights(%w : tensor<2x8x8xf32>) lr(%lr : tensor<2x2x20x1xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot, reduction = mean>
      update = #ttt.update<lr_scale = 0.5>
      schedule = #ttt.schedule<kind = chunked, size = 8, order = causal> -> tensor<2x2x20x8xf32>
  return %o : tensor<2x2x20x8xf32>
}

// -----

// MSE: T_c = c K^T K and G_c = -c K^T V drive a residual affine scan.
// CHECK-LABEL: func.func @mse_affine
// CHECK: %[[T:.+]] = linattn.chunk_reduce %[[K:.+]], %[[K]] chunk_size = 4 factor = -2.000000e-01 : {{.*}} -> tensor<?x2x?x8x8xf32>
// CHECK: %[[G:.+]] = linattn.chunk_reduce %[[K]], %{{.+}} chunk_size = 4 factor = 2.000000e-01
// CHECK: linattn.scan %[[G]] initial(%{{.+}} : tensor<2x8x8xf32>) transition(%[[T]] : tensor<?x2x?x8x8xf32>) kind = residual_affine mode = exclusive
func.func @mse_affine(%q: tensor<?x2x?x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<?x2x?x8xf32> {
  %o = ttt.kvb_layer %q, %q, %q : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = mse>
      update = #ttt.update<lr_scale = 0.2>
      schedule = #ttt.schedule<kind = chunked, size = 4> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// A full-batch step without state transforms is one full-mask attention, the
// loss's mean and the step size in the op (no linalg or tensor ops).
// CHECK-LABEL: func.func @full_batch
// CHECK-SAME: (%[[Q:.+]]: tensor<1x1x30x8xf32>, %[[K:.+]]: tensor<1x1x20x8xf32>, %[[W:.+]]: tensor<1x8x8xf32>)
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK: %[[O:.+]] = linattn.attention %[[Q]], %[[K]], %[[K]] initial(%[[W]] : tensor<1x8x8xf32>) mask = full factor = 5.000000e-01 mean
// CHECK-NEXT: return %[[O]]
func.func @full_batch(%q: tensor<1x1x30x8xf32>, %k: tensor<1x1x20x8xf32>, %w: tensor<1x8x8xf32>) -> tensor<1x1x30x8xf32> {
  %o = ttt.kvb_layer %q, %k, %k : tensor<1x1x30x8xf32>, tensor<1x1x20x8xf32>, tensor<1x1x20x8xf32>
      weights(%w : tensor<1x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot, reduction = mean>
      update = #ttt.update<lr_scale = 0.5>
      schedule = #ttt.schedule<kind = full_batch> -> tensor<1x1x30x8xf32>
  return %o : tensor<1x1x30x8xf32>
}

// -----

// Blockers leave the layer as it was.
// CHECK-LABEL: func.func @weight_norm_blocks
// CHECK: ttt.kvb_layer
// CHECK-NOT: linattn.
func.func @weight_norm_blocks(%q: tensor<2x2x20x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<2x2x20x8xf32> {
  // expected-remark @+1 {{ttt-to-linattn: left unchanged; exact lowering: chunk-sequential loop; proven: output layer W is linear and bias-free; the feature map is the identity (only the output layer trains); blocked by: row weight normalization after each update rescales the state by its own norms (non-linear in the state)}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      update = #ttt.update<weight_norm = output_channels>
      schedule = #ttt.schedule<kind = chunked, size = 8> -> tensor<2x2x20x8xf32>
  return %o : tensor<2x2x20x8xf32>
}

// -----

// CHECK-LABEL: func.func @token_eta_unsupported
// CHECK: ttt.kvb_layer
func.func @token_eta_unsupported(%q: tensor<2x2x20x8xf32>, %w: tensor<2x8x8xf32>, %e: tensor<8xf32>) -> tensor<2x2x20x8xf32> {
  // expected-remark @+1 {{not rewritten: per-position step sizes (token_eta) weight the intra-chunk term per query}}
  %o = ttt.kvb_layer %q, %q, %q : tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>
      weights(%w : tensor<2x8x8xf32>) token_eta(%e : tensor<8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 8, order = causal> -> tensor<2x2x20x8xf32>
  return %o : tensor<2x2x20x8xf32>
}

// -----

// CHECK-LABEL: func.func @final_weights_used
// CHECK: ttt.kvb_layer
func.func @final_weights_used(%q: tensor<2x2x20x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<2x2x8x8xf32> {
  // expected-remark @+1 {{not rewritten: the final fast weights are used}}
  %o, %wf = ttt.kvb_layer %q, %q, %q : tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>, tensor<2x2x20x8xf32>
      weights(%w : tensor<2x8x8xf32>)
      model = #ttt.model<kind = linear, trained = [0]> loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 8> -> tensor<2x2x20x8xf32>, tensor<2x2x8x8xf32>
  return %wf : tensor<2x2x8x8xf32>
}
