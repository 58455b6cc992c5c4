// ttt-to-gpu's default format, a fatbinary (magic 0xBA55ED50, little-endian)
// made with ptxas and fatbinary. Skipped where CUDA is not found.
// REQUIRES: ptxas, fatbinary
// RUN: ttt-opt --ttt-to-gpu='toolkit=%cuda_toolkit' %S/Inputs/ttt-to-gpu-linattn.mlir | FileCheck %s
// CHECK: gpu.binary @layer_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}"P\EDU\BA
// CHECK-NOT: gpu.binary
