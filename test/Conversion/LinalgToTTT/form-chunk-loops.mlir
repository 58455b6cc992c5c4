// scf.for loops over chunks, spelled as people write them, become
// ttt.chunk_loop; loops whose windows are not proven to tile their
// sequences stay, with a remark saying why.
// RUN: ttt-opt %s --ttt-form-chunk-loops=explain --split-input-file -verify-diagnostics | FileCheck %s

// Counter times C, a static length that C divides, a weight from outside
// (an invariant) and a constant (cloned into the body).
// CHECK-LABEL: func.func @counter_times_chunk
// CHECK-SAME: (%[[X:.*]]: tensor<2x64x8xf32>, %[[WQ:.*]]: tensor<8x8xf32>, %[[S0:.*]]: tensor<2x8x8xf32>)
// CHECK-NOT: scf.for
// CHECK: %[[O:.*]], %[[S:.*]] = ttt.chunk_loop chunk(16) state(%[[S0]] : tensor<2x8x8xf32>)
// CHECK-SAME: windows(%[[X]] : tensor<2x64x8xf32>) along [1]
// CHECK-SAME: invariants(%[[WQ]] : tensor<8x8xf32>) outputs along [1] {
// CHECK-NEXT: ^bb0(%[[ST:.*]]: tensor<2x8x8xf32>, %[[XC:.*]]: tensor<2x16x8xf32>, %[[W:.*]]: tensor<8x8xf32>):
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[XC]], %[[W]] :
// CHECK: %[[OC:.*]] = linalg.batch_matmul ins(%[[Q]], %[[ST]] :
// CHECK: %[[ST1:.*]] = linalg.add ins(%[[ST]], %[[ST]] :
// CHECK: ttt.chunk_yield outputs(%[[OC]] : tensor<2x16x8xf32>) state(%[[ST1]] : tensor<2x8x8xf32>)
// CHECK: return %[[O]], %[[S]]
#bq = affine_map<(b, t, i, j) -> (b, t, i)>
#wq = affine_map<(b, t, i, j) -> (i, j)>
#oq = affine_map<(b, t, i, j) -> (b, t, j)>
func.func @counter_times_chunk(%x: tensor<2x64x8xf32>, %wq: tensor<8x8xf32>,
    %s0: tensor<2x8x8xf32>) -> (tensor<2x64x8xf32>, tensor<2x8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %buf = tensor.empty() : tensor<2x64x8xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %o = %buf)
      -> (tensor<2x8x8xf32>, tensor<2x64x8xf32>) {
    %off = arith.muli %i, %c16 : index
    %xc = tensor.extract_slice %x[0, %off, 0] [2, 16, 8] [1, 1, 1]
        : tensor<2x64x8xf32> to tensor<2x16x8xf32>
    %e = tensor.empty() : tensor<2x16x8xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
    %q = linalg.generic {indexing_maps = [#bq, #wq, #oq],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%xc, %wq : tensor<2x16x8xf32>, tensor<8x8xf32>) outs(%f : tensor<2x16x8xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %sum = arith.addf %acc, %p : f32
      linalg.yield %sum : f32
    } -> tensor<2x16x8xf32>
    %oc = linalg.batch_matmul ins(%q, %s : tensor<2x16x8xf32>, tensor<2x8x8xf32>)
        outs(%f : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
    %e2 = tensor.empty() : tensor<2x8x8xf32>
    %s1 = linalg.add ins(%s, %s : tensor<2x8x8xf32>, tensor<2x8x8xf32>)
        outs(%e2 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %o1 = tensor.insert_slice %oc into %o[0, %off, 0] [2, 16, 8] [1, 1, 1]
        : tensor<2x16x8xf32> into tensor<2x64x8xf32>
    scf.yield %s1, %o1 : tensor<2x8x8xf32>, tensor<2x64x8xf32>
  }
  return %r#1, %r#0 : tensor<2x64x8xf32>, tensor<2x8x8xf32>
}

// -----

// A step of C up to a run-time length, the last chunk cut by affine.min;
// the body reads the chunk's length as the size of its window.
// CHECK-LABEL: func.func @step_of_chunk_to_runtime_length
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[S0:.*]]: tensor<4x4xf32>)
// CHECK-NOT: scf.for
// CHECK: ttt.chunk_loop chunk(8) state(%[[S0]] : tensor<4x4xf32>) windows(%[[X]] : tensor<?x4xf32>) along [0] outputs along [0] {
// CHECK-NEXT: ^bb0(%[[ST:.*]]: tensor<4x4xf32>, %[[XC:.*]]: tensor<?x4xf32>):
// CHECK: %[[N:.*]] = tensor.dim %[[XC]], %{{.*}} : tensor<?x4xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
#min = affine_map<(i)[t] -> (8, t - i)>
func.func @step_of_chunk_to_runtime_length(%x: tensor<?x4xf32>, %s0: tensor<4x4xf32>)
    -> (tensor<?x4xf32>, tensor<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %t = tensor.dim %x, %c0 : tensor<?x4xf32>
  %buf = tensor.empty(%t) : tensor<?x4xf32>
  %r:2 = scf.for %i = %c0 to %t step %c8 iter_args(%s = %s0, %o = %buf)
      -> (tensor<4x4xf32>, tensor<?x4xf32>) {
    %n = affine.min #min(%i)[%t]
    %xc = tensor.extract_slice %x[%i, 0] [%n, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
    %e = tensor.empty(%n) : tensor<?x4xf32>
    %oc = linalg.matmul ins(%xc, %s : tensor<?x4xf32>, tensor<4x4xf32>)
        outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
    %s1 = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%xc, %xc : tensor<?x4xf32>, tensor<?x4xf32>)
        outs(%s : tensor<4x4xf32>) -> tensor<4x4xf32>
    %o1 = tensor.insert_slice %oc into %o[%i, 0] [%n, 4] [1, 1]
        : tensor<?x4xf32> into tensor<?x4xf32>
    scf.yield %s1, %o1 : tensor<4x4xf32>, tensor<?x4xf32>
  }
  return %r#1, %r#0 : tensor<?x4xf32>, tensor<4x4xf32>
}

// -----

// An offset spelled by affine.apply, feature-major windows (time last).
// CHECK-LABEL: func.func @affine_offset_time_last
// CHECK: ttt.chunk_loop chunk(4) state(%{{.*}} : tensor<3x3xf32>) windows(%{{.*}} : tensor<3x12xf32>) along [1] outputs along [1]
func.func @affine_offset_time_last(%x: tensor<3x12xf32>, %s0: tensor<3x3xf32>)
    -> tensor<3x12xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %buf = tensor.empty() : tensor<3x12xf32>
  %r:2 = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %s0, %o = %buf)
      -> (tensor<3x3xf32>, tensor<3x12xf32>) {
    %off = affine.apply affine_map<(d0) -> (d0 * 4)>(%i)
    %xc = tensor.extract_slice %x[0, %off] [3, 4] [1, 1] : tensor<3x12xf32> to tensor<3x4xf32>
    %e = tensor.empty() : tensor<3x4xf32>
    %oc = linalg.matmul ins(%s, %xc : tensor<3x3xf32>, tensor<3x4xf32>)
        outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
    %o1 = tensor.insert_slice %oc into %o[0, %off] [3, 4] [1, 1]
        : tensor<3x4xf32> into tensor<3x12xf32>
    scf.yield %s, %o1 : tensor<3x3xf32>, tensor<3x12xf32>
  }
  return %r#1 : tensor<3x12xf32>
}

// -----

// Three windows of 16 over 64 tokens leave the last 16 unread: not a chunk
// loop of these sequences.
func.func @windows_do_not_tile(%x: tensor<64x4xf32>, %s0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  // expected-remark @+1 {{not a loop over chunks: its 3 windows of 16 tokens do not tile the 64 tokens of its sequences}}
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%s = %s0) -> (tensor<4x4xf32>) {
    %off = arith.muli %i, %c16 : index
    %xc = tensor.extract_slice %x[%off, 0] [16, 4] [1, 1] : tensor<64x4xf32> to tensor<16x4xf32>
    %s1 = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%xc, %xc : tensor<16x4xf32>, tensor<16x4xf32>)
        outs(%s : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %s1 : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// A body that reads its position (a rotary phase, say) is not one step
// repeated: the chunk loop's body sees no index.
func.func @body_reads_the_index(%x: tensor<8x4xf32>, %s0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  // expected-remark @+1 {{not a loop over chunks: its body reads the chunk index}}
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %s0) -> (tensor<4x4xf32>) {
    %off = arith.muli %i, %c4 : index
    %xc = tensor.extract_slice %x[%off, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
    %s1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%xc : tensor<4x4xf32>) outs(%s : tensor<4x4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %ii = arith.index_cast %i : index to i32
      %fi = arith.sitofp %ii : i32 to f32
      %p = arith.mulf %a, %fi : f32
      %sum = arith.addf %b, %p : f32
      linalg.yield %sum : f32
    } -> tensor<4x4xf32>
    scf.yield %s1 : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// Control flow in the body is outside the canonical op set.
func.func @control_flow_in_body(%x: tensor<8x4xf32>, %s0: tensor<4x4xf32>, %flag: i1) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  // expected-remark @+1 {{not a loop over chunks: 'scf.if' in its body is not in ttt.chunk_loop's op set}}
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %s0) -> (tensor<4x4xf32>) {
    %off = arith.muli %i, %c4 : index
    %xc = tensor.extract_slice %x[%off, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
    %s1 = scf.if %flag -> tensor<4x4xf32> {
      scf.yield %xc : tensor<4x4xf32>
    } else {
      scf.yield %s : tensor<4x4xf32>
    }
    scf.yield %s1 : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// Windows that move by different amounts are not one chunking.
func.func @two_strides(%x: tensor<8x4xf32>, %y: tensor<16x4xf32>, %s0: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  // expected-remark @+1 {{not a loop over chunks: windows move by 4 and by 8 tokens}}
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%s = %s0) -> (tensor<4x4xf32>) {
    %off = arith.muli %i, %c4 : index
    %off2 = arith.muli %i, %c8 : index
    %xc = tensor.extract_slice %x[%off, 0] [4, 4] [1, 1] : tensor<8x4xf32> to tensor<4x4xf32>
    %yc = tensor.extract_slice %y[%off2, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
    %s1 = linalg.matmul
        indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                         affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%xc, %xc : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%s : tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %s1 : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// Keys of a run-time batch read over the queries' batch (`tensor.dim %q, 0`),
// the output buffer made with that batch: the keys are cut to it once, before
// the loop, and the chunk loop reads the cut as its sequence.
// CHECK-LABEL: func.func @keys_cut_to_the_queries_batch
// CHECK-SAME: (%[[Q:.*]]: tensor<?x16x4xf32>, %[[K:.*]]: tensor<?x16x4xf32>, %[[S0:.*]]: tensor<4x4xf32>)
// CHECK: %[[B:.*]] = tensor.dim %[[Q]], %{{.*}}
// CHECK: %[[KB:.*]] = tensor.extract_slice %[[K]][0, 0, 0] [%[[B]], 16, 4] [1, 1, 1]
// CHECK-NOT: scf.for
// CHECK: ttt.chunk_loop chunk(8) state(%[[S0]] : tensor<4x4xf32>) windows(%[[Q]], %[[KB]] : tensor<?x16x4xf32>, tensor<?x16x4xf32>) along [1, 1]
#bsum = affine_map<(b, t, i, j) -> (b, t, i)>
#bw = affine_map<(b, t, i, j) -> (i, j)>
#bo = affine_map<(b, t, i, j) -> (b, t, j)>
func.func @keys_cut_to_the_queries_batch(%q: tensor<?x16x4xf32>, %k: tensor<?x16x4xf32>,
    %s0: tensor<4x4xf32>) -> tensor<?x16x4xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %q, %c0 : tensor<?x16x4xf32>
  %buf = tensor.empty(%b) : tensor<?x16x4xf32>
  %r:2 = scf.for %i = %c0 to %c16 step %c8 iter_args(%s = %s0, %o = %buf)
      -> (tensor<4x4xf32>, tensor<?x16x4xf32>) {
    %qc = tensor.extract_slice %q[0, %i, 0] [%b, 8, 4] [1, 1, 1]
        : tensor<?x16x4xf32> to tensor<?x8x4xf32>
    %kc = tensor.extract_slice %k[0, %i, 0] [%b, 8, 4] [1, 1, 1]
        : tensor<?x16x4xf32> to tensor<?x8x4xf32>
    %e = tensor.empty(%b) : tensor<?x8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x4xf32>) -> tensor<?x8x4xf32>
    %oc = linalg.generic {indexing_maps = [#bsum, #bw, #bo],
        iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%qc, %s : tensor<?x8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<?x8x4xf32>) {
    ^bb0(%a: f32, %w: f32, %acc: f32):
      %p = arith.mulf %a, %w : f32
      %sum = arith.addf %acc, %p : f32
      linalg.yield %sum : f32
    } -> tensor<?x8x4xf32>
    %e2 = tensor.empty() : tensor<4x4xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [affine_map<(b, t, i, j) -> (b, t, i)>,
                                          affine_map<(b, t, i, j) -> (b, t, j)>,
                                          affine_map<(b, t, i, j) -> (i, j)>],
        iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
        ins(%kc, %kc : tensor<?x8x4xf32>, tensor<?x8x4xf32>) outs(%f2 : tensor<4x4xf32>) {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %sum = arith.addf %acc, %p : f32
      linalg.yield %sum : f32
    } -> tensor<4x4xf32>
    %e3 = tensor.empty() : tensor<4x4xf32>
    %s1 = linalg.add ins(%s, %g : tensor<4x4xf32>, tensor<4x4xf32>)
        outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %o1 = tensor.insert_slice %oc into %o[0, %i, 0] [%b, 8, 4] [1, 1, 1]
        : tensor<?x8x4xf32> into tensor<?x16x4xf32>
    scf.yield %s1, %o1 : tensor<4x4xf32>, tensor<?x16x4xf32>
  }
  return %r#1 : tensor<?x16x4xf32>
}
