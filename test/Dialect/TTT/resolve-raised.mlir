// RUN: ttt-opt %s --ttt-resolve-raised --split-input-file -verify-diagnostics | FileCheck %s

// A layer that is still a ttt.kvb_layer keeps its original nodes; the layer
// op and what only it read are erased, and a remark says why.

// CHECK-LABEL: func.func @kept(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x1x8x4xf32>, %{{.*}}: tensor<1x1x8x4xf32>, %{{.*}}: tensor<1x1x8x4xf32>, %{{.*}}: tensor<1x4x4xf32>, %[[ORIG:[^:]+]]: tensor<1x1x8x4xf32>
// CHECK-NOT: ttt.
// CHECK: return %[[ORIG]]
func.func @kept(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>, %w: tensor<1x4x4xf32>, %orig: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  // expected-remark @below {{kept its original nodes (the model computes what it computed; no simplification named above applies): after the passes it is still a ttt layer, which the model's format cannot express (exact lowering: chunk-sequential loop}}
  %o = ttt.kvb_layer %q, %k, %v : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>
      weights(%w : tensor<1x4x4xf32>)
      model = #ttt.model<kind = linear, trained = [0]>
      loss = #ttt.loss<kind = dot>
      update = #ttt.update<weight_norm = output_channels>
      schedule = #ttt.schedule<kind = chunked, size = 4>
      -> tensor<1x1x8x4xf32>
  %r = ttt.raised %o from %orig : tensor<1x1x8x4xf32>
  return %r : tensor<1x1x8x4xf32>
}

// -----

// A layer some pass rewrote keeps its rewrite; the original nodes go.

// CHECK-LABEL: func.func @rewritten(
// CHECK-SAME: %[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>
// CHECK: %[[S:.+]] = arith.addf %[[A]], %[[B]]
// CHECK-NOT: arith.mulf
// CHECK-NOT: ttt.raised
// CHECK: return %[[S]]
func.func @rewritten(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %rewrite = arith.addf %a, %b : tensor<4xf32>
  %orig = arith.mulf %a, %b : tensor<4xf32>
  // expected-remark @below {{rewritten: after the passes the layer is linear attention, which replaces its original nodes}}
  %r = ttt.raised %rewrite from %orig : tensor<4xf32>
  return %r : tensor<4xf32>
}
