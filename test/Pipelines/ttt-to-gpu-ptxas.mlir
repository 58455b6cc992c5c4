// ttt-to-gpu's PTX for sm_90 is accepted by CUDA's ptxas, and the cubin and
// fatbin formats build. Skipped where no ptxas is found (lit.cfg.py).
// REQUIRES: ptxas
// RUN: ttt-opt --ttt-to-gpu='format=isa toolkit=%cuda_toolkit' %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | %python %S/Inputs/ptx_check.py --ptxas %ptxas --arch sm_90 | FileCheck %s
// RUN: ttt-opt --ttt-to-gpu='format=isa toolkit=%cuda_toolkit' %S/Inputs/ttt-to-gpu-kvb-layer.mlir \
// RUN:   | %python %S/Inputs/ptx_check.py --ptxas %ptxas --arch sm_90 | FileCheck %s
// RUN: ttt-opt --ttt-to-gpu='format=isa precision=bf16 toolkit=%cuda_toolkit' \
// RUN:   %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | %python %S/Inputs/ptx_check.py --ptxas %ptxas --arch sm_90 | FileCheck %s
// CHECK: ptxas accepted 1 PTX modules for sm_90

// The fused scan kernels (one loop over chunks per thread), for Hopper's
// sm_90a.
// RUN: ttt-opt --ttt-to-gpu='format=isa chip=sm_90a toolkit=%cuda_toolkit' \
// RUN:   %S/ttt-to-gpu-scan.mlir \
// RUN:   | %python %S/Inputs/ptx_check.py --ptxas %ptxas --arch sm_90a \
// RUN:   | FileCheck %s --check-prefix=SM90A
// SM90A: ptxas accepted 1 PTX modules for sm_90a

// With the toolkit found, libdevice is linked in: no external math calls.
// RUN: ttt-opt --ttt-to-gpu='format=isa toolkit=%cuda_toolkit' %S/Inputs/ttt-to-gpu-kvb-layer.mlir \
// RUN:   | %python %S/Inputs/ptx_check.py | FileCheck %s --check-prefix=LIBDEVICE
// LIBDEVICE: .target sm_90
// LIBDEVICE-NOT: .extern

// A cubin (an ELF file) through ptxas.
// RUN: ttt-opt --ttt-to-gpu='format=bin toolkit=%cuda_toolkit' %S/Inputs/ttt-to-gpu-linattn.mlir \
// RUN:   | FileCheck %s --check-prefix=BIN
// BIN: gpu.binary @layer_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}bin = "\7FELF
