// ViT^3's depth-wise convolution kernel read off a ttt.chunk_loop: the
// output from the convolution's indexing maps (the queries, zero-padded by
// half the kernel, read at output plus kernel position), the kernel's
// gradient from nine per-position sums of the keys shifted by that position
// (windows of one zero-padded key map) times the values, stacked in the
// kernel's order and clipped per channel, `G / (|G|_F + 1)`, which the
// update subtracts. test_corpus.py runs the raised ViT^3 exports against
// PyTorch.
// RUN: ttt-opt %s --ttt-raise-chunk-loops=explain --split-input-file -verify-diagnostics | FileCheck %s

// One image of two channels, a 3x3 kernel per channel.
// CHECK-LABEL: func.func @vit3_dwconv
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x4x4xf32>, %[[K:.*]]: tensor<1x2x4x4xf32>, %[[V:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x1x3x3xf32>)
// CHECK-NOT: ttt.chunk_loop
// CHECK: %[[WF:.*]] = tensor.collapse_shape %[[W]]
// CHECK: %[[W4:.*]] = tensor.expand_shape %[[WF]] {{.*}} into tensor<1x2x3x3xf32>
// CHECK: %[[O:.*]] = ttt.dwconv_layer %[[Q]], %[[K]], %[[V]], %[[W4]]
// CHECK-SAME: loss = #ttt.loss<kind = dot> update = #ttt.update<sign = ascent, clip = frobenius>
// CHECK: return %[[O]]
func.func @vit3_dwconv(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %e0 = tensor.empty() : tensor<1x2x6x6xf32>
  %z1 = arith.constant 0.0 : f32
  %f2 = linalg.fill ins(%z1 : f32) outs(%e0 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %kpad = tensor.insert_slice %k into %f2[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  %e3 = tensor.empty() : tensor<1x2x6x6xf32>
  %z4 = arith.constant 0.0 : f32
  %f5 = linalg.fill ins(%z4 : f32) outs(%e3 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %qpad = tensor.insert_slice %q into %f5[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  %s0 = tensor.extract_slice %kpad[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s1 = tensor.extract_slice %kpad[0, 0, 0, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s2 = tensor.extract_slice %kpad[0, 0, 0, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s3 = tensor.extract_slice %kpad[0, 0, 1, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s4 = tensor.extract_slice %kpad[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s5 = tensor.extract_slice %kpad[0, 0, 1, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s6 = tensor.extract_slice %kpad[0, 0, 2, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s7 = tensor.extract_slice %kpad[0, 0, 2, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s8 = tensor.extract_slice %kpad[0, 0, 2, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  // expected-remark @below {{a depth-wise convolution kernel (3x3, dot loss, gradients clipped per channel, one chunk)}}
  %o, %f = ttt.chunk_loop chunk(0) state(%w : tensor<2x1x3x3xf32>)
      windows(%s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7, %s8, %v, %qpad : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x6x6xf32>) along [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
      outputs along [2] {
  ^bb0(%sw: tensor<2x1x3x3xf32>, %c0: tensor<1x2x4x4xf32>, %c1: tensor<1x2x4x4xf32>, %c2: tensor<1x2x4x4xf32>, %c3: tensor<1x2x4x4xf32>, %c4: tensor<1x2x4x4xf32>, %c5: tensor<1x2x4x4xf32>, %c6: tensor<1x2x4x4xf32>, %c7: tensor<1x2x4x4xf32>, %c8: tensor<1x2x4x4xf32>, %cv: tensor<1x2x4x4xf32>, %cq: tensor<1x2x6x6xf32>):
    %e6 = tensor.empty() : tensor<1x2x4x4xf32>
    %g7 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c0, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e6 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e8 = tensor.empty() : tensor<1x2xf32>
    %z9 = arith.constant 0.0 : f32
    %f10 = linalg.fill ins(%z9 : f32) outs(%e8 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g11 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g7 : tensor<1x2x4x4xf32>) outs(%f10 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x12 = tensor.expand_shape %g11 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e13 = tensor.empty() : tensor<1x2x4x4xf32>
    %g14 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e13 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e15 = tensor.empty() : tensor<1x2xf32>
    %z16 = arith.constant 0.0 : f32
    %f17 = linalg.fill ins(%z16 : f32) outs(%e15 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g18 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g14 : tensor<1x2x4x4xf32>) outs(%f17 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x19 = tensor.expand_shape %g18 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e20 = tensor.empty() : tensor<1x2x4x4xf32>
    %g21 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e20 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e22 = tensor.empty() : tensor<1x2xf32>
    %z23 = arith.constant 0.0 : f32
    %f24 = linalg.fill ins(%z23 : f32) outs(%e22 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g25 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g21 : tensor<1x2x4x4xf32>) outs(%f24 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x26 = tensor.expand_shape %g25 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e27 = tensor.empty() : tensor<1x2x4x4xf32>
    %g28 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c3, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e27 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e29 = tensor.empty() : tensor<1x2xf32>
    %z30 = arith.constant 0.0 : f32
    %f31 = linalg.fill ins(%z30 : f32) outs(%e29 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g32 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g28 : tensor<1x2x4x4xf32>) outs(%f31 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x33 = tensor.expand_shape %g32 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e34 = tensor.empty() : tensor<1x2x4x4xf32>
    %g35 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c4, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e34 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e36 = tensor.empty() : tensor<1x2xf32>
    %z37 = arith.constant 0.0 : f32
    %f38 = linalg.fill ins(%z37 : f32) outs(%e36 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g39 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g35 : tensor<1x2x4x4xf32>) outs(%f38 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x40 = tensor.expand_shape %g39 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e41 = tensor.empty() : tensor<1x2x4x4xf32>
    %g42 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c5, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e41 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e43 = tensor.empty() : tensor<1x2xf32>
    %z44 = arith.constant 0.0 : f32
    %f45 = linalg.fill ins(%z44 : f32) outs(%e43 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g46 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g42 : tensor<1x2x4x4xf32>) outs(%f45 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x47 = tensor.expand_shape %g46 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e48 = tensor.empty() : tensor<1x2x4x4xf32>
    %g49 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c6, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e48 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e50 = tensor.empty() : tensor<1x2xf32>
    %z51 = arith.constant 0.0 : f32
    %f52 = linalg.fill ins(%z51 : f32) outs(%e50 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g53 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g49 : tensor<1x2x4x4xf32>) outs(%f52 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x54 = tensor.expand_shape %g53 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e55 = tensor.empty() : tensor<1x2x4x4xf32>
    %g56 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c7, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e55 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e57 = tensor.empty() : tensor<1x2xf32>
    %z58 = arith.constant 0.0 : f32
    %f59 = linalg.fill ins(%z58 : f32) outs(%e57 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g60 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g56 : tensor<1x2x4x4xf32>) outs(%f59 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x61 = tensor.expand_shape %g60 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e62 = tensor.empty() : tensor<1x2x4x4xf32>
    %g63 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c8, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e62 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e64 = tensor.empty() : tensor<1x2xf32>
    %z65 = arith.constant 0.0 : f32
    %f66 = linalg.fill ins(%z65 : f32) outs(%e64 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g67 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g63 : tensor<1x2x4x4xf32>) outs(%f66 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x68 = tensor.expand_shape %g67 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %cat = tensor.concat dim(2) %x12, %x19, %x26, %x33, %x40, %x47, %x54, %x61, %x68 : (tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>) -> tensor<1x2x9xf32>
    %flat = tensor.collapse_shape %cat [[0, 1], [2]] : tensor<1x2x9xf32> into tensor<2x9xf32>
    %grad = tensor.expand_shape %flat [[0, 1], [2, 3]] output_shape [2, 1, 3, 3] : tensor<2x9xf32> into tensor<2x1x3x3xf32>
    %e69 = tensor.empty() : tensor<2x1xf32>
    %z70 = arith.constant 0.0 : f32
    %f71 = linalg.fill ins(%z70 : f32) outs(%e69 : tensor<2x1xf32>) -> tensor<2x1xf32>
    %g72 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%grad : tensor<2x1x3x3xf32>) outs(%f71 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %m = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x1xf32>
    %e73 = tensor.empty() : tensor<2x1xf32>
    %g74 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%g72 : tensor<2x1xf32>) outs(%e73 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x1xf32>
    %e75 = tensor.empty() : tensor<2x1xf32>
    %g76 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%g74 : tensor<2x1xf32>) outs(%e75 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0 : f32
      %d = arith.addf %a0, %eps : f32
      linalg.yield %d : f32
    } -> tensor<2x1xf32>
    %e77 = tensor.empty() : tensor<2x1x3x3xf32>
    %g78 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%grad, %g76 : tensor<2x1x3x3xf32>, tensor<2x1xf32>) outs(%e77 : tensor<2x1x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x1x3x3xf32>
    %e79 = tensor.empty() : tensor<2x1x3x3xf32>
    %g80 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sw, %g78 : tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>) outs(%e79 : tensor<2x1x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x1x3x3xf32>
    %e81 = tensor.empty() : tensor<1x2x4x4xf32>
    %z82 = arith.constant 0.0 : f32
    %f83 = linalg.fill ins(%z82 : f32) outs(%e81 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %g84 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x, u, a, b) -> (n, c, y + a, x + b)>, affine_map<(n, c, y, x, u, a, b) -> (c, u, a, b)>, affine_map<(n, c, y, x, u, a, b) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%cq, %g80 : tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>) outs(%f83 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x2x4x4xf32>
    ttt.chunk_yield outputs(%g84 : tensor<1x2x4x4xf32>) state(%g80 : tensor<2x1x3x3xf32>)
  } -> outputs(tensor<1x2x4x4xf32>) state(tensor<2x1x3x3xf32>)
  return %o : tensor<1x2x4x4xf32>
}

// -----

// The norm's squares computed apart from their sum (torch 1.13's TorchScript
// writes `g.norm(dim=[-2, -1])` as Mul then ReduceSum).
// CHECK-LABEL: func.func @vit3_dwconv_square_apart
// CHECK-NOT: ttt.chunk_loop
// CHECK: ttt.dwconv_layer
// CHECK-SAME: update = #ttt.update<sign = ascent, clip = frobenius>
func.func @vit3_dwconv_square_apart(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %e0 = tensor.empty() : tensor<1x2x6x6xf32>
  %z1 = arith.constant 0.0 : f32
  %f2 = linalg.fill ins(%z1 : f32) outs(%e0 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %kpad = tensor.insert_slice %k into %f2[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  %e3 = tensor.empty() : tensor<1x2x6x6xf32>
  %z4 = arith.constant 0.0 : f32
  %f5 = linalg.fill ins(%z4 : f32) outs(%e3 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %qpad = tensor.insert_slice %q into %f5[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  %s0 = tensor.extract_slice %kpad[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s1 = tensor.extract_slice %kpad[0, 0, 0, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s2 = tensor.extract_slice %kpad[0, 0, 0, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s3 = tensor.extract_slice %kpad[0, 0, 1, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s4 = tensor.extract_slice %kpad[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s5 = tensor.extract_slice %kpad[0, 0, 1, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s6 = tensor.extract_slice %kpad[0, 0, 2, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s7 = tensor.extract_slice %kpad[0, 0, 2, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s8 = tensor.extract_slice %kpad[0, 0, 2, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  // expected-remark @below {{a depth-wise convolution kernel (3x3, dot loss, gradients clipped per channel, one chunk)}}
  %o, %f = ttt.chunk_loop chunk(0) state(%w : tensor<2x1x3x3xf32>)
      windows(%s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7, %s8, %v, %qpad : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x6x6xf32>) along [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
      outputs along [2] {
  ^bb0(%sw: tensor<2x1x3x3xf32>, %c0: tensor<1x2x4x4xf32>, %c1: tensor<1x2x4x4xf32>, %c2: tensor<1x2x4x4xf32>, %c3: tensor<1x2x4x4xf32>, %c4: tensor<1x2x4x4xf32>, %c5: tensor<1x2x4x4xf32>, %c6: tensor<1x2x4x4xf32>, %c7: tensor<1x2x4x4xf32>, %c8: tensor<1x2x4x4xf32>, %cv: tensor<1x2x4x4xf32>, %cq: tensor<1x2x6x6xf32>):
    %e6 = tensor.empty() : tensor<1x2x4x4xf32>
    %g7 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c0, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e6 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e8 = tensor.empty() : tensor<1x2xf32>
    %z9 = arith.constant 0.0 : f32
    %f10 = linalg.fill ins(%z9 : f32) outs(%e8 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g11 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g7 : tensor<1x2x4x4xf32>) outs(%f10 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x12 = tensor.expand_shape %g11 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e13 = tensor.empty() : tensor<1x2x4x4xf32>
    %g14 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e13 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e15 = tensor.empty() : tensor<1x2xf32>
    %z16 = arith.constant 0.0 : f32
    %f17 = linalg.fill ins(%z16 : f32) outs(%e15 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g18 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g14 : tensor<1x2x4x4xf32>) outs(%f17 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x19 = tensor.expand_shape %g18 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e20 = tensor.empty() : tensor<1x2x4x4xf32>
    %g21 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e20 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e22 = tensor.empty() : tensor<1x2xf32>
    %z23 = arith.constant 0.0 : f32
    %f24 = linalg.fill ins(%z23 : f32) outs(%e22 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g25 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g21 : tensor<1x2x4x4xf32>) outs(%f24 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x26 = tensor.expand_shape %g25 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e27 = tensor.empty() : tensor<1x2x4x4xf32>
    %g28 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c3, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e27 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e29 = tensor.empty() : tensor<1x2xf32>
    %z30 = arith.constant 0.0 : f32
    %f31 = linalg.fill ins(%z30 : f32) outs(%e29 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g32 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g28 : tensor<1x2x4x4xf32>) outs(%f31 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x33 = tensor.expand_shape %g32 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e34 = tensor.empty() : tensor<1x2x4x4xf32>
    %g35 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c4, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e34 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e36 = tensor.empty() : tensor<1x2xf32>
    %z37 = arith.constant 0.0 : f32
    %f38 = linalg.fill ins(%z37 : f32) outs(%e36 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g39 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g35 : tensor<1x2x4x4xf32>) outs(%f38 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x40 = tensor.expand_shape %g39 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e41 = tensor.empty() : tensor<1x2x4x4xf32>
    %g42 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c5, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e41 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e43 = tensor.empty() : tensor<1x2xf32>
    %z44 = arith.constant 0.0 : f32
    %f45 = linalg.fill ins(%z44 : f32) outs(%e43 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g46 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g42 : tensor<1x2x4x4xf32>) outs(%f45 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x47 = tensor.expand_shape %g46 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e48 = tensor.empty() : tensor<1x2x4x4xf32>
    %g49 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c6, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e48 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e50 = tensor.empty() : tensor<1x2xf32>
    %z51 = arith.constant 0.0 : f32
    %f52 = linalg.fill ins(%z51 : f32) outs(%e50 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g53 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g49 : tensor<1x2x4x4xf32>) outs(%f52 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x54 = tensor.expand_shape %g53 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e55 = tensor.empty() : tensor<1x2x4x4xf32>
    %g56 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c7, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e55 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e57 = tensor.empty() : tensor<1x2xf32>
    %z58 = arith.constant 0.0 : f32
    %f59 = linalg.fill ins(%z58 : f32) outs(%e57 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g60 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g56 : tensor<1x2x4x4xf32>) outs(%f59 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x61 = tensor.expand_shape %g60 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e62 = tensor.empty() : tensor<1x2x4x4xf32>
    %g63 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c8, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e62 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e64 = tensor.empty() : tensor<1x2xf32>
    %z65 = arith.constant 0.0 : f32
    %f66 = linalg.fill ins(%z65 : f32) outs(%e64 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g67 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g63 : tensor<1x2x4x4xf32>) outs(%f66 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x68 = tensor.expand_shape %g67 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %cat = tensor.concat dim(2) %x12, %x19, %x26, %x33, %x40, %x47, %x54, %x61, %x68 : (tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>) -> tensor<1x2x9xf32>
    %flat = tensor.collapse_shape %cat [[0, 1], [2]] : tensor<1x2x9xf32> into tensor<2x9xf32>
    %grad = tensor.expand_shape %flat [[0, 1], [2, 3]] output_shape [2, 1, 3, 3] : tensor<2x9xf32> into tensor<2x1x3x3xf32>
    %e69 = tensor.empty() : tensor<2x1xf32>
    %z70 = arith.constant 0.0 : f32
    %f71 = linalg.fill ins(%z70 : f32) outs(%e69 : tensor<2x1xf32>) -> tensor<2x1xf32>
    %esq = tensor.empty() : tensor<2x1x3x3xf32>
    %sq = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%grad, %grad : tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>) outs(%esq : tensor<2x1x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<2x1x3x3xf32>
    %g72 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%sq : tensor<2x1x3x3xf32>) outs(%f71 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x1xf32>
    %e73 = tensor.empty() : tensor<2x1xf32>
    %g74 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%g72 : tensor<2x1xf32>) outs(%e73 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x1xf32>
    %e75 = tensor.empty() : tensor<2x1xf32>
    %g76 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%g74 : tensor<2x1xf32>) outs(%e75 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0 : f32
      %d = arith.addf %a0, %eps : f32
      linalg.yield %d : f32
    } -> tensor<2x1xf32>
    %e77 = tensor.empty() : tensor<2x1x3x3xf32>
    %g78 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%grad, %g76 : tensor<2x1x3x3xf32>, tensor<2x1xf32>) outs(%e77 : tensor<2x1x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x1x3x3xf32>
    %e79 = tensor.empty() : tensor<2x1x3x3xf32>
    %g80 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sw, %g78 : tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>) outs(%e79 : tensor<2x1x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x1x3x3xf32>
    %e81 = tensor.empty() : tensor<1x2x4x4xf32>
    %z82 = arith.constant 0.0 : f32
    %f83 = linalg.fill ins(%z82 : f32) outs(%e81 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %g84 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x, u, a, b) -> (n, c, y + a, x + b)>, affine_map<(n, c, y, x, u, a, b) -> (c, u, a, b)>, affine_map<(n, c, y, x, u, a, b) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%cq, %g80 : tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>) outs(%f83 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x2x4x4xf32>
    ttt.chunk_yield outputs(%g84 : tensor<1x2x4x4xf32>) state(%g80 : tensor<2x1x3x3xf32>)
  } -> outputs(tensor<1x2x4x4xf32>) state(tensor<2x1x3x3xf32>)
  return %o : tensor<1x2x4x4xf32>
}

// -----

// Divided by its norm per channel plus 1e-06: not the clipping the layer op
// knows.
// CHECK-LABEL: func.func @vit3_dwconv_other_clip
// CHECK: ttt.chunk_loop
func.func @vit3_dwconv_other_clip(%q: tensor<1x2x4x4xf32>, %k: tensor<1x2x4x4xf32>, %v: tensor<1x2x4x4xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %e0 = tensor.empty() : tensor<1x2x6x6xf32>
  %z1 = arith.constant 0.0 : f32
  %f2 = linalg.fill ins(%z1 : f32) outs(%e0 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %kpad = tensor.insert_slice %k into %f2[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  %e3 = tensor.empty() : tensor<1x2x6x6xf32>
  %z4 = arith.constant 0.0 : f32
  %f5 = linalg.fill ins(%z4 : f32) outs(%e3 : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %qpad = tensor.insert_slice %q into %f5[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  %s0 = tensor.extract_slice %kpad[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s1 = tensor.extract_slice %kpad[0, 0, 0, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s2 = tensor.extract_slice %kpad[0, 0, 0, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s3 = tensor.extract_slice %kpad[0, 0, 1, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s4 = tensor.extract_slice %kpad[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s5 = tensor.extract_slice %kpad[0, 0, 1, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s6 = tensor.extract_slice %kpad[0, 0, 2, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s7 = tensor.extract_slice %kpad[0, 0, 2, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  %s8 = tensor.extract_slice %kpad[0, 0, 2, 2] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x6x6xf32> to tensor<1x2x4x4xf32>
  // expected-remark @below {{not a ttt.kvb_layer: a depth-wise convolution kernel as fast weight (ViT^3's branch): no ttt.dwconv_layer yet: its gradient is divided by its norm per channel plus 0.000001, not plus 1 (the clipping ttt.dwconv_layer knows)}}
  %o, %f = ttt.chunk_loop chunk(0) state(%w : tensor<2x1x3x3xf32>)
      windows(%s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7, %s8, %v, %qpad : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x6x6xf32>) along [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
      outputs along [2] {
  ^bb0(%sw: tensor<2x1x3x3xf32>, %c0: tensor<1x2x4x4xf32>, %c1: tensor<1x2x4x4xf32>, %c2: tensor<1x2x4x4xf32>, %c3: tensor<1x2x4x4xf32>, %c4: tensor<1x2x4x4xf32>, %c5: tensor<1x2x4x4xf32>, %c6: tensor<1x2x4x4xf32>, %c7: tensor<1x2x4x4xf32>, %c8: tensor<1x2x4x4xf32>, %cv: tensor<1x2x4x4xf32>, %cq: tensor<1x2x6x6xf32>):
    %e6 = tensor.empty() : tensor<1x2x4x4xf32>
    %g7 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c0, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e6 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e8 = tensor.empty() : tensor<1x2xf32>
    %z9 = arith.constant 0.0 : f32
    %f10 = linalg.fill ins(%z9 : f32) outs(%e8 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g11 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g7 : tensor<1x2x4x4xf32>) outs(%f10 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x12 = tensor.expand_shape %g11 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e13 = tensor.empty() : tensor<1x2x4x4xf32>
    %g14 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e13 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e15 = tensor.empty() : tensor<1x2xf32>
    %z16 = arith.constant 0.0 : f32
    %f17 = linalg.fill ins(%z16 : f32) outs(%e15 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g18 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g14 : tensor<1x2x4x4xf32>) outs(%f17 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x19 = tensor.expand_shape %g18 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e20 = tensor.empty() : tensor<1x2x4x4xf32>
    %g21 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e20 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e22 = tensor.empty() : tensor<1x2xf32>
    %z23 = arith.constant 0.0 : f32
    %f24 = linalg.fill ins(%z23 : f32) outs(%e22 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g25 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g21 : tensor<1x2x4x4xf32>) outs(%f24 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x26 = tensor.expand_shape %g25 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e27 = tensor.empty() : tensor<1x2x4x4xf32>
    %g28 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c3, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e27 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e29 = tensor.empty() : tensor<1x2xf32>
    %z30 = arith.constant 0.0 : f32
    %f31 = linalg.fill ins(%z30 : f32) outs(%e29 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g32 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g28 : tensor<1x2x4x4xf32>) outs(%f31 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x33 = tensor.expand_shape %g32 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e34 = tensor.empty() : tensor<1x2x4x4xf32>
    %g35 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c4, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e34 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e36 = tensor.empty() : tensor<1x2xf32>
    %z37 = arith.constant 0.0 : f32
    %f38 = linalg.fill ins(%z37 : f32) outs(%e36 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g39 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g35 : tensor<1x2x4x4xf32>) outs(%f38 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x40 = tensor.expand_shape %g39 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e41 = tensor.empty() : tensor<1x2x4x4xf32>
    %g42 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c5, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e41 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e43 = tensor.empty() : tensor<1x2xf32>
    %z44 = arith.constant 0.0 : f32
    %f45 = linalg.fill ins(%z44 : f32) outs(%e43 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g46 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g42 : tensor<1x2x4x4xf32>) outs(%f45 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x47 = tensor.expand_shape %g46 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e48 = tensor.empty() : tensor<1x2x4x4xf32>
    %g49 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c6, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e48 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e50 = tensor.empty() : tensor<1x2xf32>
    %z51 = arith.constant 0.0 : f32
    %f52 = linalg.fill ins(%z51 : f32) outs(%e50 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g53 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g49 : tensor<1x2x4x4xf32>) outs(%f52 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x54 = tensor.expand_shape %g53 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e55 = tensor.empty() : tensor<1x2x4x4xf32>
    %g56 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c7, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e55 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e57 = tensor.empty() : tensor<1x2xf32>
    %z58 = arith.constant 0.0 : f32
    %f59 = linalg.fill ins(%z58 : f32) outs(%e57 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g60 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g56 : tensor<1x2x4x4xf32>) outs(%f59 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x61 = tensor.expand_shape %g60 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %e62 = tensor.empty() : tensor<1x2x4x4xf32>
    %g63 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c8, %cv : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%e62 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      linalg.yield %m : f32
    } -> tensor<1x2x4x4xf32>
    %e64 = tensor.empty() : tensor<1x2xf32>
    %z65 = arith.constant 0.0 : f32
    %f66 = linalg.fill ins(%z65 : f32) outs(%e64 : tensor<1x2xf32>) -> tensor<1x2xf32>
    %g67 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x) -> (n, c, y, x)>, affine_map<(n, c, y, x) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%g63 : tensor<1x2x4x4xf32>) outs(%f66 : tensor<1x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<1x2xf32>
    %x68 = tensor.expand_shape %g67 [[0], [1, 2]] output_shape [1, 2, 1] : tensor<1x2xf32> into tensor<1x2x1xf32>
    %cat = tensor.concat dim(2) %x12, %x19, %x26, %x33, %x40, %x47, %x54, %x61, %x68 : (tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>, tensor<1x2x1xf32>) -> tensor<1x2x9xf32>
    %flat = tensor.collapse_shape %cat [[0, 1], [2]] : tensor<1x2x9xf32> into tensor<2x9xf32>
    %grad = tensor.expand_shape %flat [[0, 1], [2, 3]] output_shape [2, 1, 3, 3] : tensor<2x9xf32> into tensor<2x1x3x3xf32>
    %e69 = tensor.empty() : tensor<2x1xf32>
    %z70 = arith.constant 0.0 : f32
    %f71 = linalg.fill ins(%z70 : f32) outs(%e69 : tensor<2x1xf32>) -> tensor<2x1xf32>
    %g72 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%grad : tensor<2x1x3x3xf32>) outs(%f71 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %m = arith.mulf %a0, %a0 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<2x1xf32>
    %e73 = tensor.empty() : tensor<2x1xf32>
    %g74 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%g72 : tensor<2x1xf32>) outs(%e73 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = math.sqrt %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x1xf32>
    %e75 = tensor.empty() : tensor<2x1xf32>
    %g76 = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> (a, b)>], iterator_types = ["parallel", "parallel"]} ins(%g74 : tensor<2x1xf32>) outs(%e75 : tensor<2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %eps = arith.constant 1.0e-06 : f32
      %d = arith.addf %a0, %eps : f32
      linalg.yield %d : f32
    } -> tensor<2x1xf32>
    %e77 = tensor.empty() : tensor<2x1x3x3xf32>
    %g78 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%grad, %g76 : tensor<2x1x3x3xf32>, tensor<2x1xf32>) outs(%e77 : tensor<2x1x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x1x3x3xf32>
    %e79 = tensor.empty() : tensor<2x1x3x3xf32>
    %g80 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sw, %g78 : tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>) outs(%e79 : tensor<2x1x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x1x3x3xf32>
    %e81 = tensor.empty() : tensor<1x2x4x4xf32>
    %z82 = arith.constant 0.0 : f32
    %f83 = linalg.fill ins(%z82 : f32) outs(%e81 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %g84 = linalg.generic {indexing_maps = [affine_map<(n, c, y, x, u, a, b) -> (n, c, y + a, x + b)>, affine_map<(n, c, y, x, u, a, b) -> (c, u, a, b)>, affine_map<(n, c, y, x, u, a, b) -> (n, c, y, x)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%cq, %g80 : tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>) outs(%f83 : tensor<1x2x4x4xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
    } -> tensor<1x2x4x4xf32>
    ttt.chunk_yield outputs(%g84 : tensor<1x2x4x4xf32>) state(%g80 : tensor<2x1x3x3xf32>)
  } -> outputs(tensor<1x2x4x4xf32>) state(tensor<2x1x3x3xf32>)
  return %o : tensor<1x2x4x4xf32>
}
