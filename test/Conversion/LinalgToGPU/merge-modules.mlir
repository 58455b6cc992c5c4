// ttt-gpu-merge-modules: the kernels that gpu-kernel-outlining puts in one
// gpu.module each move into the first one (one binary); a kernel whose name
// is taken gets its module's name, the launches follow, callees cloned into
// every module are kept once. Modules for another target stay apart.
// RUN: ttt-opt %s --split-input-file --verify-diagnostics --ttt-gpu-merge-modules \
// RUN:   | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK: gpu.launch_func @[[M:f_kernel]]::@f_kernel blocks
// CHECK-NEXT: gpu.launch_func @[[M]]::@f_kernel_0 blocks
// CHECK-NEXT: gpu.launch_func @[[M]]::@f_kernel_1 blocks
// CHECK-NEXT: gpu.launch_func @g_kernel::@g_kernel blocks
// CHECK: gpu.module @[[M]] {
// CHECK-NEXT: func.func @square(
// CHECK: gpu.func @f_kernel(
// CHECK: func.call @square
// CHECK-NOT: func.func @square
// CHECK: gpu.func @f_kernel_0(
// CHECK-COUNT-2: func.call @square
// CHECK: gpu.func @f_kernel_1(
// CHECK-NOT: gpu.module @f_kernel_
// CHECK: gpu.module @g_kernel [#nvvm.target<chip = "sm_80">] {
// CHECK-NEXT: gpu.func @g_kernel(
module attributes {gpu.container_module} {
  func.func @f(%a: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    gpu.launch_func @f_kernel_1::@f_kernel_1 blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    gpu.launch_func @g_kernel::@g_kernel blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    return
  }
  gpu.module @f_kernel {
    func.func @square(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @f_kernel(%a: memref<?xf32>) kernel {
      %i = gpu.block_id x
      %x = memref.load %a[%i] : memref<?xf32>
      %y = func.call @square(%x) : (f32) -> f32
      memref.store %y, %a[%i] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 {
    func.func @square(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @f_kernel(%a: memref<?xf32>) kernel {
      %i = gpu.block_id x
      %x = memref.load %a[%i] : memref<?xf32>
      %y = func.call @square(%x) : (f32) -> f32
      %z = func.call @square(%y) : (f32) -> f32
      memref.store %z, %a[%i] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_1 {
    gpu.func @f_kernel_1(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @g_kernel [#nvvm.target<chip = "sm_80">] {
    gpu.func @g_kernel(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Symbols of the same name other than functions cannot be merged.
module attributes {gpu.container_module} {
  gpu.module @a {
    memref.global "private" @buffer : memref<4xf32>
  }
  gpu.module @b {
    // expected-error @+1 {{ttt-gpu-merge-modules: symbol clash}}
    memref.global "private" @buffer : memref<4xf32>
  }
}
