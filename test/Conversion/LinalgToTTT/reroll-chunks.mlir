// Unrolled chunk steps become one ttt.chunk_loop: windows cut at 0, C, 2C,
// state found by dataflow, steps proven equal op by op (or, where their ops
// differ, as sums of products); the first step joins
// the loop when it is the general step from a state it can be given.
// test_reroll.py runs torch-mlir's unrolled programs through it.
// RUN: ttt-opt %s --ttt-reroll-chunks=explain --split-input-file -verify-diagnostics | FileCheck %s

// Three chunks of 4 of a linear fast weight, apply then update, outputs
// concatenated: one loop over all 12 tokens from the argument weight.
// CHECK-LABEL: func.func @three_chunks
// CHECK-SAME: (%[[Q:.*]]: tensor<12x4xf32>, %[[K:.*]]: tensor<12x4xf32>, %[[W0:.*]]: tensor<4x4xf32>)
// CHECK-DAG: %[[QS:.*]] = tensor.extract_slice %[[Q]][0, 0] [12, 4] [1, 1]
// CHECK-DAG: %[[KS:.*]] = tensor.extract_slice %[[K]][0, 0] [12, 4] [1, 1]
// CHECK: %[[O:.*]], %{{.*}} = ttt.chunk_loop chunk(4) state(%[[W0]] : tensor<4x4xf32>)
// CHECK-SAME: along [0, 0] outputs along [0]
// CHECK: linalg.matmul
// CHECK: ttt.chunk_yield
// CHECK: %[[C:.*]] = tensor.concat dim(0) %[[O]] : (tensor<12x4xf32>) -> tensor<12x4xf32>
// CHECK: return %[[C]]
#kt = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>]
func.func @three_chunks(%q: tensor<12x4xf32>, %k: tensor<12x4xf32>, %w0: tensor<4x4xf32>)
    -> tensor<12x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o0 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w1 = linalg.matmul indexing_maps = #kt ins(%k0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o1 = linalg.matmul ins(%q1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w2 = linalg.matmul indexing_maps = #kt ins(%k1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o2 = linalg.matmul ins(%q2, %w2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k2 = tensor.extract_slice %k[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w3 = linalg.matmul indexing_maps = #kt ins(%k2, %k2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}

// -----

// The third step reads the first step's state, not the second's: no one
// recurrence.
// expected-remark @+1 {{no chunk loop rerolled: step 2 reads a value of step 0, not only its own and the step before's}}
func.func @skips_a_step(%q: tensor<12x4xf32>, %w0: tensor<4x4xf32>) -> tensor<12x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w1 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w2 = linalg.matmul ins(%q1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w3 = linalg.matmul ins(%q2, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.concat dim(0) %w1, %w2, %w3 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}

// -----

// Slices of overlapping windows are no chunking.
// expected-remark @+1 {{no chunk loop rerolled: no tensor is cut into three or more consecutive windows}}
func.func @overlapping(%q: tensor<12x4xf32>) -> tensor<12x4xf32> {
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[2, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o = tensor.concat dim(0) %q0, %q1, %q2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}

// -----

// One step negates its queries twice, another scales its keys by one: no-ops
// that do not make the steps differ (they are removed before the steps are
// compared), so the three chunks are still one loop.
// CHECK-LABEL: func.func @no_ops_in_some_steps
// CHECK: ttt.chunk_loop chunk(4)
// CHECK-NOT: arith.negf
// CHECK: ttt.chunk_yield
#kt = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>]
#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
func.func @no_ops_in_some_steps(%q: tensor<12x4xf32>, %k: tensor<12x4xf32>, %w0: tensor<4x4xf32>)
    -> tensor<12x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant dense<1.0> : tensor<f32>
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o0 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w1 = linalg.matmul indexing_maps = #kt ins(%k0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %n1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q1 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<4x4xf32>
  %nn1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%n1 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %neg = arith.negf %in : f32
    linalg.yield %neg : f32
  } -> tensor<4x4xf32>
  %o1 = linalg.matmul ins(%nn1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w2 = linalg.matmul indexing_maps = #kt ins(%k1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o2 = linalg.matmul ins(%q2, %w2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k2 = tensor.extract_slice %k[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%k2, %one : tensor<4x4xf32>, tensor<f32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %m = arith.mulf %in, %c : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %w3 = linalg.matmul indexing_maps = #kt ins(%s2, %s2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}

// -----

// The third step spells its product as (w^T q^T)^T: its ops differ from the
// second's, but read as sums of products its output and its next state are
// the second step's, with the state and windows one chunk on. The three
// chunks are one loop, its body the second step's ops.
// CHECK-LABEL: func.func @respelled_product
// CHECK: %[[O:.*]], %{{.*}} = ttt.chunk_loop chunk(4) state(%{{.*}} : tensor<4x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: ttt.chunk_yield
// CHECK: tensor.concat dim(0) %[[O]] : (tensor<12x4xf32>) -> tensor<12x4xf32>
#kt2 = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>]
func.func @respelled_product(%q: tensor<12x4xf32>, %k: tensor<12x4xf32>, %w0: tensor<4x4xf32>)
    -> tensor<12x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o0 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w1 = linalg.matmul indexing_maps = #kt2 ins(%k0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o1 = linalg.matmul ins(%q1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w2 = linalg.matmul indexing_maps = #kt2 ins(%k1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %et1 = tensor.empty() : tensor<4x4xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<4x4xf32>) outs(%et1 : tensor<4x4xf32>) permutation = [1, 0]
  %et2 = tensor.empty() : tensor<4x4xf32>
  %q2t = linalg.transpose ins(%q2 : tensor<4x4xf32>) outs(%et2 : tensor<4x4xf32>) permutation = [1, 0]
  %p2 = linalg.matmul ins(%w2t, %q2t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %et3 = tensor.empty() : tensor<4x4xf32>
  %o2 = linalg.transpose ins(%p2 : tensor<4x4xf32>) outs(%et3 : tensor<4x4xf32>) permutation = [1, 0]
  %k2 = tensor.extract_slice %k[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w3 = linalg.matmul indexing_maps = #kt2 ins(%k2, %k2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}

// -----

// The third step's output is twice the second's: no spelling of the same
// sum of products, so the steps differ.
// expected-remark @+1 {{no chunk loop rerolled: its second and third steps differ: 2 and 3 ops}}
func.func @different_product(%q: tensor<12x4xf32>, %k: tensor<12x4xf32>, %w0: tensor<4x4xf32>)
    -> tensor<12x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o0 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w1 = linalg.matmul indexing_maps = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>] ins(%k0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o1 = linalg.matmul ins(%q1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w2 = linalg.matmul indexing_maps = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>] ins(%k1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %p2 = linalg.matmul ins(%q2, %w2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o2 = linalg.add ins(%p2, %p2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k2 = tensor.extract_slice %k[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %w3 = linalg.matmul indexing_maps = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>] ins(%k2, %k2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}

// -----

// A bias state that starts at zero: the exporter folded step 0's `+ b` away
// (x + 0 is x) but kept `0 - sum k`, and the output is exp(q W + b), no sum
// of products, so step 0 is compared with the general step op by op: from
// the zero constant, the terms that read the bias vanish, and the loop
// starts at chunk 0 from the weight argument and the zeros.
// CHECK-LABEL: func.func @zero_bias_folded_in_step_0
// CHECK-SAME: (%[[Q:.*]]: tensor<12x4xf32>, %[[K:.*]]: tensor<12x4xf32>, %[[W0:.*]]: tensor<4x4xf32>)
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<1x4xf32>
// CHECK: ttt.chunk_loop chunk(4) state(%[[W0]], %[[Z]] : tensor<4x4xf32>, tensor<1x4xf32>)
// CHECK: math.exp
// CHECK-NOT: tensor.concat dim(0) %{{.*}}, %{{.*}}
// CHECK: return
#kt2 = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>]
#id2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (0, j)>
func.func @zero_bias_folded_in_step_0(%q: tensor<12x4xf32>, %k: tensor<12x4xf32>, %w0: tensor<4x4xf32>)
    -> tensor<12x4xf32> {
  %zero = arith.constant 0.0 : f32
  %b0 = arith.constant dense<0.0> : tensor<1x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %er = tensor.empty() : tensor<1x4xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4xf32>) -> tensor<1x4xf32>
  // Step 0: o = q W (the zero bias folded), b' = 0 - sum k, W' = W + k^T k.
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %p0 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p0 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %s0 = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["reduction", "parallel"]} ins(%k0 : tensor<4x4xf32>) outs(%fr : tensor<1x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %b1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b0, %s0 : tensor<1x4xf32>, tensor<1x4xf32>) outs(%er : tensor<1x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.subf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %w1 = linalg.matmul indexing_maps = #kt2 ins(%k0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  // Steps 1 and 2: o = q W + b.
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %p1 = linalg.matmul ins(%q1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p1, %b1 : tensor<4x4xf32>, tensor<1x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a1 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %s1 = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["reduction", "parallel"]} ins(%k1 : tensor<4x4xf32>) outs(%fr : tensor<1x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %b2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b1, %s1 : tensor<1x4xf32>, tensor<1x4xf32>) outs(%er : tensor<1x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.subf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %w2 = linalg.matmul indexing_maps = #kt2 ins(%k1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %p2 = linalg.matmul ins(%q2, %w2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %a2 = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p2, %b2 : tensor<4x4xf32>, tensor<1x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %o2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a2 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.exp %x : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %k2 = tensor.extract_slice %k[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %s2 = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["reduction", "parallel"]} ins(%k2 : tensor<4x4xf32>) outs(%fr : tensor<1x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %b3 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b2, %s2 : tensor<1x4xf32>, tensor<1x4xf32>) outs(%er : tensor<1x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.subf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %w3 = linalg.matmul indexing_maps = #kt2 ins(%k2, %k2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%w2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}
