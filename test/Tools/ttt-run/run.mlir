// Runs a function on dynamically shaped tensors and prints its results.
// RUN: ttt-run %s --random-inputs=1 --shapes=2x3,3x4 | FileCheck %s
// RUN: ttt-run %s --random-inputs=1 --dim-size=2 | FileCheck %s --check-prefix=DIM
// RUN: ttt-run %s --random-inputs=1 --shapes='?x3,*' --dim-size=5 \
// RUN:   | FileCheck %s --check-prefix=MIXED
// RUN: ttt-run %s --random-inputs=1 --shapes=20x30,30x40 --print-limit=10 \
// RUN:   | FileCheck %s --check-prefix=SUMMARY

// Results that do not depend on the random values: the zero product of a
// matrix with itself minus itself, a constant fill, and a count of rows.

// CHECK: result0: tensor<2x4xf32> = {{\[}}[0, 0, 0, 0], [0, 0, 0, 0]]
// CHECK-NEXT: result1: tensor<2xf64> = [2.5, 2.5]
// CHECK-NEXT: result2: tensor<i64> = 2
// CHECK-NOT: result

// DIM: result0: tensor<2x2xf32> =
// DIM: result1: tensor<2xf64> = [2.5, 2.5]

// MIXED: result0: tensor<5x5xf32> =
// MIXED: result2: tensor<i64> = 5

// SUMMARY: result0: tensor<20x40xf32> = <800 elements: min 0, max 0, mean 0>
// SUMMARY-NEXT: result1: tensor<20xf64> = <20 elements: min 2.5, max 2.5, mean 2.5>

func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?xf64>, tensor<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %diff = arith.subf %a, %a : tensor<?x?xf32>
  %mm = linalg.matmul ins(%diff, %b : tensor<?x?xf32>, tensor<?x?xf32>)
                      outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %half = arith.constant 2.5 : f64
  %e = tensor.empty(%m) : tensor<?xf64>
  %fill = linalg.fill ins(%half : f64) outs(%e : tensor<?xf64>) -> tensor<?xf64>
  %rows = arith.index_cast %m : index to i64
  %count = tensor.from_elements %rows : tensor<i64>
  return %mm, %fill, %count : tensor<?x?xf32>, tensor<?xf64>, tensor<i64>
}
