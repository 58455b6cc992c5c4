// linattn-decompose: linattn.attention becomes chunk_reduce, scan and
// chunk_apply, the form every back end lowers.
// RUN: ttt-opt %s --linattn-decompose --split-input-file | FileCheck %s

// A strict chunk mask: the chunk states' exclusive prefix sum from the
// initial state, the decay (if any) making it a decayed scan.
// CHECK-LABEL: func.func @chunk_strict
// CHECK-SAME: (%[[Q:[^:]+]]: {{.*}}, %[[K:[^:]+]]: {{.*}}, %[[V:[^:]+]]: {{.*}}, %[[S0:[^:]+]]: {{.*}}, %[[A:[^:]+]]: tensor<?x2x?xf32>)
// CHECK: %[[G:.+]] = linattn.chunk_reduce %[[K]], %[[V]] chunk_size = 16 : tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x16x8xf32>
// CHECK: %[[S:.+]] = linattn.scan %[[G]] initial(%[[S0]] : tensor<2x16x8xf32>) decay(%[[A]] : tensor<?x2x?xf32>) kind = decayed mode = exclusive
// CHECK: %[[O:.+]] = linattn.chunk_apply %[[Q]], %[[S]] chunk_size = 16 : tensor<?x2x?x16xf32>, tensor<?x2x?x16x8xf32> -> tensor<?x2x?x8xf32>
// CHECK: return %[[O]]
func.func @chunk_strict(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>,
    %s0: tensor<2x16x8xf32>, %a: tensor<?x2x?xf32>) -> tensor<?x2x?x8xf32> {
  %o = linattn.attention %q, %k, %v initial(%s0 : tensor<2x16x8xf32>) decay(%a : tensor<?x2x?xf32>)
      mask = chunk_strict chunk_size = 16
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// The token-causal mask without decay: 64-token tiles, the tiles before a
// token from an exclusive scan and its own tile from the intra-tile term,
// both weighed by the same scale column and factor.
// CHECK-LABEL: func.func @token_causal
// CHECK-SAME: (%[[Q:[^:]+]]: {{.*}}, %[[K:[^:]+]]: {{.*}}, %[[V:[^:]+]]: {{.*}}, %[[LR:[^:]+]]: tensor<?x2x?x3xf32>)
// CHECK: %[[G:.+]] = linattn.chunk_reduce %[[K]], %[[V]] scale(%[[LR]] : tensor<?x2x?x3xf32>) scale_column = 2 chunk_size = 64 factor = 5.000000e-01
// CHECK: %[[S:.+]] = linattn.scan %[[G]] kind = additive mode = exclusive
// CHECK: linattn.chunk_apply %[[Q]], %[[S]] intra(%[[K]], %[[V]] : {{.*}}) intra_scale(%[[LR]] : tensor<?x2x?x3xf32>) scale_column = 2 chunk_size = 64 intra_factor = 5.000000e-01
func.func @token_causal(%q: tensor<?x2x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>,
    %lr: tensor<?x2x?x3xf32>) -> tensor<?x2x?x8xf32> {
  %o = linattn.attention %q, %k, %v scale(%lr : tensor<?x2x?x3xf32>) scale_column = 2
      mask = token_causal factor = 0.5
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// With a per-token decay every token is a chunk and the scan is inclusive.
// CHECK-LABEL: func.func @token_causal_decayed
// CHECK: %[[G:.+]] = linattn.chunk_reduce %{{.+}}, %{{.+}} chunk_size = 1
// CHECK: %[[S:.+]] = linattn.scan %[[G]] decay(%{{.+}} : tensor<?x2x?xf32>) kind = decayed mode = inclusive
// CHECK: linattn.chunk_apply %{{.+}}, %[[S]] chunk_size = 1 :
func.func @token_causal_decayed(%q: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>,
    %a: tensor<?x2x?xf32>) -> tensor<?x2x?x8xf32> {
  %o = linattn.attention %q, %q, %v decay(%a : tensor<?x2x?xf32>) mask = token_causal
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// The full mask: one chunk of every key (no chunk size), the initial state
// added by a one-chunk scan, one state that all queries read (here more
// queries than keys).
// CHECK-LABEL: func.func @full
// CHECK-SAME: (%[[Q:[^:]+]]: {{.*}}, %[[K:[^:]+]]: {{.*}}, %[[V:[^:]+]]: {{.*}}, %[[S0:[^:]+]]: {{.*}}, %[[LR:[^:]+]]: tensor<1x2x20xf32>)
// CHECK: %[[G:.+]] = linattn.chunk_reduce %[[K]], %[[V]] scale(%[[LR]] : tensor<1x2x20xf32>) factor = 2.500000e-01 mean : tensor<1x2x20x16xf32>, tensor<1x2x20x8xf32> -> tensor<1x2x1x16x8xf32>
// CHECK: %[[S:.+]] = linattn.scan %[[G]] initial(%[[S0]] : tensor<2x16x8xf32>) kind = additive mode = inclusive
// CHECK: %[[O:.+]] = linattn.chunk_apply %[[Q]], %[[S]] : tensor<1x2x30x16xf32>, tensor<1x2x1x16x8xf32> -> tensor<1x2x30x8xf32>
// CHECK: return %[[O]]
func.func @full(%q: tensor<1x2x30x16xf32>, %k: tensor<1x2x20x16xf32>, %v: tensor<1x2x20x8xf32>,
    %s0: tensor<2x16x8xf32>, %lr: tensor<1x2x20xf32>) -> tensor<1x2x30x8xf32> {
  %o = linattn.attention %q, %k, %v initial(%s0 : tensor<2x16x8xf32>) scale(%lr : tensor<1x2x20xf32>)
      mask = full factor = 0.25 mean
      : tensor<1x2x30x16xf32>, tensor<1x2x20x16xf32>, tensor<1x2x20x8xf32> -> tensor<1x2x30x8xf32>
  return %o : tensor<1x2x30x8xf32>
}

// -----

// Without an initial state the full mask needs no scan.
// CHECK-LABEL: func.func @full_from_zero
// CHECK: %[[G:.+]] = linattn.chunk_reduce
// CHECK-NOT: linattn.scan
// CHECK: linattn.chunk_apply %{{.+}}, %[[G]] :
func.func @full_from_zero(%q: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %o = linattn.attention %q, %q, %v mask = full
      : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}
