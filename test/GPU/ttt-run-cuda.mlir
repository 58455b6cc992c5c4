// ttt-run --device=cuda: the GPU runtime is loaded and asked for a device
// before anything is compiled, and a machine without a driver or GPU gets
// one line. (A missing driver is forced with $TTT_CUDA_DRIVER, so this holds
// on GPU machines too.)
// RUN: not env TTT_CUDA_DRIVER=%t.nodir/libcuda.so.1 ttt-run %s --device=cuda \
// RUN:   --random-inputs=1 2>&1 | FileCheck %s --check-prefix=NODRIVER
// NODRIVER: ttt-run: error: --device=cuda: no CUDA driver/GPU found ({{.*}}.nodir/libcuda.so.1: cannot open shared object file: No such file or directory)
// NODRIVER-NOT: {{.}}

// RUN: not ttt-run %s --device=cuda --cuda-runtime=%t.nope.so --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NORUNTIME
// NORUNTIME: ttt-run: error: --device=cuda: cannot load the GPU runtime {{.*}}.nope.so: {{.*}}

// Flags of one device only.
// RUN: not ttt-run %s --device=cuda --openmp --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OMP
// OMP: ttt-run: error: --openmp: only applies with --device=cpu
// RUN: not ttt-run %s --gpu-options=precision=bf16 --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPUGPU
// CPUGPU: ttt-run: error: --gpu-options: only applies with --device=cuda
// RUN: not ttt-run %s --device=cuda --gpu-options=precision=fp16 --random-inputs=1 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADOPT
// BADOPT: ttt-run: error: --gpu-options: not valid ttt-to-gpu options: {{.*}}'fp16'
// RUN: not ttt-run %s --device=tpu --random-inputs=1 2>&1 | FileCheck %s --check-prefix=BADDEV
// BADDEV: ttt-run: error: command line: for the --device option: Cannot find option named 'tpu'!

// --print-ir needs no GPU: host code and the kernels' binary.
// RUN: env TTT_CUDA_DRIVER=%t.nodir/libcuda.so.1 ttt-run %s --device=cuda \
// RUN:   --gpu-options=format=isa --print-ir | FileCheck %s --check-prefix=IR
// IR: llvm.func @_mlir_memref_to_llvm_alloc
// IR: llvm.func @main(
// IR: gpu.launch_func
// IR: gpu.binary @main_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">

// The kernels emulated on the host compute what the CPU pipeline's own loops
// compute, bit for bit (BLAS would sum in another order; the CPU's vectorizable
// tanh is not libm's).
// RUN: ttt-run %s --contractions=loops --vectorizable-math=false --random-inputs=7 \
// RUN:   --shapes=5x3,3x70 --print-limit=1000 > %t.cpu
// RUN: ttt-run %s --device=cuda --gpu-options='emulate=true tile-x=4 tile-y=2' \
// RUN:   --random-inputs=7 --shapes=5x3,3x70 --print-limit=1000 > %t.emu
// RUN: diff %t.cpu %t.emu
// RUN: FileCheck %s --check-prefix=EMU < %t.emu
// EMU: result0: tensor<5x70xf32> = [
// EMU: result1: tensor<5xf32> = [

// --help documents the device flags.
// RUN: ttt-run --help | FileCheck %s --check-prefix=HELP
// HELP-DAG: --cuda-runtime=<lib.so>
// HELP-DAG: --device=<value>
// HELP-DAG: =cpu
// HELP-DAG: =cuda
// HELP-DAG: --gpu-options=<options>

func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>)
                      outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = math.tanh %mm : tensor<?x?xf32>
  %re = tensor.empty(%m) : tensor<?xf32>
  %racc = linalg.fill ins(%zero : f32) outs(%re : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.reduce ins(%t : tensor<?x?xf32>) outs(%racc : tensor<?xf32>) dimensions = [1]
    (%v: f32, %s: f32) {
      %r = arith.addf %v, %s : f32
      linalg.yield %r : f32
    }
  return %t, %sum : tensor<?x?xf32>, tensor<?xf32>
}
