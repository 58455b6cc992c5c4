//===- Pipelines.h - the ttt pass pipelines ---------------------*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Named pipelines that take ttt programs to something executable. They are
// built here once and used by ttt-opt (--ttt-to-cpu), the mlir-opt plug-in
// and ttt-run, so every tool compiles the same way.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_PIPELINES_PIPELINES_H
#define TTT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::ttt {

/// Options of the `ttt-to-cpu` pipeline.
/// How `ttt-to-cpu` runs GEMM-shaped (contraction) linalg ops.
enum class CPUContractions { blas, loops };

/// Which exact form `ttt-to-cpu` gives the ttt layers it finds.
enum class LayerForm { automatic, parallel, recurrent };

struct TTTToCPUOptions : public PassPipelineOptions<TTTToCPUOptions> {
  PassOptions::Option<LayerForm> form{
      *this, "form",
      llvm::cl::desc("The form of each ttt layer that has both (default "
                     "auto); linattn ops always run in parallel"),
      llvm::cl::init(LayerForm::automatic),
      llvm::cl::values(
          clEnumValN(LayerForm::automatic, "auto",
                     "per layer, by ttt-to-linattn's CPU cost model for "
                     "`cores` cores"),
          clEnumValN(LayerForm::parallel, "parallel",
                     "the chunk-parallel linear-attention form wherever "
                     "ttt-to-linattn can rewrite the layer"),
          clEnumValN(LayerForm::recurrent, "recurrent",
                     "the exact sequential reference"))};
  PassOptions::Option<unsigned> cores{
      *this, "cores",
      llvm::cl::desc("With form=auto: the cores of the target CPU (0: this "
                     "machine's)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run the parallel loops of linalg ops as OpenMP "
                     "parallel regions (the program then needs libomp)"),
      llvm::cl::init(false)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Threads per OpenMP parallel region; 0 leaves the "
                     "choice to the OpenMP runtime (OMP_NUM_THREADS)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse producer-consumer chains of elementwise linalg "
                     "ops before bufferization, saving temporaries "
                     "(never into a contraction; results do not change)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizableMath{
      *this, "vectorizable-math",
      llvm::cl::desc("Compute f32 exp, expm1 and tanh by MLIR's polynomial "
                     "approximations (within a few ulp of libm), which LLVM "
                     "vectorizes, instead of libm calls, which it does not "
                     "(ttt-vectorizable-math)"),
      llvm::cl::init(true)};
  PassOptions::Option<CPUContractions> contractions{
      *this, "contractions",
      llvm::cl::desc("How fp32 contractions run (default blas)"),
      llvm::cl::init(CPUContractions::blas),
      llvm::cl::values(
          clEnumValN(CPUContractions::blas, "blas",
                     "calls of a BLAS GEMM loaded at run time, with the "
                     "generated loops where none loads"),
          clEnumValN(CPUContractions::loops, "loops",
                     "the generated loops only"))};
  PassOptions::Option<bool> runtimeVerification{
      *this, "runtime-verification",
      llvm::cl::desc("Insert run-time checks of op preconditions (such as "
                     "matching dynamic sizes); a failing check prints the op "
                     "and aborts"),
      llvm::cl::init(false)};
};

/// Arithmetic of the GEMM-shaped (contraction) linalg ops in `ttt-to-gpu`.
enum class GPUPrecision {
  /// Everything in the program's own element type.
  fp32,
  /// The operands of every product inside a contraction are rounded to bf16
  /// (arith.truncf then arith.extf) and accumulated in fp32, as tensor-core
  /// bf16 GEMMs do. Elementwise ops, scans and reductions of one operand stay
  /// in fp32.
  bf16,
  /// fp32 data; the GEMMs cuBLAS runs (contractions=cublas) use TF32 tensor
  /// cores (10-bit mantissas in products, fp32 sums). Generated kernels stay
  /// fp32.
  tf32,
};

/// How `ttt-to-gpu` computes the fp32 GEMM-shaped ops (contractions).
enum class GPUContractions {
  /// Generated kernels, a thread per output element.
  kernels,
  /// cuBLAS (cublasSgemm_v2 through libttt_cuda_runtime, loaded at run time),
  /// called by the host; the generated kernel where cuBLAS is missing. bf16
  /// contractions (precision=bf16) stay kernels.
  cublas,
};

/// How `ttt-to-gpu` scans chunk states (linattn-to-linalg's `scan`).
enum class GPUScan { perEntry, parallel, sequential };

/// What `ttt-to-gpu` embeds for each kernel module (gpu-module-to-binary's
/// format).
enum class GPUBinaryFormat {
  /// PTX text, compiled by the driver when the module is loaded (needs no
  /// CUDA toolkit at compile time).
  isa,
  /// A cubin for `chip` (ptxas).
  bin,
  /// A fatbinary with the cubin and the PTX (ptxas and fatbinary).
  fatbin,
};

/// Options of the `ttt-to-gpu` pipeline.
struct TTTToGPUOptions : public PassPipelineOptions<TTTToGPUOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVIDIA GPU architecture (sm_XX)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVPTX target features; the PTX ISA version must know "
                     "the chip (+ptx80 for sm_90)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<GPUPrecision> precision{
      *this, "precision",
      llvm::cl::desc("Arithmetic of the contractions (GEMMs)"),
      llvm::cl::init(GPUPrecision::fp32),
      llvm::cl::values(
          clEnumValN(GPUPrecision::fp32, "fp32", "fp32 throughout"),
          clEnumValN(GPUPrecision::bf16, "bf16",
                     "operands of products rounded to bf16, fp32 "
                     "accumulation"),
          clEnumValN(GPUPrecision::tf32, "tf32",
                     "cuBLAS GEMMs on TF32 tensor cores (with "
                     "contractions=cublas), fp32 elsewhere"))};
  PassOptions::Option<GPUContractions> contractions{
      *this, "contractions",
      llvm::cl::desc("How fp32 contractions (GEMMs) run"),
      llvm::cl::init(GPUContractions::kernels),
      llvm::cl::values(
          clEnumValN(GPUContractions::kernels, "kernels",
                     "generated kernels, a thread per output element"),
          clEnumValN(GPUContractions::cublas, "cublas",
                     "cuBLAS calls of the host (libttt_cuda_runtime loads "
                     "libcublas at run time; kernels without it)"))};
  PassOptions::Option<GPUScan> scan{
      *this, "scan", llvm::cl::desc("linattn-to-linalg's chunk-state scan"),
      llvm::cl::init(GPUScan::perEntry),
      llvm::cl::values(
          clEnumValN(GPUScan::perEntry, "per-entry",
                     "one kernel, a thread per state entry carrying it "
                     "through the chunks"),
          clEnumValN(GPUScan::parallel, "parallel",
                     "log-depth rounds, a kernel each"),
          clEnumValN(GPUScan::sequential, "sequential",
                     "a loop over chunks on the host, kernels per chunk"))};
  PassOptions::Option<GPUBinaryFormat> format{
      *this, "format", llvm::cl::desc("What to embed for each kernel module"),
      llvm::cl::init(GPUBinaryFormat::fatbin),
      llvm::cl::values(
          clEnumValN(GPUBinaryFormat::isa, "isa",
                     "PTX text (JIT-compiled by the driver at load time)"),
          clEnumValN(GPUBinaryFormat::bin, "bin", "a cubin (needs ptxas)"),
          clEnumValN(GPUBinaryFormat::fatbin, "fatbin",
                     "a fatbinary (needs ptxas and fatbinary)"))};
  PassOptions::Option<unsigned> tileX{
      *this, "tile-x",
      llvm::cl::desc("Threads of a block along the innermost parallel "
                     "dimension of each loop nest (the block's x)"),
      llvm::cl::init(32)};
  PassOptions::Option<unsigned> tileY{
      *this, "tile-y",
      llvm::cl::desc("Threads of a block along the second innermost parallel "
                     "dimension (the block's y); one-dimensional nests use "
                     "tile-x * tile-y threads along x"),
      llvm::cl::init(8)};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimization level of the NVPTX back end, 0-3"),
      llvm::cl::init(3)};
  PassOptions::Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Testing aid: map loops onto blocks and threads as "
                     "usual, then run every kernel on the host (sequential "
                     "loops over blocks and threads, host memory) and lower "
                     "like ttt-to-cpu, so the mapping can be checked "
                     "numerically on machines without a GPU"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory for ptxas/fatbinary and "
                     "libdevice (default: found through PATH, CUDA_ROOT, "
                     "CUDA_HOME or CUDA_PATH)"),
      llvm::cl::init("")};
};

/// The openmp default of programs JIT-run on this machine (ttt-run, the
/// Python package): on when it has more than one core. ttt-opt keeps the
/// option's own default, so that its output does not depend on the machine.
bool isOpenMPDefaultOnHost();

/// Lowers the project's own dialects (ttt, linattn) to upstream
/// func/tensor/linalg/scf/arith/math ops. The first step of every pipeline.
/// `scan` is linattn-to-linalg's chunk-state scan: "per-entry" (for the
/// GPU: a kernel with a thread per state entry), "parallel" (log-depth,
/// for the GPU) or "sequential" (one pass over the states, for the CPU).
void addTTTToUpstreamPasses(OpPassManager &pm, StringRef scan = "parallel");

/// Builds `ttt-to-cpu`: from a module of func/tensor/linalg/scf/arith/math
/// ops on (possibly dynamically shaped) tensors, or of ttt ops, down to the
/// LLVM dialect, ready for mlir-translate or the ExecutionEngine. Public
/// functions keep their names and take and return memrefs with the identity
/// layout; returned buffers are freshly allocated with malloc and owned by
/// the caller.
void buildTTTToCPUPipeline(OpPassManager &pm, const TTTToCPUOptions &options);

/// Builds `ttt-to-gpu`: from the same input as `ttt-to-cpu` down to the LLVM
/// dialect for the host plus one `gpu.binary` per kernel for NVIDIA GPUs
/// (gpu -> NVVM -> PTX/cubin). Every linalg op becomes a kernel launch: the
/// parallel dimensions of its loop nest map onto blocks and threads (see
/// ttt-gpu-map-parallel-loops in ttt/Conversion/Passes.td); sequential loops
/// (the chunk scan, the recurrent reference's chunk loop and per-stream loop)
/// stay on the host and launch kernels.
///
/// Memory: every buffer the program allocates, and a copy of every argument,
/// is CUDA managed memory, obtained through `_mlir_memref_to_llvm_alloc` /
/// `_mlir_memref_to_llvm_free`, which the GPU runtime
/// (libttt_cuda_runtime.so) provides along with the `mgpu*` functions the
/// host code calls. Public functions keep the ttt-to-cpu calling convention
/// (identity-layout memref descriptors of host memory in, fresh buffers out),
/// except that returned buffers must be freed with
/// `_mlir_memref_to_llvm_free`.
void buildTTTToGPUPipeline(OpPassManager &pm, const TTTToGPUOptions &options);

/// The first steps of `ttt-onnx-optimize`: raise the TTT layers of an
/// imported ONNX model and rewrite the linear-attention ones into linattn ops
/// (which the C++ API shows when asked for MLIR). With `explain`, the raise
/// also names rejected candidates and ttt-explain reports on every raised
/// layer before the rewrite.
void addTTTONNXRewritePasses(OpPassManager &pm, bool explain = false);

/// linalg in, linalg out: raise the TTT layers of linalg-on-tensors
/// functions, rewrite the linear-attention ones into their chunk-parallel
/// form and the others into their recurrent reference, in upstream dialects.
void buildTTTOptimizeLinalgPipeline(OpPassManager &pm);

/// ONNX in, ONNX out: raise TTT layers, rewrite the linear-attention ones,
/// export them as standard ONNX nodes. Layers that cannot be rewritten
/// exactly stay as they were (each gets a remark). `explain` as above.
void buildTTTONNXOptimizePipeline(OpPassManager &pm, bool explain = false);

/// The same with passes on ttt layer ops (ttt-simplify with the paper's
/// variants), which `addLayerPasses` adds, run on every layer the raise
/// reads, rewritable or not, before the rewrite. A layer that is still not
/// linear attention afterwards keeps its original nodes (ttt.raised,
/// ttt-resolve-raised). Fails if `addLayerPasses` does.
LogicalResult buildTTTONNXOptimizePipeline(
    OpPassManager &pm, bool explain,
    function_ref<LogicalResult(OpPassManager &)> addLayerPasses);

/// Registers the pipelines with the global pass registry (`ttt-to-cpu`,
/// `ttt-to-gpu`, `ttt-onnx-optimize`, `ttt-optimize-linalg`). Their passes,
/// the GPU pipeline's own steps (`ttt-gpu-*`) included, are registered by
/// registerAllTTTPasses (ttt/InitAllPasses.h). Safe to call more than once.
void registerTTTPipelines();

} // namespace mlir::ttt

#endif // TTT_PIPELINES_PIPELINES_H
