// The ttt-to-gpu pipeline takes the chunk-parallel linattn form of a layer,
// and the recurrent reference of a ttt.kvb_layer, to host code in the LLVM
// dialect that launches kernels of one gpu.binary for sm_90 (PTX here:
// format=isa needs no CUDA toolkit; ttt-to-gpu-ptxas.mlir assembles it).
// RUN: ttt-opt --ttt-to-gpu=format=isa %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | FileCheck %s --check-prefixes=CHECK,LINATTN
// RUN: ttt-opt --ttt-to-gpu=format=isa %S/Inputs/ttt-to-gpu-kvb-layer.mlir \
// RUN:   | FileCheck %s --check-prefixes=CHECK,KVB
// RUN: ttt-opt --ttt-to-gpu=format=isa %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | %python %S/Inputs/ptx_check.py | FileCheck %s --check-prefix=PTX
// RUN: ttt-opt --ttt-to-gpu='format=isa chip=sm_80 features=+ptx70 tile-x=64 tile-y=4' \
// RUN:   %S/Inputs/ttt-to-gpu-linattn.mlir | FileCheck %s --check-prefix=OPTS
// RUN: ttt-opt --ttt-to-gpu='format=isa precision=bf16' %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | %python %S/Inputs/ptx_check.py | FileCheck %s --check-prefix=BF16
// RUN: ttt-opt --ttt-to-gpu='format=isa emulate=true' %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | FileCheck %s --check-prefix=EMU
// RUN: %mlir_opt --load-dialect-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --load-pass-plugin=%ttt_lib_dir/libTTTPlugin.so \
// RUN:   --pass-pipeline='builtin.module(ttt-to-gpu{format=isa})' \
// RUN:   %S/Inputs/ttt-to-gpu-linattn.mlir | FileCheck %s --check-prefixes=CHECK,LINATTN
// RUN: ttt-opt --ttt-to-gpu='format=isa contractions=cublas' %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | FileCheck %s --check-prefix=CUBLAS
// RUN: ttt-opt --ttt-to-gpu='format=isa contractions=cublas precision=tf32' \
// RUN:   %S/Inputs/ttt-to-gpu-linattn.mlir | FileCheck %s --check-prefix=TF32
// RUN: not ttt-opt --ttt-to-gpu=scan=foo %S/Inputs/ttt-to-gpu-linattn.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADSCAN
// BADSCAN: for the --scan option: Cannot find option named 'foo'!
// BADSCAN-NOT: {{.}}
// RUN: not ttt-opt --ttt-to-gpu=precision=fp16 %S/Inputs/ttt-to-gpu-linattn.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT

// Host: the public function keeps the memref-descriptor calling convention;
// every buffer comes from the GPU runtime's allocator (managed memory), and
// nothing but the LLVM dialect, the launches and the binary is left.
// CHECK: module attributes {gpu.container_module}
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK-NOT: llvm.func @malloc
// CHECK: llvm.func @layer(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64,
// CHECK-NOT: tensor<
// CHECK-NOT: memref<
// CHECK-NOT: unrealized_conversion_cast
// Every kernel runs blocks x threads = (n, 1, 1) x (32, 8, 1) by default.
// CHECK-DAG: %[[C32:[0-9]+]] = llvm.mlir.constant(32 : index) : i64
// CHECK-DAG: %[[C8:[0-9]+]] = llvm.mlir.constant(8 : index) : i64
// CHECK-DAG: %[[C1:[0-9]+]] = llvm.mlir.constant(1 : index) : i64
// KVB-DAG: %[[C256:[0-9]+]] = llvm.mlir.constant(256 : index) : i64
// CHECK: gpu.launch_func @[[MOD:layer_kernel]]::@layer_kernel blocks in (%{{[0-9]+}}, %[[C1]], %[[C1]]) threads in (%[[C32]], %[[C8]], %[[C1]]) : i64
// CHECK: gpu.launch_func @[[MOD]]::@layer_kernel_0 blocks in
// The chunk-state scans are kernels of their own (a thread per state entry
// carries it through the chunks: ttt-to-gpu-scan.mlir), so the parallel
// form's host code has no loop; the recurrent reference loops over streams
// and chunks on the host.
// LINATTN-NOT: llvm.cond_br
// LINATTN: gpu.launch_func @[[MOD]]::
// LINATTN-NOT: llvm.cond_br
// KVB: llvm.cond_br
// KVB: gpu.launch_func @[[MOD]]::
// One-dimensional nests (and full reductions, such as the Frobenius norms of
// the reference's Newton-Schulz, which run in one iteration on the device
// rather than on the host) use 256 threads along x.
// KVB: gpu.launch_func @[[MOD]]::@{{.*}} threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK: llvm.return
// One binary with every kernel, for sm_90 with PTX ISA 8.0.
// CHECK: gpu.binary @[[MOD]] [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "
// CHECK-NOT: gpu.binary

// Each kernel maps blocks (x only) and a 2-d tile of threads onto the loop
// nest of one linalg op, with a grid-stride loop over the linearized blocks.
// PTX: .version 8.0
// PTX: .target sm_90
// PTX: .visible .entry layer_kernel(
// PTX-DAG: %ctaid.x
// PTX-DAG: %tid.x
// PTX-DAG: %tid.y
// PTX-DAG: %nctaid.x
// PTX: .visible .entry layer_kernel_0(
// The SwiGLU feature map's sigmoid comes from libdevice (or stays an extern
// call where no CUDA toolkit is found).
// PTX: .entry

// Options reach the target and the mapping.
// OPTS-DAG: %[[C64:[0-9]+]] = llvm.mlir.constant(64 : index) : i64
// OPTS-DAG: %[[C4:[0-9]+]] = llvm.mlir.constant(4 : index) : i64
// OPTS: gpu.launch_func @layer_kernel::@layer_kernel blocks in ({{.*}}) threads in (%[[C64]], %[[C4]],
// OPTS: gpu.binary @layer_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_80", features = "+ptx70">
// OPTS-SAME: .target sm_80

// bf16: operands of products are rounded to bf16 (fp32 accumulation).
// BF16: cvt.rn.bf16.f32

// Emulation (a testing aid): the same mapping, run as host loops for the CPU.
// EMU-NOT: gpu.
// EMU: llvm.func @malloc
// EMU: llvm.func @layer(
// EMU-NOT: gpu.

// BADOPT: Cannot find option named 'fp16'

// contractions=cublas: the host calls cuBLAS for the fp32 GEMMs (feature
// maps, chunk states and their application, Newton-Schulz), a generated
// kernel only where cuBLAS is missing at run time.
// CUBLAS: llvm.func @layer(
// CUBLAS: llvm.call @ttt_cublas_available() : () -> i32
// CUBLAS: llvm.call @ttt_cublas_sgemm(
// CUBLAS-DAG: llvm.func @ttt_cublas_available() -> i32
// CUBLAS-DAG: llvm.func @ttt_cublas_sgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// precision=tf32: the same calls, on TF32 tensor cores.
// TF32: llvm.func @layer(
// TF32-NOT: llvm.call @ttt_cublas_sgemm(
// TF32: llvm.call @ttt_cublas_sgemm_tf32(
