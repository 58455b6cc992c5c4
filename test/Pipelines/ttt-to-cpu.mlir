// The ttt-to-cpu pipeline takes tensor code with dynamic shapes to the LLVM
// dialect, from ttt-opt and from stock mlir-opt through the plug-in.
// RUN: ttt-opt --ttt-to-cpu %s | FileCheck %s
// RUN: ttt-opt --pass-pipeline='builtin.module(ttt-to-cpu{openmp=true num-threads=2})' %s \
// RUN:   | FileCheck %s --check-prefixes=CHECK,OMP
// RUN: ttt-opt --ttt-to-cpu='fuse-elementwise=true runtime-verification=true' %s \
// RUN:   | FileCheck %s --check-prefix=RV
// RUN: %mlir_opt --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --pass-pipeline='builtin.module(ttt-to-cpu)' %s | FileCheck %s

// Public functions keep their names and take expanded memref descriptors;
// nothing above the LLVM dialect (or OpenMP) is left.
// CHECK-NOT: tensor<
// CHECK-NOT: memref<
// CHECK-NOT: unrealized_conversion_cast
// CHECK: llvm.func @malloc
// CHECK: llvm.func @main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64,
// CHECK-SAME: -> !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>)>
// With openmp, the batch loop of the GEMM calls is an OpenMP region.
// OMP: omp.parallel

// The run-time checks print a message and abort.
// RV: llvm.func @main(
// RV: llvm.call @puts
// RV: llvm.call @abort
// CHECK-NOT: tensor<
// CHECK-NOT: memref<

func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %k = tensor.dim %a, %c1 : tensor<?x?xf32>
  %a3 = tensor.expand_shape %a [[0, 1], [2]] output_shape [1, %m, %k]
      : tensor<?x?xf32> into tensor<1x?x?xf32>
  %b3 = tensor.expand_shape %b [[0, 1], [2]] output_shape [1, %k, %n]
      : tensor<?x?xf32> into tensor<1x?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<1x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x?x?xf32>) -> tensor<1x?x?xf32>
  %mm3 = linalg.batch_matmul ins(%a3, %b3 : tensor<1x?x?xf32>, tensor<1x?x?xf32>)
                             outs(%acc : tensor<1x?x?xf32>) -> tensor<1x?x?xf32>
  %mm = tensor.collapse_shape %mm3 [[0, 1], [2]] : tensor<1x?x?xf32> into tensor<?x?xf32>
  %t = math.tanh %mm : tensor<?x?xf32>
  %x = math.erf %t : tensor<?x?xf32>
  %re = tensor.empty(%m) : tensor<?xf32>
  %racc = linalg.fill ins(%zero : f32) outs(%re : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.reduce ins(%x : tensor<?x?xf32>) outs(%racc : tensor<?xf32>) dimensions = [1]
    (%v: f32, %s: f32) {
      %r = arith.addf %v, %s : f32
      linalg.yield %r : f32
    }
  return %t, %sum : tensor<?x?xf32>, tensor<?xf32>
}
