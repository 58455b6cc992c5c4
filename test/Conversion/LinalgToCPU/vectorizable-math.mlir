// RUN: ttt-opt %s --ttt-vectorizable-math --split-input-file | FileCheck %s

// f32 exp becomes MLIR's polynomial: fused multiply-adds and bit operations
// on the exponent, no call for LLVM's vectorizer to stop at.
// CHECK-LABEL: func.func @exp_f32(
// CHECK-SAME: %[[X:.+]]: f32
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: arith.bitcast
// CHECK: return
func.func @exp_f32(%x: f32) -> f32 {
  %e = math.exp %x : f32
  return %e : f32
}

// -----

// The same on vectors, and for tanh and expm1 (a SiLU's and a GELU's parts).
// CHECK-LABEL: func.func @vector_tanh_expm1(
// CHECK-NOT: math.tanh
// CHECK-NOT: math.expm1
// CHECK: return
func.func @vector_tanh_expm1(%x: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %t = math.tanh %x : vector<8xf32>
  %m = math.expm1 %x : vector<8xf32>
  return %t, %m : vector<8xf32>, vector<8xf32>
}

// -----

// Other element types and other functions are left to libm.
// CHECK-LABEL: func.func @left(
// CHECK: math.exp %{{.+}} : f16
// CHECK: math.exp %{{.+}} : f64
// CHECK: math.erf %{{.+}} : f32
func.func @left(%h: f16, %d: f64, %x: f32) -> (f16, f64, f32) {
  %a = math.exp %h : f16
  %b = math.exp %d : f64
  %c = math.erf %x : f32
  return %a, %b, %c : f16, f64, f32
}
