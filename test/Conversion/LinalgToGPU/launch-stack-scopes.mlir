// ttt-gpu-launch-stack-scopes: every gpu.launch_func (after gpu-to-llvm) sits
// between a stack save and a restore, so the argument array that the LLVM IR
// translation allocates at the launch is freed after it, also in a loop.
// RUN: ttt-opt %s --ttt-gpu-launch-stack-scopes | FileCheck %s
// RUN: ttt-opt %s --ttt-gpu-launch-stack-scopes | mlir-translate --mlir-to-llvmir \
// RUN:   | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: llvm.func @launch_in_loop
// CHECK: llvm.cond_br %{{.*}}, ^[[BODY:bb[0-9]+]], ^
// CHECK: ^[[BODY]]:
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: gpu.launch_func @kernels::@k blocks in
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: %[[SP2:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: gpu.launch_func @kernels::@k blocks in
// CHECK-NEXT: llvm.intr.stackrestore %[[SP2]] : !llvm.ptr

// In LLVM IR the argument allocas of each launch come after its save and
// before its restore.
// LLVM-LABEL: define void @launch_in_loop
// LLVM: [[SAVED:%[0-9]+]] = call ptr @llvm.stacksave.p0()
// LLVM-NOT: call void @llvm.stackrestore
// LLVM: alloca
// LLVM: call void @mgpuLaunchKernel
// LLVM-NOT: alloca
// LLVM: call void @llvm.stackrestore.p0(ptr [[SAVED]])
// LLVM-NEXT: call ptr @llvm.stacksave.p0()
module attributes {gpu.container_module} {
  llvm.func @launch_in_loop(%p: !llvm.ptr, %n: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    llvm.br ^head(%c0 : i64)
  ^head(%i: i64):
    %more = llvm.icmp "slt" %i, %n : i64
    llvm.cond_br %more, ^body, ^exit
  ^body:
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%p : !llvm.ptr, %i : i64)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%p : !llvm.ptr, %i : i64)
    %next = llvm.add %i, %c1 : i64
    llvm.br ^head(%next : i64)
  ^exit:
    llvm.return
  }
  gpu.binary @kernels [#gpu.object<#nvvm.target, bin = "not a real cubin">]
}
