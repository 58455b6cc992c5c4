// The recurrent reference lowering: one scf.forall iteration per (batch,
// head) stream, a sequential scf.for over chunks, linalg on tensors inside.
// The numbers are checked against the NumPy oracle in test/python.
// RUN: ttt-opt %s --ttt-lower-recurrent --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @apply_then_update
// CHECK-SAME: (%[[Q:.+]]: tensor<?x2x?x4xf32>, %[[W:.+]]: tensor<2x4x4xf32>)
// CHECK-NOT: ttt.kvb_layer
// CHECK: %[[B:.+]] = tensor.dim %[[Q]], %c0
// CHECK: %[[OUT:.+]] = tensor.empty(%[[B]], %{{.+}}) : tensor<?x2x?x4xf32>
// CHECK: %[[RES:.+]] = scf.forall (%[[BI:.+]], %[[HI:.+]]) in (%[[B]], 2) shared_outs(%[[ACC:.+]] = %[[OUT]])
// CHECK: %[[WS:.+]] = tensor.extract_slice %[[W]][%[[HI]], 0, 0] [1, 4, 4] [1, 1, 1] : tensor<2x4x4xf32> to tensor<4x4xf32>
// CHECK: %[[CHUNKS:.+]] = arith.ceildivui %{{.+}}, %c4
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[C:.+]] = %c0 to %[[CHUNKS]] step %c1 iter_args(%[[WI:.+]] = %[[WS]], %[[O:.+]] = %{{.+}})
// CHECK:   %[[START:.+]] = arith.muli %[[C]], %c4
// CHECK:   %[[COUNT:.+]] = arith.minui %c4,
// The chunk's queries are applied to the state before the update ...
// CHECK:   %[[APPLY:.+]] = linalg.generic {{.*}} ins(%{{.+}}, %[[WI]] : tensor<?x4xf32>, tensor<4x4xf32>)
// CHECK:   %[[STORED:.+]] = tensor.insert_slice %[[APPLY]] into %[[O]][%[[START]], 0] [%[[COUNT]], 4]
// ... then the weights take one descent step on the dot-product loss.
// CHECK:   arith.negf
// CHECK:   %[[NEW:.+]] = linalg.generic {{.*}} ins(%[[WI]], %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK:   scf.yield %[[NEW]], %[[STORED]]
// CHECK: scf.forall.in_parallel
// CHECK:   tensor.parallel_insert_slice %[[LOOP]]#1 into %[[ACC]][%[[BI]], %[[HI]], 0, 0]
// CHECK: return %[[RES]]
func.func @apply_then_update(%q: tensor<?x2x?x4xf32>, %w: tensor<2x4x4xf32>)
    -> tensor<?x2x?x4xf32> {
  %o = ttt.kvb_layer %q, %q, %q
      : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
      weights(%w : tensor<2x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<?x2x?x4xf32>
  return %o : tensor<?x2x?x4xf32>
}

// -----

// Update-then-apply with two inner steps: the update is an inner scf.for
// before the apply; the final weights are returned as a second shared output.
// CHECK-LABEL: func.func @inner_steps_update_first
// CHECK: scf.forall {{.*}} shared_outs(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<?x2x?x4xf32>, tensor<?x2x4x4xf32>)
// CHECK: scf.for %{{.+}} = %c0 to %{{.+}} step %c1 iter_args(%[[W:.+]] = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK:   %[[STEPS:.+]] = scf.for %{{.+}} = %c0 to %c2 step %c1 iter_args(%{{.+}} = %[[W]])
// CHECK:   linalg.generic {{.*}} ins(%{{.+}}, %[[STEPS]] : tensor<?x4xf32>, tensor<4x4xf32>)
// CHECK:   tensor.insert_slice
// CHECK: tensor.parallel_insert_slice
// CHECK: tensor.parallel_insert_slice
func.func @inner_steps_update_first(%q: tensor<?x2x?x4xf32>, %w: tensor<2x4x4xf32>)
    -> (tensor<?x2x?x4xf32>, tensor<?x2x4x4xf32>) {
  %o, %wf = ttt.kvb_layer %q, %q, %q
      : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
      weights(%w : tensor<2x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = mse>
      schedule = #ttt.schedule<kind = chunked, size = 4, order = update_then_apply, inner_steps = 2>
      -> tensor<?x2x?x4xf32>, tensor<?x2x4x4xf32>
  return %o, %wf : tensor<?x2x?x4xf32>, tensor<?x2x4x4xf32>
}

// -----

// The causal (dual) form masks the query-key scores of a chunk to its lower
// triangle, so token i reads the gradients of tokens j <= i only.
// CHECK-LABEL: func.func @causal_dual_form
// CHECK: scf.for
// CHECK:   linalg.generic {{.*}} outs(%{{.+}} : tensor<?x?xf32>)
// CHECK:     %[[ROW:.+]] = linalg.index 0 : index
// CHECK:     %[[COL:.+]] = linalg.index 1 : index
// CHECK:     arith.cmpi uge, %[[ROW]], %[[COL]] : index
// CHECK:   tensor.extract %{{.+}}[%{{.+}}] : tensor<?xf32>
func.func @causal_dual_form(%q: tensor<2x2x40x8xf32>, %w: tensor<2x8x8xf32>,
    %b: tensor<2x1x8xf32>, %eta: tensor<16xf32>, %g: tensor<8xf32>)
    -> tensor<2x2x40x8xf32> {
  %o = ttt.kvb_layer %q, %q, %q
      : tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>, tensor<2x2x40x8xf32>
      weights(%w, %b : tensor<2x8x8xf32>, tensor<2x1x8xf32>)
      token_eta(%eta : tensor<16xf32>)
      layernorm(%g, %g : tensor<8xf32>, tensor<8xf32>)
      model = #ttt.model<kind = linear, trained = [0, 1], bias = true>
      loss = #ttt.loss<kind = layernorm_mse>
      schedule = #ttt.schedule<kind = chunked, size = 16, order = causal>
      -> tensor<2x2x40x8xf32>
  return %o : tensor<2x2x40x8xf32>
}

// -----

// A full-batch layer has no chunk loop: one update, then one apply to every
// query (here bf16, computed in f32 and rounded at the end).
// CHECK-LABEL: func.func @full_batch_bf16
// CHECK: scf.forall
// CHECK-NOT: scf.for
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK: scf.forall.in_parallel
func.func @full_batch_bf16(%q: tensor<1x1x12x4xbf16>, %k: tensor<1x1x8x4xbf16>,
    %wa: tensor<1x4x4xbf16>, %wg: tensor<1x4x4xbf16>) -> tensor<1x1x12x4xbf16> {
  %o = ttt.kvb_layer %q, %k, %k
      : tensor<1x1x12x4xbf16>, tensor<1x1x8x4xbf16>, tensor<1x1x8x4xbf16>
      weights(%wa, %wg : tensor<1x4x4xbf16>, tensor<1x4x4xbf16>)
      model = #ttt.model<kind = glu, trained = [0, 1]>
      loss = #ttt.loss<kind = dot, reduction = mean>
      update = #ttt.update<clip = output_channels>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<1x1x12x4xbf16>
  return %o : tensor<1x1x12x4xbf16>
}

// -----

// Muon computing in bf16 on f32 weights: the update rounded to bf16 (truncf
// then extf), the Gram product accumulated in f32 and rounded, (c A) A, the
// step's sums rounded: every intermediate goes through bf16.
// CHECK-LABEL: func.func @muon_in_bf16
// CHECK-DAG: %[[A:.+]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[C:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[B:.+]] = arith.constant -1.000000e+00 : f32
// The update, rounded.
// CHECK: %[[U0:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT: arith.extf %[[U0]] : bf16 to f32
// The norm, its shift and the quotient, each rounded.
// CHECK: math.sqrt
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.divf
// CHECK-NEXT: arith.truncf
// A = X X^T accumulated in f32, then rounded; c A rounded.
// CHECK: %[[GRAM:.+]] = linalg.generic {{.*}} ins(%[[X:.+]], %[[X]] : {{.*}}) outs(%{{.+}} : tensor<4x4xf32>)
// CHECK: arith.addf %{{.+}}, %{{.+}} : f32
// CHECK: %[[A_:.+]] = linalg.generic {{.*}} ins(%[[GRAM]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK: arith.mulf %[[C]], %{{.+}} : f32
// CHECK-NEXT: arith.truncf
// (c A) A, rounded; b A + that, each rounded.
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[A_]] :
// CHECK: arith.truncf
// CHECK: arith.mulf %[[B]], %{{.+}} : f32
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.truncf
// (b A + c A A) X, rounded; a X + that, each rounded.
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[X]] :
// CHECK: arith.truncf
// CHECK: arith.mulf %[[A]], %{{.+}} : f32
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.extf %{{.+}} : bf16 to f32
// CHECK-NOT: bf16
// CHECK: return
func.func @muon_in_bf16(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>,
    %v: tensor<1x1x8x4xf32>, %w: tensor<1x4x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
      weights(%w : tensor<1x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1,
                 coeffs = [3.0, -1.0, 2.0], compute = bf16>>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// -----

// `base = update`: the new weight is the update plus its Newton-Schulz
// result; the old weight is read only by the gradient.
// CHECK-LABEL: func.func @muon_added_to_the_update
// CHECK-SAME: %[[W:[^:]+]]: tensor<1x4x4xf32>
// The update U (k^T v, scaled).
// CHECK: %[[KV:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: %[[U:.+]] = linalg.generic {{.*}} ins(%[[KV]] : tensor<4x4xf32>)
// CHECK: math.sqrt
// The step's result, a X + (b A + c A A) X, scaled by lr_scale.
// CHECK: %[[SCALED:.+]] = linalg.generic {{.*}} ins(%{{[^ ,]+}} : tensor<4x4xf32>)
// Added to U, not to the weight.
// CHECK: %[[NEW:.+]] = linalg.generic {{.*}} ins(%[[U]], %[[SCALED]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[NEW]] : tensor<8x4xf32>, tensor<4x4xf32>)
func.func @muon_added_to_the_update(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>,
    %v: tensor<1x1x8x4xf32>, %w: tensor<1x4x4xf32>) -> tensor<1x1x8x4xf32> {
  %o = ttt.kvb_layer %q, %k, %v
      : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
      weights(%w : tensor<1x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<orthogonalize = #ttt.newton_schulz<steps = 1,
                 coeffs = [3.0, -1.0, 2.0]>, base = update>
      schedule = #ttt.schedule<kind = full_batch>
      -> tensor<1x1x8x4xf32>
  return %o : tensor<1x1x8x4xf32>
}

// -----

// The depth-wise convolution branch: per (batch, channel) plane, the kernel
// gradient and the convolution are each one linalg.generic over a padded map.
// CHECK: #[[$CONV_IN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0 + d2, d1 + d3)>
// CHECK-LABEL: func.func @dwconv
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (%{{.+}}, 8)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[$CONV_IN]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<3x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$CONV_IN]], {{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<?x?xf32>)
func.func @dwconv(%q: tensor<?x8x?x?xf32>, %w: tensor<8x3x3xf32>) -> tensor<?x8x?x?xf32> {
  %o = ttt.dwconv_layer %q, %q, %q, %w
      : tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<?x8x?x?xf32>, tensor<8x3x3xf32>
      loss = #ttt.loss<kind = dot, reduction = mean> update = #ttt.update<clip = frobenius>
      -> tensor<?x8x?x?xf32>
  return %o : tensor<?x8x?x?xf32>
}
