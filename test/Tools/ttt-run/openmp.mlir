// With --openmp the parallel loops run on OpenMP threads. Only parallel
// dimensions are split, so every element is summed in the same order and
// the results are bitwise equal to the sequential ones.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ttt-run %s --random-inputs=5 --shapes=33x17,17x9 --outputs=%t/seq.npz \
// RUN:   --print-results=false
// RUN: env OMP_NUM_THREADS=2 ttt-run %s --openmp --random-inputs=5 \
// RUN:   --shapes=33x17,17x9 --outputs=%t/omp.npz --print-results=false
// RUN: cmp %t/seq.npz %t/omp.npz
// RUN: ttt-run %s --openmp --print-ir | FileCheck %s
// CHECK: omp.parallel
// CHECK: omp.wsloop

func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>)
                      outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = math.tanh %mm : tensor<?x?xf32>
  return %t : tensor<?x?xf32>
}
