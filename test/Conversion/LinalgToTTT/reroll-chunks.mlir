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

// -----

// A batch of run-time size: each window reads the queries' batch
// (`tensor.dim %q, 0`), the keys too, and the outputs are inserted into a
// buffer made with that batch. The keys' windows cut them to that batch once,
// before the loop; the inserts of the run-time batch assemble the outputs.
// CHECK-LABEL: func.func @run_time_batch
// CHECK-SAME: (%[[Q:.*]]: tensor<?x12x4xf32>, %[[K:.*]]: tensor<?x12x4xf32>, %[[W0:.*]]: tensor<4x4xf32>)
// CHECK: %[[B:.*]] = tensor.dim %[[Q]], %{{.*}}
// CHECK-DAG: tensor.extract_slice %[[Q]][0, 0, 0] [%{{.*}}, 12, 4] [1, 1, 1]
// CHECK-DAG: tensor.extract_slice %[[K]][0, 0, 0] [%[[B]], 12, 4] [1, 1, 1]
// CHECK: %[[O:.*]], %{{.*}} = ttt.chunk_loop chunk(4) state(%[[W0]] : tensor<4x4xf32>)
// CHECK-SAME: along [1, 1] invariants({{.*}}) outputs along [1]
// CHECK: ttt.chunk_yield
// CHECK-NOT: linalg.generic
// CHECK: return
#rb_apply = [affine_map<(b, t, i, j) -> (b, t, i)>, affine_map<(b, t, i, j) -> (i, j)>, affine_map<(b, t, i, j) -> (b, t, j)>]
#rb_grad = [affine_map<(b, t, i, j) -> (b, t, i)>, affine_map<(b, t, i, j) -> (b, t, j)>, affine_map<(b, t, i, j) -> (i, j)>]
func.func @run_time_batch(%q: tensor<?x12x4xf32>, %k: tensor<?x12x4xf32>, %w0: tensor<4x4xf32>) -> tensor<?x12x4xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %q, %c0 : tensor<?x12x4xf32>
  %buf = tensor.empty(%b) : tensor<?x12x4xf32>
  %q0 = tensor.extract_slice %q[0, 0, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x12x4xf32> to tensor<?x4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x12x4xf32> to tensor<?x4x4xf32>
  %e0 = tensor.empty(%b) : tensor<?x4x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
  %o0 = linalg.generic {indexing_maps = #rb_apply, iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%q0, %w0 : tensor<?x4x4xf32>, tensor<4x4xf32>) outs(%f0 : tensor<?x4x4xf32>) {
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4x4xf32>
  %ge0 = tensor.empty() : tensor<4x4xf32>
  %gf0 = linalg.fill ins(%zero : f32) outs(%ge0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g0 = linalg.generic {indexing_maps = #rb_grad, iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%k0, %k0 : tensor<?x4x4xf32>, tensor<?x4x4xf32>) outs(%gf0 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %we0 = tensor.empty() : tensor<4x4xf32>
  %w1 = linalg.add ins(%w0, %g0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %buf0 = tensor.insert_slice %o0 into %buf[0, 0, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x4x4xf32> into tensor<?x12x4xf32>
  %q1 = tensor.extract_slice %q[0, 4, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x12x4xf32> to tensor<?x4x4xf32>
  %k1 = tensor.extract_slice %k[0, 4, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x12x4xf32> to tensor<?x4x4xf32>
  %e1 = tensor.empty(%b) : tensor<?x4x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
  %o1 = linalg.generic {indexing_maps = #rb_apply, iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%q1, %w1 : tensor<?x4x4xf32>, tensor<4x4xf32>) outs(%f1 : tensor<?x4x4xf32>) {
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4x4xf32>
  %ge1 = tensor.empty() : tensor<4x4xf32>
  %gf1 = linalg.fill ins(%zero : f32) outs(%ge1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = linalg.generic {indexing_maps = #rb_grad, iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%k1, %k1 : tensor<?x4x4xf32>, tensor<?x4x4xf32>) outs(%gf1 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %we1 = tensor.empty() : tensor<4x4xf32>
  %w2 = linalg.add ins(%w1, %g1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %buf1 = tensor.insert_slice %o1 into %buf0[0, 4, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x4x4xf32> into tensor<?x12x4xf32>
  %q2 = tensor.extract_slice %q[0, 8, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x12x4xf32> to tensor<?x4x4xf32>
  %k2 = tensor.extract_slice %k[0, 8, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x12x4xf32> to tensor<?x4x4xf32>
  %e2 = tensor.empty(%b) : tensor<?x4x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
  %o2 = linalg.generic {indexing_maps = #rb_apply, iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%q2, %w2 : tensor<?x4x4xf32>, tensor<4x4xf32>) outs(%f2 : tensor<?x4x4xf32>) {
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x4x4xf32>
  %ge2 = tensor.empty() : tensor<4x4xf32>
  %gf2 = linalg.fill ins(%zero : f32) outs(%ge2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g2 = linalg.generic {indexing_maps = #rb_grad, iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%k2, %k2 : tensor<?x4x4xf32>, tensor<?x4x4xf32>) outs(%gf2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %x: f32, %acc: f32):
    %p = arith.mulf %a, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %we2 = tensor.empty() : tensor<4x4xf32>
  %w3 = linalg.add ins(%w2, %g2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %buf2 = tensor.insert_slice %o2 into %buf1[0, 8, 0] [%b, 4, 4] [1, 1, 1] : tensor<?x4x4xf32> into tensor<?x12x4xf32>
  return %buf2 : tensor<?x12x4xf32>
}

// -----

// Ten tokens in chunks of 4: the last chunk has 2, and (its update being
// dead) computes only its output. It is the same step on shorter windows, so
// the loop takes it too: its body is typed for any chunk length, the windows
// `?` long and each fresh tensor made at the window's length.
// CHECK-LABEL: func.func @shorter_last_chunk
// CHECK-SAME: (%[[Q:.*]]: tensor<10x4xf32>, %[[K:.*]]: tensor<10x4xf32>, %[[W0:.*]]: tensor<4x4xf32>)
// CHECK: %[[O:.*]], %{{.*}} = ttt.chunk_loop chunk(4) state(%[[W0]] : tensor<4x4xf32>)
// CHECK-SAME: : tensor<10x4xf32>, tensor<10x4xf32>) along [0, 0] outputs along [0] {
// CHECK-NEXT: ^bb0(%[[W:.*]]: tensor<4x4xf32>, %[[QC:.*]]: tensor<?x4xf32>, %[[KC:.*]]: tensor<?x4xf32>):
// CHECK: %[[N:.*]] = tensor.dim %[[QC]], %{{.*}} : tensor<?x4xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK: linalg.matmul ins(%[[QC]], %[[W]] : tensor<?x4xf32>, tensor<4x4xf32>)
// CHECK: ttt.chunk_yield outputs(%{{.*}} : tensor<?x4xf32>) state(%{{.*}} : tensor<4x4xf32>)
// CHECK-NEXT: } -> outputs(tensor<10x4xf32>) state(tensor<4x4xf32>)
// CHECK: %[[C:.*]] = tensor.concat dim(0) %[[O]] : (tensor<10x4xf32>) -> tensor<10x4xf32>
// CHECK: return %[[C]]
func.func @shorter_last_chunk(%q: tensor<10x4xf32>, %k: tensor<10x4xf32>, %w0: tensor<4x4xf32>) -> tensor<10x4xf32> {
  %zero = arith.constant 0.0 : f32
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<10x4xf32> to tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<4x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o0 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<10x4xf32> to tensor<4x4xf32>
  %te0 = tensor.empty() : tensor<4x4xf32>
  %kt0 = linalg.transpose ins(%k0 : tensor<4x4xf32>) outs(%te0 : tensor<4x4xf32>) permutation = [1, 0]
  %ge0 = tensor.empty() : tensor<4x4xf32>
  %gf0 = linalg.fill ins(%zero : f32) outs(%ge0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g0 = linalg.matmul ins(%kt0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%gf0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %we0 = tensor.empty() : tensor<4x4xf32>
  %w1 = linalg.add ins(%w0, %g0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<10x4xf32> to tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o1 = linalg.matmul ins(%q1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<10x4xf32> to tensor<4x4xf32>
  %te1 = tensor.empty() : tensor<4x4xf32>
  %kt1 = linalg.transpose ins(%k1 : tensor<4x4xf32>) outs(%te1 : tensor<4x4xf32>) permutation = [1, 0]
  %ge1 = tensor.empty() : tensor<4x4xf32>
  %gf1 = linalg.fill ins(%zero : f32) outs(%ge1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = linalg.matmul ins(%kt1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%gf1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %we1 = tensor.empty() : tensor<4x4xf32>
  %w2 = linalg.add ins(%w1, %g1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [2, 4] [1, 1] : tensor<10x4xf32> to tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %o2 = linalg.matmul ins(%q2, %w2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<10x4xf32>
  return %y : tensor<10x4xf32>
}

// -----

// The same steps, each op tied to the node it came from by a discardable
// attribute (the ONNX front end's ttt.onnx_op): the tags differ from step to
// step and do not keep the shorter last step out of the loop.
// CHECK-LABEL: func.func @shorter_last_chunk_tagged
// CHECK: %[[O:.*]], %{{.*}} = ttt.chunk_loop chunk(4)
// CHECK-SAME: : tensor<10x4xf32>, tensor<10x4xf32>) along [0, 0] outputs along [0] {
// CHECK: } -> outputs(tensor<10x4xf32>) state(tensor<4x4xf32>)
// CHECK: %[[C:.*]] = tensor.concat dim(0) %[[O]] : (tensor<10x4xf32>) -> tensor<10x4xf32>
// CHECK: return %[[C]]
func.func @shorter_last_chunk_tagged(%q: tensor<10x4xf32>, %k: tensor<10x4xf32>, %w0: tensor<4x4xf32>) -> tensor<10x4xf32> {
  %zero = arith.constant 0.0 : f32
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] {ttt.onnx_op = 0 : i64} : tensor<10x4xf32> to tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<4x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x4xf32>) {ttt.onnx_op = 2 : i64} -> tensor<4x4xf32>
  %o0 = linalg.matmul ins(%q0, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f0 : tensor<4x4xf32>) {ttt.onnx_op = 3 : i64} -> tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] {ttt.onnx_op = 4 : i64} : tensor<10x4xf32> to tensor<4x4xf32>
  %te0 = tensor.empty() : tensor<4x4xf32>
  %kt0 = linalg.transpose ins(%k0 : tensor<4x4xf32>) outs(%te0 : tensor<4x4xf32>) permutation = [1, 0] {ttt.onnx_op = 6 : i64}
  %ge0 = tensor.empty() : tensor<4x4xf32>
  %gf0 = linalg.fill ins(%zero : f32) outs(%ge0 : tensor<4x4xf32>) {ttt.onnx_op = 8 : i64} -> tensor<4x4xf32>
  %g0 = linalg.matmul ins(%kt0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%gf0 : tensor<4x4xf32>) {ttt.onnx_op = 9 : i64} -> tensor<4x4xf32>
  %we0 = tensor.empty() : tensor<4x4xf32>
  %w1 = linalg.add ins(%w0, %g0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we0 : tensor<4x4xf32>) {ttt.onnx_op = 11 : i64} -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] {ttt.onnx_op = 12 : i64} : tensor<10x4xf32> to tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x4xf32>) {ttt.onnx_op = 14 : i64} -> tensor<4x4xf32>
  %o1 = linalg.matmul ins(%q1, %w1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f1 : tensor<4x4xf32>) {ttt.onnx_op = 15 : i64} -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] {ttt.onnx_op = 16 : i64} : tensor<10x4xf32> to tensor<4x4xf32>
  %te1 = tensor.empty() : tensor<4x4xf32>
  %kt1 = linalg.transpose ins(%k1 : tensor<4x4xf32>) outs(%te1 : tensor<4x4xf32>) permutation = [1, 0] {ttt.onnx_op = 18 : i64}
  %ge1 = tensor.empty() : tensor<4x4xf32>
  %gf1 = linalg.fill ins(%zero : f32) outs(%ge1 : tensor<4x4xf32>) {ttt.onnx_op = 20 : i64} -> tensor<4x4xf32>
  %g1 = linalg.matmul ins(%kt1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%gf1 : tensor<4x4xf32>) {ttt.onnx_op = 21 : i64} -> tensor<4x4xf32>
  %we1 = tensor.empty() : tensor<4x4xf32>
  %w2 = linalg.add ins(%w1, %g1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we1 : tensor<4x4xf32>) {ttt.onnx_op = 23 : i64} -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [2, 4] [1, 1] {ttt.onnx_op = 24 : i64} : tensor<10x4xf32> to tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) {ttt.onnx_op = 26 : i64} -> tensor<2x4xf32>
  %o2 = linalg.matmul ins(%q2, %w2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%f2 : tensor<2x4xf32>) {ttt.onnx_op = 27 : i64} -> tensor<2x4xf32>
  %y = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<2x4xf32>) -> tensor<10x4xf32>
  return %y : tensor<10x4xf32>
}

// -----

// Steps whose results nothing after them reads: a loop would replace none of
// them, so none is made (a loop made anyway stayed unread, and each round made
// another).
// CHECK-LABEL: func.func @unread_state_chain
// CHECK-NOT: ttt.chunk_loop
// CHECK: return
// expected-remark @below {{ttt-reroll-chunks: no chunk loop rerolled: no op after the steps reads what they compute}}
func.func @unread_state_chain(%q: tensor<12x4xf32>, %k: tensor<12x4xf32>, %w0: tensor<4x4xf32>) -> tensor<12x4xf32> {
  %zero = arith.constant 0.0 : f32
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %te0 = tensor.empty() : tensor<4x4xf32>
  %kt0 = linalg.transpose ins(%k0 : tensor<4x4xf32>) outs(%te0 : tensor<4x4xf32>) permutation = [1, 0]
  %ge0 = tensor.empty() : tensor<4x4xf32>
  %gf0 = linalg.fill ins(%zero : f32) outs(%ge0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g0 = linalg.matmul ins(%kt0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%gf0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %we0 = tensor.empty() : tensor<4x4xf32>
  %w1 = linalg.add ins(%w0, %g0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %te1 = tensor.empty() : tensor<4x4xf32>
  %kt1 = linalg.transpose ins(%k1 : tensor<4x4xf32>) outs(%te1 : tensor<4x4xf32>) permutation = [1, 0]
  %ge1 = tensor.empty() : tensor<4x4xf32>
  %gf1 = linalg.fill ins(%zero : f32) outs(%ge1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = linalg.matmul ins(%kt1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%gf1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %we1 = tensor.empty() : tensor<4x4xf32>
  %w2 = linalg.add ins(%w1, %g1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k2 = tensor.extract_slice %k[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %te2 = tensor.empty() : tensor<4x4xf32>
  %kt2 = linalg.transpose ins(%k2 : tensor<4x4xf32>) outs(%te2 : tensor<4x4xf32>) permutation = [1, 0]
  %ge2 = tensor.empty() : tensor<4x4xf32>
  %gf2 = linalg.fill ins(%zero : f32) outs(%ge2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g2 = linalg.matmul ins(%kt2, %k2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%gf2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %we2 = tensor.empty() : tensor<4x4xf32>
  %w3 = linalg.add ins(%w2, %g2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%we2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %q : tensor<12x4xf32>
}
