// TTT-Linear's dual form (ttt-lm-pytorch's mini-batch step) read off a
// ttt.chunk_loop whose chunks are the mini-batches: the output a LayerNorm of
// `q W + b - (eta * tril(q k^T)) G - tril(eta) G` plus the queries, G the
// squared error's gradient through the keys' LayerNorm (target v - k), the
// next weights moved by eta's last row; eta made before the loop as
// token_eta[i] * lr[j]. The programs are written by dual_form_chunk_loops.py
// (test_dual_form_chunk_loop.py runs such programs, raised and not, against
// NumPy; test_corpus.py the upstream exports against PyTorch).
// RUN: ttt-opt %s --ttt-raise-chunk-loops=explain --split-input-file -verify-diagnostics | FileCheck %s

// Two mini-batches of two tokens, two streams, three features, with bias:
// one ttt.kvb_layer on the mini-batches merged back into time, its rates
// the lr argument and its per-position factor the token_eta argument.
// CHECK-LABEL: func.func @ttt_linear
// CHECK-SAME: %[[TOK:[^:]*]]: tensor<2xf32>
// CHECK-NOT: ttt.chunk_loop
// CHECK: ttt.kvb_layer
// CHECK-SAME: tensor<1x2x4x3xf32>
// CHECK-SAME: token_eta(%[[TOK]] : tensor<2xf32>)
// CHECK-SAME: model = #ttt.model<kind = linear, trained = [0, 1], bias = true>
// CHECK-SAME: loss = #ttt.loss<kind = layernorm_mse
// CHECK-SAME: schedule = #ttt.schedule<kind = chunked, size = 2, order = causal>
// CHECK: return
func.func @ttt_linear(%q: tensor<2x2x2x3xf32>, %k: tensor<2x2x2x3xf32>, %v: tensor<2x2x2x3xf32>, %tok: tensor<2xf32>, %lr: tensor<2x2x2xf32>, %w0: tensor<2x3x3xf32>, %b0: tensor<2x1x3xf32>) -> tensor<2x2x2x3xf32> {
  %ee = tensor.empty() : tensor<2x2x2x2xf32>
  %eta = linalg.generic {indexing_maps = [affine_map<(n, b, i, j) -> (i)>, affine_map<(n, b, i, j) -> (n, b, j)>, affine_map<(n, b, i, j) -> (n, b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%tok, %lr : tensor<2xf32>, tensor<2x2x2xf32>) outs(%ee : tensor<2x2x2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x2x2x2xf32>
  // expected-remark @below {{a linear fast weight with bias read through a LayerNorm (squared-error loss, per-position and per-token rates, mini-batches of 2, causal dual form)}}
  %o, %f:2 = ttt.chunk_loop chunk(1) state(%w0, %b0 : tensor<2x3x3xf32>, tensor<2x1x3xf32>)
      windows(%q, %k, %v, %eta : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2x2x2xf32>) along [0, 0, 0, 0]
      outputs along [0] {
  ^bb0(%w: tensor<2x3x3xf32>, %bias: tensor<2x1x3xf32>, %qc: tensor<1x2x2x3xf32>, %kc: tensor<1x2x2x3xf32>, %vc: tensor<1x2x2x3xf32>, %etac: tensor<1x2x2x2xf32>):
    %e1 = tensor.empty() : tensor<2x2x3xf32>
    %z2 = arith.constant 0.0 : f32
    %f3 = linalg.fill ins(%z2 : f32) outs(%e1 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%kc, %w : tensor<1x2x2x3xf32>, tensor<2x3x3xf32>) outs(%f3 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e5 = tensor.empty() : tensor<2x2x3xf32>
    %g6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g4, %bias : tensor<2x2x3xf32>, tensor<2x1x3xf32>) outs(%e5 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.addf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e7 = tensor.empty() : tensor<2x2x3xf32>
    %g8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%vc, %kc : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) outs(%e7 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e9 = tensor.empty() : tensor<2x2x1xf32>
    %z10 = arith.constant 0.0 : f32
    %f11 = linalg.fill ins(%z10 : f32) outs(%e9 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g12 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g6 : tensor<2x2x3xf32>) outs(%f11 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %a0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e13 = tensor.empty() : tensor<2x2x3xf32>
    %g14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g6, %g12 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e13 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e15 = tensor.empty() : tensor<2x2x1xf32>
    %z16 = arith.constant 0.0 : f32
    %f17 = linalg.fill ins(%z16 : f32) outs(%e15 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g14, %g14 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f17 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e19 = tensor.empty() : tensor<2x2x1xf32>
    %g20 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 0)>, affine_map<(d0, d1) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel"]} ins(%g18 : tensor<2x2x1xf32>) outs(%e19 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %c = arith.constant 1.000000000e-06 : f32
      %p = arith.addf %a0, %c : f32
      %r = math.sqrt %p : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e21 = tensor.empty() : tensor<2x2x3xf32>
    %g22 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g14, %g20 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e21 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e23 = tensor.empty() : tensor<2x2x3xf32>
    %g24 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g22, %g8 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e23 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e25 = tensor.empty() : tensor<2x2x1xf32>
    %z26 = arith.constant 0.0 : f32
    %f27 = linalg.fill ins(%z26 : f32) outs(%e25 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g28 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g24 : tensor<2x2x3xf32>) outs(%f27 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e29 = tensor.empty() : tensor<2x2x1xf32>
    %z30 = arith.constant 0.0 : f32
    %f31 = linalg.fill ins(%z30 : f32) outs(%e29 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g24, %g22 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f31 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e33 = tensor.empty() : tensor<2x2x3xf32>
    %g34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g24 : tensor<2x2x3xf32>) outs(%e33 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %sc = arith.constant 3.0 : f32
      %ms = arith.mulf %a0, %sc : f32
      linalg.yield %ms : f32
    } -> tensor<2x2x3xf32>
    %e35 = tensor.empty() : tensor<2x2x3xf32>
    %g36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g34, %g28 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e35 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e37 = tensor.empty() : tensor<2x2x3xf32>
    %g38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g22, %g32 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e37 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.mulf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e39 = tensor.empty() : tensor<2x2x3xf32>
    %g40 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g36, %g38 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e39 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.subf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x3xf32>
    %e41 = tensor.empty() : tensor<2x2x3xf32>
    %g42 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g40 : tensor<2x2x3xf32>) outs(%e41 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %a0, %sc : f32
      linalg.yield %ms : f32
    } -> tensor<2x2x3xf32>
    %e43 = tensor.empty() : tensor<2x2x3xf32>
    %g44 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g42, %g20 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e43 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e45 = tensor.empty() : tensor<2x2x2xf32>
    %z46 = arith.constant 0.0 : f32
    %f47 = linalg.fill ins(%z46 : f32) outs(%e45 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %g48 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qc, %kc : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) outs(%f47 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e49 = tensor.empty() : tensor<2x2x2xf32>
    %g50 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g48 : tensor<2x2x2xf32>) outs(%e49 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %d = arith.subi %j, %i : index
      %z = arith.constant 0 : index
      %p = arith.cmpi sle, %d, %z : index
      %zero = arith.constant 0.0 : f32
      %r = arith.select %p, %a0, %zero : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e51 = tensor.empty() : tensor<2x2x2xf32>
    %g52 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%etac, %g50 : tensor<1x2x2x2xf32>, tensor<2x2x2xf32>) outs(%e51 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.mulf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e53 = tensor.empty() : tensor<2x2x3xf32>
    %z54 = arith.constant 0.0 : f32
    %f55 = linalg.fill ins(%z54 : f32) outs(%e53 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g56 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%g52, %g44 : tensor<2x2x2xf32>, tensor<2x2x3xf32>) outs(%f55 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e57 = tensor.empty() : tensor<2x2x3xf32>
    %z58 = arith.constant 0.0 : f32
    %f59 = linalg.fill ins(%z58 : f32) outs(%e57 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g60 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%qc, %w : tensor<1x2x2x3xf32>, tensor<2x3x3xf32>) outs(%f59 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e61 = tensor.empty() : tensor<2x2x3xf32>
    %g62 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g60, %g56 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e61 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.subf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x3xf32>
    %e63 = tensor.empty() : tensor<2x2x2xf32>
    %g64 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%etac : tensor<1x2x2x2xf32>) outs(%e63 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %d = arith.subi %j, %i : index
      %z = arith.constant 0 : index
      %p = arith.cmpi sle, %d, %z : index
      %zero = arith.constant 0.0 : f32
      %r = arith.select %p, %a0, %zero : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e65 = tensor.empty() : tensor<2x2x3xf32>
    %z66 = arith.constant 0.0 : f32
    %f67 = linalg.fill ins(%z66 : f32) outs(%e65 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g68 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%g64, %g44 : tensor<2x2x2xf32>, tensor<2x2x3xf32>) outs(%f67 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e69 = tensor.empty() : tensor<2x2x3xf32>
    %g70 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%bias, %g68 : tensor<2x1x3xf32>, tensor<2x2x3xf32>) outs(%e69 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e71 = tensor.empty() : tensor<2x2x3xf32>
    %g72 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g62, %g70 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e71 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.addf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x3xf32>
    %e73 = tensor.empty() : tensor<2x2x1xf32>
    %z74 = arith.constant 0.0 : f32
    %f75 = linalg.fill ins(%z74 : f32) outs(%e73 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g76 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g72 : tensor<2x2x3xf32>) outs(%f75 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %a0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e77 = tensor.empty() : tensor<2x2x3xf32>
    %g78 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g72, %g76 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e77 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e79 = tensor.empty() : tensor<2x2x1xf32>
    %z80 = arith.constant 0.0 : f32
    %f81 = linalg.fill ins(%z80 : f32) outs(%e79 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g82 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g78, %g78 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f81 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e83 = tensor.empty() : tensor<2x2x1xf32>
    %g84 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 0)>, affine_map<(d0, d1) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel"]} ins(%g82 : tensor<2x2x1xf32>) outs(%e83 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %c = arith.constant 1.000000000e-06 : f32
      %p = arith.addf %a0, %c : f32
      %r = math.sqrt %p : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e85 = tensor.empty() : tensor<2x2x3xf32>
    %g86 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g78, %g84 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e85 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e87 = tensor.empty() : tensor<2x2x3xf32>
    %g88 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qc, %g86 : tensor<1x2x2x3xf32>, tensor<2x2x3xf32>) outs(%e87 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.addf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %out89 = tensor.expand_shape %g88 [[0, 1], [2], [3]] output_shape [1, 2, 2, 3] : tensor<2x2x3xf32> into tensor<1x2x2x3xf32>
    %last90 = tensor.extract_slice %etac[0, 0, 1, 0] [1, 2, 1, 2] [1, 1, 1, 1] : tensor<1x2x2x2xf32> to tensor<1x2x1x2xf32>
    %e91 = tensor.empty() : tensor<2x3x3xf32>
    %z92 = arith.constant 0.0 : f32
    %f93 = linalg.fill ins(%z92 : f32) outs(%e91 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    %g94 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, 0, d1)>, affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%last90, %kc, %g44 : tensor<1x2x1x2xf32>, tensor<1x2x2x3xf32>, tensor<2x2x3xf32>) outs(%f93 : tensor<2x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %a2: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %m1 = arith.mulf %m0, %a2 : f32
      %r = arith.addf %acc, %m1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %e95 = tensor.empty() : tensor<2x3x3xf32>
    %g96 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w, %g94 : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%e95 : tensor<2x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.subf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x3x3xf32>
    %e97 = tensor.empty() : tensor<2x1x3xf32>
    %z98 = arith.constant 0.0 : f32
    %f99 = linalg.fill ins(%z98 : f32) outs(%e97 : tensor<2x1x3xf32>) -> tensor<2x1x3xf32>
    %g100 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, 0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, 0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%last90, %g44 : tensor<1x2x1x2xf32>, tensor<2x2x3xf32>) outs(%f99 : tensor<2x1x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x1x3xf32>
    %e101 = tensor.empty() : tensor<2x1x3xf32>
    %g102 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0, d1)>, affine_map<(d0, d1) -> (d0, 0, d1)>, affine_map<(d0, d1) -> (d0, 0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias, %g100 : tensor<2x1x3xf32>, tensor<2x1x3xf32>) outs(%e101 : tensor<2x1x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.subf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x1x3xf32>
    ttt.chunk_yield outputs(%out89 : tensor<1x2x2x3xf32>) state(%g96, %g102 : tensor<2x3x3xf32>, tensor<2x1x3xf32>)
  } -> outputs(tensor<2x2x2x3xf32>) state(tensor<2x3x3xf32>, tensor<2x1x3xf32>)
  return %o : tensor<2x2x2x3xf32>
}

// -----

// The same without bias, its mask keeping j < i: not TTT-Linear's step.
// CHECK-LABEL: func.func @strict_mask
// CHECK: ttt.chunk_loop
func.func @strict_mask(%q: tensor<2x2x2x3xf32>, %k: tensor<2x2x2x3xf32>, %v: tensor<2x2x2x3xf32>, %tok: tensor<2xf32>, %lr: tensor<2x2x2xf32>, %w0: tensor<2x3x3xf32>) -> tensor<2x2x2x3xf32> {
  %ee = tensor.empty() : tensor<2x2x2x2xf32>
  %eta = linalg.generic {indexing_maps = [affine_map<(n, b, i, j) -> (i)>, affine_map<(n, b, i, j) -> (n, b, j)>, affine_map<(n, b, i, j) -> (n, b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%tok, %lr : tensor<2xf32>, tensor<2x2x2xf32>) outs(%ee : tensor<2x2x2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x2x2x2xf32>
  // expected-remark @below {{its mask over a chunk's tokens is not causal (j <= i)}}
  %o, %f:1 = ttt.chunk_loop chunk(1) state(%w0 : tensor<2x3x3xf32>)
      windows(%q, %k, %v, %eta : tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2x2x3xf32>, tensor<2x2x2x2xf32>) along [0, 0, 0, 0]
      outputs along [0] {
  ^bb0(%w: tensor<2x3x3xf32>, %qc: tensor<1x2x2x3xf32>, %kc: tensor<1x2x2x3xf32>, %vc: tensor<1x2x2x3xf32>, %etac: tensor<1x2x2x2xf32>):
    %e1 = tensor.empty() : tensor<2x2x3xf32>
    %z2 = arith.constant 0.0 : f32
    %f3 = linalg.fill ins(%z2 : f32) outs(%e1 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%kc, %w : tensor<1x2x2x3xf32>, tensor<2x3x3xf32>) outs(%f3 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e5 = tensor.empty() : tensor<2x2x3xf32>
    %g6 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%vc, %kc : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) outs(%e5 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e7 = tensor.empty() : tensor<2x2x1xf32>
    %z8 = arith.constant 0.0 : f32
    %f9 = linalg.fill ins(%z8 : f32) outs(%e7 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g4 : tensor<2x2x3xf32>) outs(%f9 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e11 = tensor.empty() : tensor<2x2x1xf32>
    %g12 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 0)>, affine_map<(d0, d1) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel"]} ins(%g10 : tensor<2x2x1xf32>) outs(%e11 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.constant 3.0 : f32
      %r = arith.divf %a0, %n : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e13 = tensor.empty() : tensor<2x2x3xf32>
    %g14 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g4, %g12 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e13 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e15 = tensor.empty() : tensor<2x2x1xf32>
    %z16 = arith.constant 0.0 : f32
    %f17 = linalg.fill ins(%z16 : f32) outs(%e15 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g18 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g14, %g14 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f17 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e19 = tensor.empty() : tensor<2x2x1xf32>
    %g20 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 0)>, affine_map<(d0, d1) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel"]} ins(%g18 : tensor<2x2x1xf32>) outs(%e19 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %c = arith.constant 1.000000000e-06 : f32
      %p = arith.addf %a0, %c : f32
      %r = math.sqrt %p : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e21 = tensor.empty() : tensor<2x2x3xf32>
    %g22 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g14, %g20 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e21 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e23 = tensor.empty() : tensor<2x2x3xf32>
    %g24 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g22, %g6 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e23 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e25 = tensor.empty() : tensor<2x2x1xf32>
    %z26 = arith.constant 0.0 : f32
    %f27 = linalg.fill ins(%z26 : f32) outs(%e25 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g28 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g24 : tensor<2x2x3xf32>) outs(%f27 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e29 = tensor.empty() : tensor<2x2x1xf32>
    %z30 = arith.constant 0.0 : f32
    %f31 = linalg.fill ins(%z30 : f32) outs(%e29 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g32 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g24, %g22 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f31 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e33 = tensor.empty() : tensor<2x2x3xf32>
    %g34 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g24 : tensor<2x2x3xf32>) outs(%e33 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %sc = arith.constant 3.0 : f32
      %ms = arith.mulf %a0, %sc : f32
      linalg.yield %ms : f32
    } -> tensor<2x2x3xf32>
    %e35 = tensor.empty() : tensor<2x2x3xf32>
    %g36 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g34, %g28 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e35 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e37 = tensor.empty() : tensor<2x2x3xf32>
    %g38 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g22, %g32 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e37 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.mulf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e39 = tensor.empty() : tensor<2x2x3xf32>
    %g40 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g36, %g38 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e39 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.subf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x3xf32>
    %e41 = tensor.empty() : tensor<2x2x3xf32>
    %g42 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g40 : tensor<2x2x3xf32>) outs(%e41 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %a0, %sc : f32
      linalg.yield %ms : f32
    } -> tensor<2x2x3xf32>
    %e43 = tensor.empty() : tensor<2x2x3xf32>
    %g44 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g42, %g20 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e43 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e45 = tensor.empty() : tensor<2x2x2xf32>
    %z46 = arith.constant 0.0 : f32
    %f47 = linalg.fill ins(%z46 : f32) outs(%e45 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
    %g48 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qc, %kc : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) outs(%f47 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e49 = tensor.empty() : tensor<2x2x2xf32>
    %g50 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g48 : tensor<2x2x2xf32>) outs(%e49 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %p = arith.cmpi sgt, %i, %j : index
      %zero = arith.constant 0.0 : f32
      %r = arith.select %p, %a0, %zero : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e51 = tensor.empty() : tensor<2x2x2xf32>
    %g52 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%etac, %g50 : tensor<1x2x2x2xf32>, tensor<2x2x2xf32>) outs(%e51 : tensor<2x2x2xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.mulf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x2xf32>
    %e53 = tensor.empty() : tensor<2x2x3xf32>
    %z54 = arith.constant 0.0 : f32
    %f55 = linalg.fill ins(%z54 : f32) outs(%e53 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g56 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%g52, %g44 : tensor<2x2x2xf32>, tensor<2x2x3xf32>) outs(%f55 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e57 = tensor.empty() : tensor<2x2x3xf32>
    %z58 = arith.constant 0.0 : f32
    %f59 = linalg.fill ins(%z58 : f32) outs(%e57 : tensor<2x2x3xf32>) -> tensor<2x2x3xf32>
    %g60 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%qc, %w : tensor<1x2x2x3xf32>, tensor<2x3x3xf32>) outs(%f59 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %r = arith.addf %acc, %m0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e61 = tensor.empty() : tensor<2x2x3xf32>
    %g62 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g60, %g56 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%e61 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.subf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x2x3xf32>
    %e63 = tensor.empty() : tensor<2x2x1xf32>
    %z64 = arith.constant 0.0 : f32
    %f65 = linalg.fill ins(%z64 : f32) outs(%e63 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g66 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g62 : tensor<2x2x3xf32>) outs(%f65 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %r = arith.addf %acc, %a0 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e67 = tensor.empty() : tensor<2x2x1xf32>
    %g68 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 0)>, affine_map<(d0, d1) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel"]} ins(%g66 : tensor<2x2x1xf32>) outs(%e67 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %n = arith.constant 3.0 : f32
      %r = arith.divf %a0, %n : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e69 = tensor.empty() : tensor<2x2x3xf32>
    %g70 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g62, %g68 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e69 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.subf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e71 = tensor.empty() : tensor<2x2x1xf32>
    %z72 = arith.constant 0.0 : f32
    %f73 = linalg.fill ins(%z72 : f32) outs(%e71 : tensor<2x2x1xf32>) -> tensor<2x2x1xf32>
    %g74 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g70, %g70 : tensor<2x2x3xf32>, tensor<2x2x3xf32>) outs(%f73 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %sc = arith.constant 0.3333333333333333 : f32
      %ms = arith.mulf %m0, %sc : f32
      %r = arith.addf %acc, %ms : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e75 = tensor.empty() : tensor<2x2x1xf32>
    %g76 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1, 0)>, affine_map<(d0, d1) -> (d0, d1, 0)>], iterator_types = ["parallel", "parallel"]} ins(%g74 : tensor<2x2x1xf32>) outs(%e75 : tensor<2x2x1xf32>) {
    ^bb0(%a0: f32, %acc: f32):
      %c = arith.constant 1.000000000e-06 : f32
      %p = arith.addf %a0, %c : f32
      %r = math.sqrt %p : f32
      linalg.yield %r : f32
    } -> tensor<2x2x1xf32>
    %e77 = tensor.empty() : tensor<2x2x3xf32>
    %g78 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g70, %g76 : tensor<2x2x3xf32>, tensor<2x2x1xf32>) outs(%e77 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.divf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %e79 = tensor.empty() : tensor<2x2x3xf32>
    %g80 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qc, %g78 : tensor<1x2x2x3xf32>, tensor<2x2x3xf32>) outs(%e79 : tensor<2x2x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %r = arith.addf %a0, %a1 : f32
      linalg.yield %r : f32
    } -> tensor<2x2x3xf32>
    %out81 = tensor.expand_shape %g80 [[0, 1], [2], [3]] output_shape [1, 2, 2, 3] : tensor<2x2x3xf32> into tensor<1x2x2x3xf32>
    %last82 = tensor.extract_slice %etac[0, 0, 1, 0] [1, 2, 1, 2] [1, 1, 1, 1] : tensor<1x2x2x2xf32> to tensor<1x2x1x2xf32>
    %e83 = tensor.empty() : tensor<2x3x3xf32>
    %z84 = arith.constant 0.0 : f32
    %f85 = linalg.fill ins(%z84 : f32) outs(%e83 : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    %g86 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d0, 0, d1)>, affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%last82, %kc, %g44 : tensor<1x2x1x2xf32>, tensor<1x2x2x3xf32>, tensor<2x2x3xf32>) outs(%f85 : tensor<2x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %a2: f32, %acc: f32):
      %m0 = arith.mulf %a0, %a1 : f32
      %m1 = arith.mulf %m0, %a2 : f32
      %r = arith.addf %acc, %m1 : f32
      linalg.yield %r : f32
    } -> tensor<2x3x3xf32>
    %e87 = tensor.empty() : tensor<2x3x3xf32>
    %g88 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w, %g86 : tensor<2x3x3xf32>, tensor<2x3x3xf32>) outs(%e87 : tensor<2x3x3xf32>) {
    ^bb0(%a0: f32, %a1: f32, %acc: f32):
      %b = arith.subf %a0, %a1 : f32
      linalg.yield %b : f32
    } -> tensor<2x3x3xf32>
    ttt.chunk_yield outputs(%out81 : tensor<1x2x2x3xf32>) state(%g88 : tensor<2x3x3xf32>)
  } -> outputs(tensor<2x2x2x3xf32>) state(tensor<2x3x3xf32>)
  return %o : tensor<2x2x2x3xf32>
}
