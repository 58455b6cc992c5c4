// linattn-to-linalg: batched linalg ops over every token / chunk; only the
// chunk-state scan has a loop (log-depth by default).
// RUN: ttt-opt %s --linattn-to-linalg --split-input-file | FileCheck %s
// RUN: ttt-opt %s --linattn-to-linalg=scan=sequential --split-input-file | FileCheck %s --check-prefix=SEQ

// Per-chunk contributions: pad to whole chunks, view [.., T, F] as
// [.., N, C, F], contract over the C tokens of every chunk at once (the
// token loop sits outside the value loop, which is contiguous).
// CHECK-LABEL: func.func @chunk_reduce
// CHECK: %[[N:.+]] = arith.ceildivui %{{.+}}, %c16
// CHECK: %[[KC:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [%{{.+}}, 2, %[[N]], 16, 8] : tensor<?x2x?x8xf32> into tensor<?x2x?x16x8xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%[[KC]], %{{.+}} : tensor<?x2x?x16x8xf32>, tensor<?x2x?x16x4xf32>)
func.func @chunk_reduce(%k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x4xf32>) -> tensor<?x2x?x8x4xf32> {
  %g = linattn.chunk_reduce %k, %v chunk_size = 16 : tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x8x4xf32>
  return %g : tensor<?x2x?x8x4xf32>
}

// -----

// A static length of whole chunks is viewed as chunks directly: no padded
// copy (a fill and an insert_slice per operand).
// CHECK-LABEL: func.func @chunk_reduce_whole_chunks
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x32x8xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x32x4xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK: %[[KC:.+]] = tensor.expand_shape %[[K]] {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 2, 2, 16, 8] : tensor<1x2x32x8xf32> into tensor<1x2x2x16x8xf32>
// CHECK: %[[VC:.+]] = tensor.expand_shape %[[V]]
// CHECK: linalg.generic {{.*}} ins(%[[KC]], %[[VC]] : tensor<1x2x2x16x8xf32>, tensor<1x2x2x16x4xf32>)
func.func @chunk_reduce_whole_chunks(%k: tensor<1x2x32x8xf32>, %v: tensor<1x2x32x4xf32>) -> tensor<1x2x2x8x4xf32> {
  %g = linattn.chunk_reduce %k, %v chunk_size = 16 : tensor<1x2x32x8xf32>, tensor<1x2x32x4xf32> -> tensor<1x2x2x8x4xf32>
  return %g : tensor<1x2x2x8x4xf32>
}

// -----

// A per-token scale multiplies the values first, so that the chunk sums stay
// a plain multiply-accumulate (a GEMM for ttt-contractions-to-blas).
// CHECK-LABEL: func.func @chunk_reduce_scaled
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<?x2x?x8xf32>, %[[V:[a-z0-9]+]]: tensor<?x2x?x4xf32>, %[[ETA:[a-z0-9]+]]: tensor<?x2x?xf32>
// CHECK: %[[EV:.+]] = linalg.generic {{.*}} ins(%[[V]], %[[ETA]] : tensor<?x2x?x4xf32>, tensor<?x2x?xf32>)
// CHECK-NEXT: ^bb0(%[[X:.+]]: f32, %[[E:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:   %[[P:.+]] = arith.mulf %[[X]], %[[E]] : f32
// CHECK-NEXT:   linalg.yield %[[P]]
// CHECK: %[[VC:.+]] = tensor.expand_shape {{.+}} into tensor<?x2x?x16x4xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[VC]] : tensor<?x2x?x16x8xf32>, tensor<?x2x?x16x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:   %[[AB:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:   %[[SUM:.+]] = arith.addf %[[ACC]], %[[AB]] : f32
// CHECK-NEXT:   linalg.yield %[[SUM]]
func.func @chunk_reduce_scaled(%k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x4xf32>, %eta: tensor<?x2x?xf32>) -> tensor<?x2x?x8x4xf32> {
  %g = linattn.chunk_reduce %k, %v scale(%eta : tensor<?x2x?xf32>) chunk_size = 16 : tensor<?x2x?x8xf32>, tensor<?x2x?x4xf32> -> tensor<?x2x?x8x4xf32>
  return %g : tensor<?x2x?x8x4xf32>
}

// -----

// A decayed scan: log2(N) rounds that combine pairs (a, b) at distance d.
// CHECK-LABEL: func.func @decayed_scan
// CHECK: %[[R:.+]]:3 = scf.while (%[[D:.+]] = %c1, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK:   arith.cmpi ult, %[[D]], %{{.+}} : index
// CHECK: } do {
// CHECK:   arith.muli %{{.+}}, %c2 : index
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 1, 0, 0]
// SEQ-LABEL: func.func @decayed_scan
// SEQ-NOT: scf.while
// SEQ: scf.for %{{.+}} = %c0 to %{{.+}} step %c1 iter_args
func.func @decayed_scan(%g: tensor<?x2x?x8x4xf32>, %a: tensor<?x2x?xf32>, %s0: tensor<2x8x4xf32>) -> tensor<?x2x?x8x4xf32> {
  %s = linattn.scan %g initial(%s0 : tensor<2x8x4xf32>) decay(%a : tensor<?x2x?xf32>) kind = decayed mode = exclusive
      : tensor<?x2x?x8x4xf32> -> tensor<?x2x?x8x4xf32>
  return %s : tensor<?x2x?x8x4xf32>
}

// -----

// Affine scans stay a loop over chunks, with a batched state product.
// CHECK-LABEL: func.func @affine_scan
// CHECK-NOT: scf.while
// CHECK: scf.for
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]
func.func @affine_scan(%g: tensor<1x2x?x8x4xf32>, %t: tensor<1x2x?x8x8xf32>) -> tensor<1x2x?x8x4xf32> {
  %s = linattn.scan %g transition(%t : tensor<1x2x?x8x8xf32>) kind = residual_affine mode = inclusive
      : tensor<1x2x?x8x4xf32> -> tensor<1x2x?x8x4xf32>
  return %s : tensor<1x2x?x8x4xf32>
}

// -----

// Applying per-chunk states: the queries padded to whole chunks and cut into
// them, one batched GEMM per chunk with its state (affine maps only: no
// `t floordiv C`, which IREE's tiling refuses), the padding cut off.
// CHECK-DAG: #[[$Q:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[$S:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4, d5)>
// CHECK-DAG: #[[$O:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-LABEL: func.func @chunk_apply
// CHECK-SAME: %[[QIN:[a-z0-9]+]]: tensor<?x2x?x8xf32>, %[[STATES:[a-z0-9]+]]: tensor<?x2x?x8x4xf32>
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %[[QIN]]
// CHECK: %[[CHUNKS:.+]] = tensor.expand_shape %[[PADDED]] {{\[}}[0], [1], [2, 3], [4]] {{.*}} into tensor<?x2x?x16x8xf32>
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$S]], #[[$O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[CHUNKS]], %[[STATES]]
// CHECK: %[[TOKENS:.+]] = tensor.collapse_shape %[[O]]
// CHECK: tensor.extract_slice %[[TOKENS]]
func.func @chunk_apply(%q: tensor<?x2x?x8xf32>, %s: tensor<?x2x?x8x4xf32>) -> tensor<?x2x?x4xf32> {
  %o = linattn.chunk_apply %q, %s chunk_size = 16 : tensor<?x2x?x8xf32>, tensor<?x2x?x8x4xf32> -> tensor<?x2x?x4xf32>
  return %o : tensor<?x2x?x4xf32>
}

// -----

// Newton-Schulz batched over every chunk state: X X^T, A A and (bA + cA^2) X
// are 6-loop generics over all chunks. A is symmetric, so A A is read as the
// Gram product A A^T (both operands the same tensor, as X X^T), which the
// BLAS runtime computes with SYRK.
// CHECK-DAG: #[[$ROW_I:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>
// CHECK-DAG: #[[$ROW_J:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4, d5)>
// CHECK-LABEL: func.func @newton_schulz
// CHECK: %[[GRAM:.+]] = linalg.generic {indexing_maps = [#[[$ROW_I]], #[[$ROW_J]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[X:.+]], %[[X]] :
// CHECK: linalg.generic {indexing_maps = [#[[$ROW_I]], #[[$ROW_J]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[GRAM]], %[[GRAM]] :
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]
func.func @newton_schulz(%u: tensor<1x2x?x4x8xf32>) -> tensor<1x2x?x4x8xf32> {
  %d = linattn.state_transform %u steps = 1 coeffs = [3.4445, -4.775, 2.0315]
      : tensor<1x2x?x4x8xf32> -> tensor<1x2x?x4x8xf32>
  return %d : tensor<1x2x?x4x8xf32>
}
