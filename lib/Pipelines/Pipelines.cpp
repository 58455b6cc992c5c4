//===- Pipelines.cpp - the ttt pass pipelines -----------------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Pipelines/Pipelines.h"
#include "ttt/Conversion/Passes.h"
#include "ttt/Dialect/TTT/Analysis/FormChoice.h"
#include "ttt/Dialect/TTT/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::ttt {

bool isOpenMPDefaultOnHost() { return getHostCores() > 1; }

void addTTTToUpstreamPasses(OpPassManager &pm, StringRef scan) {
  // Every ttt layer that is still a layer op runs as its exact reference;
  // linattn ops (from ttt-to-linattn) run in their chunk-parallel form.
  pm.addPass(createTTTLowerRecurrent());
  LinAttnToLinalgOptions toLinalg;
  toLinalg.scan = scan.str();
  pm.addPass(createLinAttnToLinalg(toLinalg));
}

/// Tensors to buffers. Function boundaries are bufferized too, with plain
/// identity-layout memrefs so callers can pass dense arrays. The ownership
/// based deallocation then frees every temporary and makes every returned
/// buffer a fresh allocation owned by the caller, even when the function
/// returns an argument or a constant (it inserts a copy).
static void addBufferizationPasses(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // The reference loops carry fast weights that each chunk recomputes into a
  // fresh tensor; the deallocation pipeline below frees the old ones.
  bufferize.allowReturnAllocsFromLoops = true;
  // A value computed into a fresh tensor and then inserted into a bigger one
  // (a chunk's output into the stream's, a stream's into the layer's) is
  // computed in place in the bigger one's buffer instead of copied there.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Memrefs and scalar ops to the LLVM dialect.
static void addLLVMConversionPasses(OpPassManager &pm,
                                    const TTTToCPUOptions &options) {
  // Subviews and reshapes become plain descriptor arithmetic in affine.apply
  // ops, which lower-affine then turns into arith.
  pm.addPass(createTTTExpandRunTimeReshapes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Before scf-to-cf: scf-to-openmp wraps loop bodies in memref.alloca_scope,
  // whose region must still be a single block when it is lowered.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createSCFToControlFlowPass());
  // Math ops with an LLVM intrinsic (exp, tanh, sqrt, ...) become intrinsics;
  // the rest (erf, ...) become calls to libm, which the JIT resolves in the
  // host process.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Ops such as ceildivsi and maxnumf have no direct LLVM lowering.
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertVectorToLLVMPass());
  if (options.openmp)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void buildTTTToCPUPipeline(OpPassManager &pm, const TTTToCPUOptions &options) {
  if (options.form != LayerForm::recurrent) {
    TTTToLinAttnOptions toLinAttn;
    toLinAttn.form = options.form == LayerForm::parallel ? "parallel" : "auto";
    toLinAttn.cores = options.cores;
    pm.addPass(createTTTToLinAttn(toLinAttn));
  }
  // A CPU's threads already have the streams and state entries to share
  // out: the log-depth scan's extra rounds over every chunk state would only
  // add memory traffic (5x slower on this project's benchmark).
  addTTTToUpstreamPasses(pm, "sequential");

  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Elementwise arith/math ops on whole tensors have no bufferization of
  // their own; as linalg.generic ops they do.
  pm.addPass(createConvertElementwiseToLinalgPass());
  if (options.fuseElementwise) {
    pm.addPass(createTTTFuseElementwise());
    pm.addPass(createCanonicalizerPass());
  }
  bool blas = options.contractions == CPUContractions::blas;
  // On tensors, before bufferization, where the checks can still see which
  // sizes the ops expect of their operands.
  if (options.runtimeVerification)
    pm.addPass(createGenerateRuntimeVerificationPass());

  pm.addPass(createTTTDuplicateFills());
  addBufferizationPasses(pm);
  // A buffer written in place and then "copied" onto itself (a chunk's
  // output view, a loop's carried stream): one value once the loops' unchanged
  // iter_args fold and the equal subviews merge.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTTTDropSelfCopies());
  // Copies between strided views (a chunk state into its slot of the stacked
  // states) would otherwise be element-by-element calls of `memrefCopy`.
  pm.addPass(createTTTStridedCopiesToLinalg());
  // The per-stream scf.forall loops of the ttt lowerings become scf.parallel,
  // which runs sequentially or on OpenMP threads below.
  pm.addPass(createForallToParallelLoopPass());
  if (blas) {
    // A GEMM outside every parallel loop (a layer of one stream) shares the
    // threads out itself, in blocks.
    TTTContractionsToBLASOptions gemms;
    if (options.openmp)
      gemms.threads = options.numThreads ? unsigned(options.numThreads)
                      : options.cores    ? unsigned(options.cores)
                                         : getHostCores();
    pm.addPass(createTTTContractionsToBLAS(gemms));
  }

  // linalg ops become sequential loops, which LLVM vectorizes; inside an
  // OpenMP region's outlined body it mostly cannot, so threads share out
  // only the coarse loops: streams, batches of GEMMs, blocks of a GEMM.
  pm.addPass(createConvertLinalgToLoopsPass());
  if (options.openmp) {
    // One OpenMP region per outermost parallel loop; everything inside runs
    // sequentially on its thread.
    pm.addPass(createTTTSerializeNestedParallel());
    ConvertSCFToOpenMPPassOptions openmp;
    openmp.numThreads = options.numThreads;
    pm.addPass(createConvertSCFToOpenMPPass(openmp));
  }
  // libm's scalar exp would keep the elementwise loops from vectorizing.
  if (options.vectorizableMath)
    pm.addPass(createTTTVectorizableMath());
  // Vector ops (from user code) become loops over memrefs, then intrinsics.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  addLLVMConversionPasses(pm, options);
}

//===----------------------------------------------------------------------===//
// ttt-to-gpu
//===----------------------------------------------------------------------===//

static const char *getFormatName(GPUBinaryFormat format) {
  switch (format) {
  case GPUBinaryFormat::isa:
    return "isa";
  case GPUBinaryFormat::bin:
    return "bin";
  case GPUBinaryFormat::fatbin:
    return "fatbin";
  }
  llvm_unreachable("unknown GPU binary format");
}

static StringRef getScanName(GPUScan scan) {
  switch (scan) {
  case GPUScan::perEntry:
    return "per-entry";
  case GPUScan::parallel:
    return "parallel";
  case GPUScan::sequential:
    return "sequential";
  }
  llvm_unreachable("unknown scan strategy");
}

void buildTTTToGPUPipeline(OpPassManager &pm, const TTTToGPUOptions &options) {
  // The same linalg-on-tensors form as ttt-to-cpu, but for the scan.
  addTTTToUpstreamPasses(pm, getScanName(options.scan));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertElementwiseToLinalgPass());
  // A chain of elementwise ops is one generic, so one kernel (no launch and
  // no round trip through memory per op).
  pm.addPass(createTTTFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  if (options.precision == GPUPrecision::bf16) {
    // Named contractions (matmul, ...) as generics, whose bodies the
    // rounding step can see.
    pm.addPass(createLinalgGeneralizeNamedOpsPass());
    pm.addPass(createTTTGPUBf16Operands());
  }
  addBufferizationPasses(pm);
  if (options.contractions == GPUContractions::cublas) {
    TTTContractionsToBLASOptions library;
    library.library =
        options.precision == GPUPrecision::tf32 ? "cublas-tf32" : "cublas";
    pm.addPass(createTTTContractionsToBLAS(library));
  }

  // Foralls of scalar code (the per-entry scan) are kernels. Host side: the
  // per-stream scf.forall of the recurrent reference and every scf.for
  // (chunk loops) stay sequential loops on the host; each linalg op inside
  // them becomes one kernel launch.
  pm.addPass(createTTTGPUScalarForalls());
  pm.addPass(createForallToForLoopPass());
  pm.addPass(createTTTGPUPrepareLinalg());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  // No canonicalization in between: it would fold the one-iteration loops
  // that put full reductions on the device.
  TTTGPUMapParallelLoopsOptions mapping;
  mapping.tileX = options.tileX;
  mapping.tileY = options.tileY;
  pm.addPass(createTTTGPUMapParallelLoops(mapping));
  TTTGPUHostBoundaryOptions boundary;
  // Emulated kernels run on the host: plain copies there.
  boundary.gpuMemcpy = !options.emulate;
  pm.addPass(createTTTGPUHostBoundary(boundary));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.emulate) {
    pm.addPass(createTTTGPULaunchToLoops());
    pm.addPass(createConvertVectorToSCFPass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    addLLVMConversionPasses(pm, TTTToCPUOptions());
    return;
  }
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createTTTGPUMergeModules());

  // Both sides: structured control flow and memref metadata to plain ops.
  pm.addPass(createConvertVectorToSCFPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createTTTExpandRunTimeReshapes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(arith::createArithExpandOpsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));

  // Kernels: to NVVM (math functions through libdevice, which
  // gpu-module-to-binary links from the CUDA toolkit).
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createStripDebugInfoPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  // Host: buffers come from the GPU runtime's allocator (managed memory
  // that host and device can both use), launches become mgpu* calls.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createTTTGPULaunchStackScopes());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = getFormatName(options.format);
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void addTTTONNXRewritePasses(OpPassManager &pm, bool explain) {
  pm.addPass(createTTTRaiseONNXChunks());
  TTTRaiseONNXOptions raise;
  raise.reportCandidates = explain;
  pm.addPass(createTTTRaiseONNX(raise));
  if (explain)
    pm.addPass(createTTTExplain());
  pm.addPass(createTTTToLinAttn());
}

void buildTTTONNXOptimizePipeline(OpPassManager &pm, bool explain) {
  addTTTONNXRewritePasses(pm, explain);
  pm.addPass(createLinAttnToONNX());
}

LogicalResult buildTTTONNXOptimizePipeline(
    OpPassManager &pm, bool explain,
    function_ref<LogicalResult(OpPassManager &)> addLayerPasses) {
  // The canonical route runs the layer passes on what it raises, in its own
  // pass manager: they travel as text.
  OpPassManager layerPasses(ModuleOp::getOperationName());
  if (failed(addLayerPasses(layerPasses)))
    return failure();
  std::string pipeline;
  llvm::raw_string_ostream os(pipeline);
  for (Pass &pass : layerPasses.getPasses()) {
    os << (pipeline.empty() ? "" : ",");
    pass.printAsTextualPipeline(os);
  }
  TTTRaiseONNXChunksOptions chunks;
  chunks.layerPipeline = pipeline;
  pm.addPass(createTTTRaiseONNXChunks(chunks));
  TTTRaiseONNXOptions raise;
  raise.raiseAll = true;
  raise.keepOriginal = true;
  raise.reportCandidates = explain;
  pm.addPass(createTTTRaiseONNX(raise));
  if (failed(addLayerPasses(pm)))
    return failure();
  if (explain)
    pm.addPass(createTTTExplain());
  pm.addPass(createTTTToLinAttn());
  pm.addPass(createTTTResolveRaised());
  pm.addPass(createLinAttnToONNX());
  return success();
}

void buildTTTOptimizeLinalgPipeline(OpPassManager &pm) {
  pm.addPass(createTTTRaiseLinalg());
  pm.addPass(createTTTToLinAttn());
  addTTTToUpstreamPasses(pm, "parallel");
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void registerTTTPipelines() {
  // Registering a name twice is a fatal error, and both ttt-opt and the
  // plug-in may call this in one process.
  static bool registered = [] {
    PassPipelineRegistration<>(
        "ttt-onnx-optimize",
        "Find the TTT layers of an imported ONNX model, rewrite those that "
        "are exactly linear attention into their parallel form, and express "
        "it in standard ONNX ops (ttt-raise-onnx-chunks, ttt-raise-onnx, "
        "ttt-to-linattn, "
        "linattn-to-onnx); ttt-opt runs it by default on ONNX in, ONNX out",
        [](OpPassManager &pm) { buildTTTONNXOptimizePipeline(pm); });
    PassPipelineRegistration<>(
        "ttt-optimize-linalg",
        "Find the TTT layers of a linalg-on-tensors program, rewrite those "
        "that are exactly linear attention into their chunk-parallel form "
        "and the others into their recurrent reference, all in linalg, "
        "tensor and scf again (ttt-raise-linalg, ttt-to-linattn, "
        "ttt-lower-recurrent, linattn-to-linalg): a stage that fits between "
        "two stages of another compiler",
        buildTTTOptimizeLinalgPipeline);
    PassPipelineRegistration<TTTToCPUOptions>(
        "ttt-to-cpu",
        "Lower ttt and upstream tensor programs to the LLVM dialect for the "
        "CPU (bufferization, loops, optional OpenMP)",
        buildTTTToCPUPipeline);
    PassPipelineRegistration<TTTToGPUOptions>(
        "ttt-to-gpu",
        "Lower ttt and upstream tensor programs to host LLVM dialect plus "
        "NVIDIA GPU kernels (gpu -> NVVM -> PTX/cubin), calling the mgpu* "
        "runtime ABI",
        buildTTTToGPUPipeline);
    return true;
  }();
  (void)registered;
}

} // namespace mlir::ttt
