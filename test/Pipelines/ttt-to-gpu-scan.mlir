// The chunk-state scan on the GPU: linattn-to-linalg{scan=per-entry} writes
// it as a forall over state entries whose body loops over the chunks, and
// ttt-to-gpu makes that forall one kernel (ttt-gpu-scalar-foralls), a thread
// per entry with the running state in a register.
// RUN: ttt-opt --linattn-to-linalg=scan=per-entry %s | FileCheck %s --check-prefix=LINALG
// RUN: ttt-opt --ttt-to-gpu=format=isa %s | FileCheck %s --check-prefix=HOST
// RUN: ttt-opt --ttt-to-gpu=format=isa %s | %python %S/Inputs/ptx_check.py \
// RUN:   | FileCheck %s --check-prefix=PTX

// LINALG-LABEL: func.func @decayed_inclusive(
// LINALG-SAME: %[[G:[a-z0-9]+]]: tensor<?x2x?x4x4xf32>, %[[A:[a-z0-9]+]]: tensor<?x2x?xf32>
// LINALG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// LINALG: %[[R:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]], %[[J:.*]]) in (%{{.*}}, 2, 4, 4) shared_outs(%[[OUT:.*]] = %{{.*}})
// LINALG: %[[COL:.*]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], 0, %[[I]], %[[J]]] [1, 1, %{{.*}}, 1, 1] [1, 1, 1, 1, 1] : tensor<?x2x?x4x4xf32> to tensor<?xf32>
// LINALG: %[[LOOP:.*]]:2 = scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %[[ZERO]], %[[C:.*]] = %[[COL]]) -> (f32, tensor<?xf32>)
// LINALG: %[[X:.*]] = tensor.extract %[[G]][%[[B]], %[[H]], %[[N]], %[[I]], %[[J]]]
// LINALG: %[[ALPHA:.*]] = tensor.extract %[[A]][%[[B]], %[[H]], %[[N]]]
// LINALG: %[[DS:.*]] = arith.mulf %[[ALPHA]], %[[S]] : f32
// LINALG: %[[NEXT:.*]] = arith.addf %[[DS]], %[[X]] : f32
// LINALG: %[[C2:.*]] = tensor.insert %[[NEXT]] into %[[C]][%[[N]]]
// LINALG: scf.yield %[[NEXT]], %[[C2]] : f32, tensor<?xf32>
// LINALG: scf.forall.in_parallel
// LINALG: tensor.parallel_insert_slice %[[LOOP]]#1 into %[[OUT]][%[[B]], %[[H]], 0, %[[I]], %[[J]]]
// LINALG: %[[CAST:.*]] = tensor.cast %[[R]]
// LINALG: return %[[CAST]]
func.func @decayed_inclusive(%g: tensor<?x2x?x4x4xf32>, %a: tensor<?x2x?xf32>) -> tensor<?x2x?x4x4xf32> {
  %s = linattn.scan %g decay(%a : tensor<?x2x?xf32>) kind = decayed mode = inclusive
      : tensor<?x2x?x4x4xf32> -> tensor<?x2x?x4x4xf32>
  return %s : tensor<?x2x?x4x4xf32>
}

// An exclusive scan stores the state before adding the chunk's term; the
// initial state (shared by the batch) starts each entry's loop.
// LINALG-LABEL: func.func @additive_exclusive(
// LINALG-SAME: %[[G:[a-z0-9]+]]: tensor<?x2x?x4x4xf32>, %[[S0:[a-z0-9]+]]: tensor<2x4x4xf32>
// LINALG: scf.forall (%{{.*}}, %[[H:.*]], %[[I:.*]], %[[J:.*]]) in
// LINALG: %[[INIT:.*]] = tensor.extract %[[S0]][%[[H]], %[[I]], %[[J]]] : tensor<2x4x4xf32>
// LINALG: scf.for %[[N:.*]] = {{.*}} iter_args(%[[S:.*]] = %[[INIT]], %[[C:.*]] = %{{.*}})
// LINALG: %[[C1:.*]] = tensor.insert %[[S]] into %[[C]][%[[N]]]
// LINALG: %[[X:.*]] = tensor.extract %[[G]]
// LINALG: %[[NEXT:.*]] = arith.addf %[[S]], %[[X]] : f32
// LINALG: scf.yield %[[NEXT]], %[[C1]]
func.func @additive_exclusive(%g: tensor<?x2x?x4x4xf32>, %s0: tensor<2x4x4xf32>) -> tensor<?x2x?x4x4xf32> {
  %s = linattn.scan %g initial(%s0 : tensor<2x4x4xf32>) kind = additive mode = exclusive
      : tensor<?x2x?x4x4xf32> -> tensor<?x2x?x4x4xf32>
  return %s : tensor<?x2x?x4x4xf32>
}

// On the host: no loop over chunks, each scan one launch of a 4 x 4 tile of
// threads (the state entries), blocks over batch and heads.
// HOST-LABEL: llvm.func @decayed_inclusive(
// HOST-NOT: llvm.cond_br
// HOST: gpu.launch_func @[[MOD:.*]]::@[[K:decayed_inclusive_kernel[_0-9]*]] blocks in
// HOST-NOT: gpu.launch_func @{{.*}}decayed_inclusive
// HOST-NOT: llvm.cond_br
// HOST: llvm.return
// HOST-LABEL: llvm.func @additive_exclusive(
// HOST-NOT: llvm.cond_br
// HOST: gpu.launch_func
// HOST-NOT: llvm.cond_br
// HOST: llvm.return

// In the kernel, the loop over chunks: two loads, the multiply-add into the
// state register, a store, and the branch back (ttt-to-gpu-ptxas.mlir has
// ptxas assemble it for sm_90a).
// PTX: .visible .entry decayed_inclusive_kernel
// PTX: mov.b32 [[S:%r[0-9]+]], %r{{[0-9]+}};
// PTX-NEXT: mov.b64
// PTX-NEXT: [[LOOP:\$L__BB[0-9]+_[0-9]+]]:
// PTX: ld.global.b32 [[G:%r[0-9]+]], [%rd{{[0-9]+}}];
// PTX: ld.global.b32 [[A:%r[0-9]+]], [%rd{{[0-9]+}}];
// PTX: mul.rn.f32 [[D:%r[0-9]+]], [[S]], [[A]];
// PTX: add.rn.f32 [[S]], [[G]], [[D]];
// PTX: st.global.b32 [%rd{{[0-9]+}}], [[S]];
// PTX: @%p{{[0-9]+}} bra [[LOOP]];
// PTX: .visible .entry additive_exclusive_kernel
