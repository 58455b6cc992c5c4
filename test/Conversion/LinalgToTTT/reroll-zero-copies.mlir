// RUN: ttt-opt %s --ttt-reroll-chunks=explain -verify-diagnostics | FileCheck %s

// Four momenta start from zero, each its own copy of one scalar broadcast
// (as exporters write `zeros_like` per weight; the copies differ only in a
// discardable attribute). Step 0 reads the copies where the general step
// reads the momenta: the copies are one initial value, not 4^4 choices to
// try, and the first step joins the loop (update, then apply).
// CHECK-LABEL: func.func @momenta_from_copies_of_zero
// CHECK-SAME: (%[[Q:.*]]: tensor<12x4xf32>, %[[K:.*]]: tensor<12x4xf32>, %[[W:.*]]: tensor<4x4xf32>)
// CHECK-COUNT-4: linalg.generic {{.*}} ins(%{{.*}} : tensor<f32>)
// CHECK: ttt.chunk_loop chunk(4) state(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[W]] :
// CHECK-SAME: windows(%{{.*}}, %{{.*}} : tensor<12x4xf32>, tensor<12x4xf32>) along [0, 0]
// CHECK-SAME: outputs along [0]
// CHECK: linalg.matmul
// CHECK: ttt.chunk_yield
#kt = [affine_map<(i, j, t) -> (t, i)>, affine_map<(i, j, t) -> (t, j)>, affine_map<(i, j, t) -> (i, j)>]
func.func @momenta_from_copies_of_zero(%q: tensor<12x4xf32>, %k: tensor<12x4xf32>, %w: tensor<4x4xf32>)
    -> tensor<12x4xf32> {
  %zs = arith.constant dense<0.0> : tensor<f32>
  %decay = arith.constant dense<0.5> : tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e_z0 = tensor.empty() : tensor<4x4xf32>
  %z0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%zs : tensor<f32>) outs(%e_z0 : tensor<4x4xf32>) attrs = {source = 0} {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_z1 = tensor.empty() : tensor<4x4xf32>
  %z1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%zs : tensor<f32>) outs(%e_z1 : tensor<4x4xf32>) attrs = {source = 1} {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_z2 = tensor.empty() : tensor<4x4xf32>
  %z2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%zs : tensor<f32>) outs(%e_z2 : tensor<4x4xf32>) attrs = {source = 2} {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_z3 = tensor.empty() : tensor<4x4xf32>
  %z3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%zs : tensor<f32>) outs(%e_z3 : tensor<4x4xf32>) attrs = {source = 3} {
  ^bb0(%a0: f32, %acc: f32):
    %r = arith.addf %a0, %a0 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %s0 = arith.constant dense<0.25> : tensor<4x4xf32>
  %s1 = arith.constant dense<0.5> : tensor<4x4xf32>
  %s2 = arith.constant dense<0.75> : tensor<4x4xf32>
  %s3 = arith.constant dense<1.0> : tensor<4x4xf32>
  %k0 = tensor.extract_slice %k[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %kk0 = linalg.matmul indexing_maps = #kt ins(%k0, %k0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e_d0_0 = tensor.empty() : tensor<4x4xf32>
  %d0_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%z0, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d0_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g0_0 = tensor.empty() : tensor<4x4xf32>
  %g0_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk0, %s0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g0_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m0_0 = tensor.empty() : tensor<4x4xf32>
  %m0_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d0_0, %g0_0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m0_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d0_1 = tensor.empty() : tensor<4x4xf32>
  %d0_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%z1, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d0_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g0_1 = tensor.empty() : tensor<4x4xf32>
  %g0_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk0, %s1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g0_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m0_1 = tensor.empty() : tensor<4x4xf32>
  %m0_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d0_1, %g0_1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m0_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d0_2 = tensor.empty() : tensor<4x4xf32>
  %d0_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%z2, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d0_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g0_2 = tensor.empty() : tensor<4x4xf32>
  %g0_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk0, %s2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g0_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m0_2 = tensor.empty() : tensor<4x4xf32>
  %m0_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d0_2, %g0_2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m0_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d0_3 = tensor.empty() : tensor<4x4xf32>
  %d0_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%z3, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d0_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g0_3 = tensor.empty() : tensor<4x4xf32>
  %g0_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk0, %s3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g0_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m0_3 = tensor.empty() : tensor<4x4xf32>
  %m0_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d0_3, %g0_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m0_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w0_0 = tensor.empty() : tensor<4x4xf32>
  %w0_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w, %m0_0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w0_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w0_1 = tensor.empty() : tensor<4x4xf32>
  %w0_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w0_0, %m0_1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w0_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w0_2 = tensor.empty() : tensor<4x4xf32>
  %w0_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w0_1, %m0_2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w0_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w0_3 = tensor.empty() : tensor<4x4xf32>
  %w0_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w0_2, %m0_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w0_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %q0 = tensor.extract_slice %q[0, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o0 = linalg.matmul ins(%q0, %w0_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k1 = tensor.extract_slice %k[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %kk1 = linalg.matmul indexing_maps = #kt ins(%k1, %k1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e_d1_0 = tensor.empty() : tensor<4x4xf32>
  %d1_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m0_0, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d1_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g1_0 = tensor.empty() : tensor<4x4xf32>
  %g1_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk1, %s0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g1_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m1_0 = tensor.empty() : tensor<4x4xf32>
  %m1_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d1_0, %g1_0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m1_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d1_1 = tensor.empty() : tensor<4x4xf32>
  %d1_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m0_1, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d1_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g1_1 = tensor.empty() : tensor<4x4xf32>
  %g1_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk1, %s1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g1_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m1_1 = tensor.empty() : tensor<4x4xf32>
  %m1_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d1_1, %g1_1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m1_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d1_2 = tensor.empty() : tensor<4x4xf32>
  %d1_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m0_2, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d1_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g1_2 = tensor.empty() : tensor<4x4xf32>
  %g1_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk1, %s2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g1_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m1_2 = tensor.empty() : tensor<4x4xf32>
  %m1_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d1_2, %g1_2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m1_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d1_3 = tensor.empty() : tensor<4x4xf32>
  %d1_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m0_3, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d1_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g1_3 = tensor.empty() : tensor<4x4xf32>
  %g1_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk1, %s3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g1_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m1_3 = tensor.empty() : tensor<4x4xf32>
  %m1_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d1_3, %g1_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m1_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w1_0 = tensor.empty() : tensor<4x4xf32>
  %w1_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w0_3, %m1_0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w1_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w1_1 = tensor.empty() : tensor<4x4xf32>
  %w1_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w1_0, %m1_1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w1_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w1_2 = tensor.empty() : tensor<4x4xf32>
  %w1_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w1_1, %m1_2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w1_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w1_3 = tensor.empty() : tensor<4x4xf32>
  %w1_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w1_2, %m1_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w1_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %q1 = tensor.extract_slice %q[4, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o1 = linalg.matmul ins(%q1, %w1_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k2 = tensor.extract_slice %k[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %kk2 = linalg.matmul indexing_maps = #kt ins(%k2, %k2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e_d2_0 = tensor.empty() : tensor<4x4xf32>
  %d2_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m1_0, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d2_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g2_0 = tensor.empty() : tensor<4x4xf32>
  %g2_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk2, %s0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g2_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m2_0 = tensor.empty() : tensor<4x4xf32>
  %m2_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d2_0, %g2_0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m2_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d2_1 = tensor.empty() : tensor<4x4xf32>
  %d2_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m1_1, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d2_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g2_1 = tensor.empty() : tensor<4x4xf32>
  %g2_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk2, %s1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g2_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m2_1 = tensor.empty() : tensor<4x4xf32>
  %m2_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d2_1, %g2_1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m2_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d2_2 = tensor.empty() : tensor<4x4xf32>
  %d2_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m1_2, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d2_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g2_2 = tensor.empty() : tensor<4x4xf32>
  %g2_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk2, %s2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g2_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m2_2 = tensor.empty() : tensor<4x4xf32>
  %m2_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d2_2, %g2_2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m2_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_d2_3 = tensor.empty() : tensor<4x4xf32>
  %d2_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m1_3, %decay : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_d2_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_g2_3 = tensor.empty() : tensor<4x4xf32>
  %g2_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%kk2, %s3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_g2_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.mulf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_m2_3 = tensor.empty() : tensor<4x4xf32>
  %m2_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d2_3, %g2_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_m2_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w2_0 = tensor.empty() : tensor<4x4xf32>
  %w2_0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w1_3, %m2_0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w2_0 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w2_1 = tensor.empty() : tensor<4x4xf32>
  %w2_1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w2_0, %m2_1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w2_1 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w2_2 = tensor.empty() : tensor<4x4xf32>
  %w2_2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w2_1, %m2_2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w2_2 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %e_w2_3 = tensor.empty() : tensor<4x4xf32>
  %w2_3 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w2_2, %m2_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e_w2_3 : tensor<4x4xf32>) {
  ^bb0(%a0: f32, %a1: f32, %acc: f32):
    %r = arith.addf %a0, %a1 : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %q2 = tensor.extract_slice %q[8, 0] [4, 4] [1, 1] : tensor<12x4xf32> to tensor<4x4xf32>
  %o2 = linalg.matmul ins(%q2, %w2_3 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.concat dim(0) %o0, %o1, %o2 : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<12x4xf32>
  return %o : tensor<12x4xf32>
}
