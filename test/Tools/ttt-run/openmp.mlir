// With --openmp the coarse parallel loops (here the batch loop of the GEMM
// calls) run on OpenMP threads. Only parallel dimensions are split, so every
// element is summed in the same order and the results are bitwise equal to
// the sequential ones.
// RUN: rm -rf %t && mkdir -p %t
// RUN: ttt-run %s --openmp=false --random-inputs=5 --shapes=6x33x17,6x17x9 \
// RUN:   --outputs=%t/seq.npz --print-results=false
// RUN: env OMP_NUM_THREADS=2 ttt-run %s --openmp --random-inputs=5 \
// RUN:   --shapes=6x33x17,6x17x9 --outputs=%t/omp.npz --print-results=false
// RUN: cmp %t/seq.npz %t/omp.npz
// RUN: ttt-run %s --openmp --print-ir | FileCheck %s
// CHECK: omp.parallel
// CHECK: omp.wsloop

func.func @main(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = tensor.dim %a, %c0 : tensor<?x?x?xf32>
  %m = tensor.dim %a, %c1 : tensor<?x?x?xf32>
  %n = tensor.dim %b, %c2 : tensor<?x?x?xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty(%s, %m, %n) : tensor<?x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %mm = linalg.batch_matmul ins(%a, %b : tensor<?x?x?xf32>, tensor<?x?x?xf32>)
                            outs(%acc : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %t = math.tanh %mm : tensor<?x?x?xf32>
  return %t : tensor<?x?x?xf32>
}
