// Round trip of every linattn op: custom form, and the generic form parsed
// back, must print the same.
// RUN: ttt-opt %s | ttt-opt | FileCheck %s
// RUN: ttt-opt %s --mlir-print-op-generic | ttt-opt | FileCheck %s

// The chunked form of a static-kernel LaCT layer (the paper's V2): SwiGLU
// features, per-chunk contributions, momentum as a decayed scan, Muon per
// chunk, the learned W1 as initial state, apply-then-update as an exclusive
// prefix sum.
// CHECK-LABEL: func.func @lact_v2_chunked
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<?x4x?x64xf32>, %[[K:[^:]+]]: tensor<?x4x?x64xf32>, %[[V:[^:]+]]: tensor<?x4x?x64xf32>, %[[ETA:[^:]+]]: tensor<?x4x?xf32>, %[[MU:[^:]+]]: tensor<?x4x?xf32>, %[[W0:[^:]+]]: tensor<4x64x128xf32>, %[[W1:[^:]+]]: tensor<4x128x64xf32>, %[[W2:[^:]+]]: tensor<4x64x128xf32>)
// CHECK: %[[QF:.+]] = linattn.feature_map %[[Q]] weights(%[[W0]], %[[W2]] : tensor<4x64x128xf32>, tensor<4x64x128xf32>) kind = swiglu : tensor<?x4x?x64xf32> -> tensor<?x4x?x128xf32>
// CHECK: %[[KF:.+]] = linattn.feature_map %[[K]] weights(%[[W0]], %[[W2]] : {{.*}}) kind = swiglu
// CHECK: %[[G:.+]] = linattn.chunk_reduce %[[KF]], %[[V]] scale(%[[ETA]] : tensor<?x4x?xf32>) chunk_size = 2048 factor = -1.000000e+00 : tensor<?x4x?x128xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x128x64xf32>
// CHECK: %[[MEAN:.+]] = linattn.chunk_mean %[[MU]] chunk_size = 2048 : tensor<?x4x?xf32> -> tensor<?x4x?xf32>
// CHECK: %[[U:.+]] = linattn.scan %[[G]] decay(%[[MEAN]] : tensor<?x4x?xf32>) kind = decayed mode = inclusive : tensor<?x4x?x128x64xf32> -> tensor<?x4x?x128x64xf32>
// CHECK: %[[D:.+]] = linattn.state_transform %[[U]] steps = 5 coeffs = [3.444500e+00, -4.775000e+00, 2.031500e+00] : tensor<?x4x?x128x64xf32> -> tensor<?x4x?x128x64xf32>
// CHECK: %[[S:.+]] = linattn.scan %[[D]] initial(%[[W1]] : tensor<4x128x64xf32>) kind = additive mode = exclusive
// CHECK: %[[O:.+]] = linattn.chunk_apply %[[QF]], %[[S]] chunk_size = 2048 : tensor<?x4x?x128xf32>, tensor<?x4x?x128x64xf32> -> tensor<?x4x?x64xf32>
// CHECK: return %[[O]]
func.func @lact_v2_chunked(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>,
    %v: tensor<?x4x?x64xf32>, %eta: tensor<?x4x?xf32>, %mu: tensor<?x4x?xf32>,
    %w0: tensor<4x64x128xf32>, %w1: tensor<4x128x64xf32>,
    %w2: tensor<4x64x128xf32>) -> tensor<?x4x?x64xf32> {
  %qf = linattn.feature_map %q weights(%w0, %w2 : tensor<4x64x128xf32>, tensor<4x64x128xf32>)
      kind = swiglu : tensor<?x4x?x64xf32> -> tensor<?x4x?x128xf32>
  %kf = linattn.feature_map %k weights(%w0, %w2 : tensor<4x64x128xf32>, tensor<4x64x128xf32>)
      kind = swiglu : tensor<?x4x?x64xf32> -> tensor<?x4x?x128xf32>
  %g = linattn.chunk_reduce %kf, %v scale(%eta : tensor<?x4x?xf32>) chunk_size = 2048
      factor = -1.0 : tensor<?x4x?x128xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x128x64xf32>
  %mean = linattn.chunk_mean %mu chunk_size = 2048 : tensor<?x4x?xf32> -> tensor<?x4x?xf32>
  %u = linattn.scan %g decay(%mean : tensor<?x4x?xf32>) kind = decayed mode = inclusive
      : tensor<?x4x?x128x64xf32> -> tensor<?x4x?x128x64xf32>
  %d = linattn.state_transform %u steps = 5 coeffs = [3.4445, -4.775, 2.0315]
      : tensor<?x4x?x128x64xf32> -> tensor<?x4x?x128x64xf32>
  %s = linattn.scan %d initial(%w1 : tensor<4x128x64xf32>) kind = additive mode = exclusive
      : tensor<?x4x?x128x64xf32> -> tensor<?x4x?x128x64xf32>
  %o = linattn.chunk_apply %qf, %s chunk_size = 2048
      : tensor<?x4x?x128xf32>, tensor<?x4x?x128x64xf32> -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// Every mask of the one-op form, decay, initial state, and the MLP feature
// map with a bias row and an appended constant feature.
// CHECK-LABEL: func.func @attention_forms
// CHECK: %[[F:.+]] = linattn.feature_map %{{.+}} weights(%{{.+}}, %{{.+}} : tensor<2x16x32xf32>, tensor<2x1x32xf32>) kind = mlp activation = gelu_tanh append_one : tensor<?x2x?x16xf32> -> tensor<?x2x?x33xf32>
// CHECK: linattn.attention %{{.+}}, %{{.+}}, %{{.+}} mask = token_causal : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
// CHECK: linattn.attention %{{.+}}, %{{.+}}, %{{.+}} decay(%{{.+}} : tensor<?x2x?xf32>) mask = token_causal
// CHECK: linattn.attention %{{.+}}, %{{.+}}, %{{.+}} initial(%{{.+}} : tensor<2x16x8xf32>) mask = chunk_strict chunk_size = 64
// CHECK: linattn.attention %{{.+}}, %{{.+}}, %{{.+}} initial(%{{.+}} : tensor<2x16x8xf32>) decay(%{{.+}} : tensor<?x2x?xf32>) mask = chunk_inclusive chunk_size = 16
// CHECK: linattn.attention %{{.+}}, %{{.+}}, %{{.+}} mask = full : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
func.func @attention_forms(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>,
    %v: tensor<?x2x?x8xf32>, %s0: tensor<2x16x8xf32>, %a: tensor<?x2x?xf32>,
    %w0: tensor<2x16x32xf32>, %b0: tensor<2x1x32xf32>) {
  %f = linattn.feature_map %q weights(%w0, %b0 : tensor<2x16x32xf32>, tensor<2x1x32xf32>)
      kind = mlp activation = gelu_tanh append_one
      : tensor<?x2x?x16xf32> -> tensor<?x2x?x33xf32>
  %o1 = linattn.attention %q, %k, %v mask = token_causal
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  %o2 = linattn.attention %q, %k, %v decay(%a : tensor<?x2x?xf32>) mask = token_causal
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  %o3 = linattn.attention %q, %k, %v initial(%s0 : tensor<2x16x8xf32>)
      mask = chunk_strict chunk_size = 64
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  %o4 = linattn.attention %q, %k, %v initial(%s0 : tensor<2x16x8xf32>)
      decay(%a : tensor<?x2x?xf32>) mask = chunk_inclusive chunk_size = 16
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  %o5 = linattn.attention %q, %k, %v mask = full
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return
}

// The affine scan of the MSE loss (transition I - K^T D K per chunk) with a
// per-sample initial state, and the token-causal intra-chunk term.
// CHECK-LABEL: func.func @affine_scan_and_intra
// CHECK: linattn.scan %{{.+}} initial(%{{.+}} : tensor<?x2x16x8xf32>) transition(%{{.+}} : tensor<?x2x?x16x16xf32>) kind = affine mode = inclusive
// CHECK: linattn.chunk_apply %{{.+}}, %{{.+}} intra(%{{.+}}, %{{.+}} : tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>) chunk_size = 16
// CHECK: linattn.feature_map %{{.+}} kind = identity : tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
// CHECK: linattn.chunk_reduce %{{.+}}, %{{.+}} chunk_size = 16 factor = 5.000000e-01 mean
func.func @affine_scan_and_intra(%g: tensor<?x2x?x16x8xf32>,
    %a: tensor<?x2x?x16x16xf32>, %s0: tensor<?x2x16x8xf32>,
    %q: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) {
  %s = linattn.scan %g initial(%s0 : tensor<?x2x16x8xf32>)
      transition(%a : tensor<?x2x?x16x16xf32>) kind = affine mode = inclusive
      : tensor<?x2x?x16x8xf32> -> tensor<?x2x?x16x8xf32>
  %o = linattn.chunk_apply %q, %s intra(%q, %v : tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>)
      chunk_size = 16 : tensor<?x2x?x16xf32>, tensor<?x2x?x16x8xf32> -> tensor<?x2x?x8xf32>
  %i = linattn.feature_map %q kind = identity : tensor<?x2x?x16xf32> -> tensor<?x2x?x16xf32>
  %g2 = linattn.chunk_reduce %q, %v chunk_size = 16 factor = 0.5 mean
      : tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x16x8xf32>
  return
}

// One chunk of the whole sequence (no chunk size), a learning-rate column of
// a [B, H, T, n] scale, and the full mask's scale, factor and mean.
// CHECK-LABEL: func.func @whole_sequence_and_columns
// CHECK: linattn.chunk_reduce %{{.+}}, %{{.+}} scale(%{{.+}} : tensor<?x2x?x3xf32>) scale_column = 2 factor = 5.000000e-01 mean : tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x1x16x8xf32>
// CHECK: linattn.chunk_apply %{{.+}}, %{{.+}} : tensor<?x2x?x16xf32>, tensor<?x2x1x16x8xf32> -> tensor<?x2x?x8xf32>
// CHECK: linattn.chunk_apply %{{.+}}, %{{.+}} intra(%{{.+}}, %{{.+}} : {{.*}}) intra_scale(%{{.+}} : tensor<?x2x?x3xf32>) scale_column = 1 chunk_size = 4
// CHECK: linattn.attention %{{.+}}, %{{.+}}, %{{.+}} scale(%{{.+}} : tensor<?x2x?x3xf32>) scale_column = 1 mask = full factor = 2.500000e-01 mean
func.func @whole_sequence_and_columns(%q: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>,
    %lr: tensor<?x2x?x3xf32>, %s: tensor<?x2x?x16x8xf32>) {
  %g = linattn.chunk_reduce %q, %v scale(%lr : tensor<?x2x?x3xf32>) scale_column = 2 factor = 0.5 mean
      : tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x1x16x8xf32>
  %o = linattn.chunk_apply %q, %g : tensor<?x2x?x16xf32>, tensor<?x2x1x16x8xf32> -> tensor<?x2x?x8xf32>
  %c = linattn.chunk_apply %q, %s intra(%q, %v : tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32>)
      intra_scale(%lr : tensor<?x2x?x3xf32>) scale_column = 1 chunk_size = 4
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16x8xf32> -> tensor<?x2x?x8xf32>
  %f = linattn.attention %q, %q, %v scale(%lr : tensor<?x2x?x3xf32>) scale_column = 1 mask = full
      factor = 0.25 mean : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return
}
