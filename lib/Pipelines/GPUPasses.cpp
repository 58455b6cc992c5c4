//===- GPUPasses.cpp - the steps of the ttt-to-gpu pipeline ---------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "GPUPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"

using namespace mlir;

namespace {

//===----------------------------------------------------------------------===//
// ttt-gpu-bf16-operands
//===----------------------------------------------------------------------===//

struct GPUBf16OperandsPass : PassWrapper<GPUBf16OperandsPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GPUBf16OperandsPass)

  StringRef getArgument() const final { return "ttt-gpu-bf16-operands"; }
  StringRef getDescription() const final {
    return "Round the f32 operands of products in contractions to bf16 "
           "(fp32 accumulation)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }

  void runOnOperation() override {
    getOperation()->walk([](linalg::GenericOp op) {
      if (op.getNumReductionLoops() == 0)
        return;
      Block *body = op.getBody();
      unsigned numInputs = op.getNumDpsInputs();
      Type f32 = Float32Type::get(op.getContext());
      Type bf16 = BFloat16Type::get(op.getContext());
      // One rounded copy per input argument, made at the top of the body.
      DenseMap<Value, Value> rounded;
      auto getRounded = [&](BlockArgument arg) {
        Value &value = rounded[arg];
        if (!value) {
          OpBuilder b = OpBuilder::atBlockBegin(body);
          Value narrow = arith::TruncFOp::create(b, op.getLoc(), bf16, arg);
          value = arith::ExtFOp::create(b, op.getLoc(), f32, narrow);
        }
        return value;
      };
      SmallVector<arith::MulFOp> products;
      body->walk([&](arith::MulFOp mul) { products.push_back(mul); });
      for (arith::MulFOp mul : products) {
        for (OpOperand &operand : mul->getOpOperands()) {
          auto arg = dyn_cast<BlockArgument>(operand.get());
          if (!arg || arg.getOwner() != body ||
              arg.getArgNumber() >= numInputs || arg.getType() != f32)
            continue;
          operand.set(getRounded(arg));
        }
      }
    });
  }
};

//===----------------------------------------------------------------------===//
// ttt-gpu-prepare-linalg
//===----------------------------------------------------------------------===//

struct GPUPrepareLinalgPass
    : PassWrapper<GPUPrepareLinalgPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GPUPrepareLinalgPass)

  StringRef getArgument() const final { return "ttt-gpu-prepare-linalg"; }
  StringRef getDescription() const final {
    return "Make every copy and linalg op on buffers a linalg.generic whose "
           "parallel loops come first, ready to become one kernel each";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect, scf::SCFDialect>();
  }

  static bool onHost(Operation *op) {
    return !op->getParentOfType<gpu::GPUModuleOp>() &&
           !op->getParentOfType<gpu::LaunchOp>();
  }

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Copies run as kernels like every other linalg op, not on the host.
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp op) {
      if (onHost(op))
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      rewriter.setInsertionPoint(op);
      linalg::CopyOp::create(rewriter, op.getLoc(), ValueRange{op.getSource()},
                             ValueRange{op.getTarget()});
      rewriter.eraseOp(op);
    }
    // Named ops as generics.
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::GenericOp>(op) && onHost(op))
        named.push_back(op);
    });
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op->emitError("ttt-to-gpu: cannot generalize this op");
        return signalPassFailure();
      }
    }
    // Parallel loops first: convert-linalg-to-parallel-loops makes one
    // scf.parallel of the leading parallel loops, which becomes the kernel;
    // a reduction loop in front would stay a host loop around a launch per
    // step.
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (onHost(op))
        generics.push_back(op);
    });
    for (linalg::GenericOp op : generics) {
      // A full reduction has no parallel loop to map; one thread does it on
      // the device, in a one-iteration scf.parallel (rather than the host,
      // which would pull the data back from the device).
      if (op.getNumParallelLoops() == 0 && op.getNumLoops() > 0) {
        rewriter.setInsertionPoint(op);
        Location loc = op.getLoc();
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
        auto single = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                              ValueRange{one}, ValueRange{one});
        op->moveBefore(single.getBody()->getTerminator());
        continue;
      }
      SmallVector<unsigned> order;
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      for (auto [i, kind] : llvm::enumerate(iterators))
        if (kind == utils::IteratorType::parallel)
          order.push_back(i);
      for (auto [i, kind] : llvm::enumerate(iterators))
        if (kind != utils::IteratorType::parallel)
          order.push_back(i);
      bool identity = true;
      for (auto [i, dim] : llvm::enumerate(order))
        identity &= i == dim;
      if (identity)
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op->emitError("ttt-to-gpu: cannot move the parallel loops first");
        return signalPassFailure();
      }
    }
  }
};

//===----------------------------------------------------------------------===//
// ttt-gpu-map-parallel-loops
//===----------------------------------------------------------------------===//

struct GPUMapParallelLoopsPass
    : PassWrapper<GPUMapParallelLoopsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GPUMapParallelLoopsPass)

  GPUMapParallelLoopsPass() = default;
  GPUMapParallelLoopsPass(const GPUMapParallelLoopsPass &other)
      : PassWrapper(other) {}
  GPUMapParallelLoopsPass(unsigned x, unsigned y) {
    tileX = x;
    tileY = y;
  }

  StringRef getArgument() const final { return "ttt-gpu-map-parallel-loops"; }
  StringRef getDescription() const final {
    return "Map outermost scf.parallel loops onto GPU blocks and threads "
           "(gpu.launch)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, gpu::GPUDialect, scf::SCFDialect>();
    // What the rest of ttt-to-gpu needs from the context, so that any tool
    // (ttt-opt, the mlir-opt plug-in, ttt-run) can run the pipeline:
    // gpu-module-to-binary serializes kernels through the NVVM target and
    // the LLVM IR translation, and the host's gpu.binary / launch_func ops
    // translate through the GPU offloading interface.
    NVVM::registerNVVMTargetInterfaceExternalModels(registry);
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerNVVMDialectTranslation(registry);
    registerGPUDialectTranslation(registry);
    gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  }

  Option<unsigned> tileX{*this, "tile-x",
                         llvm::cl::desc("Threads per block along the "
                                        "innermost parallel dimension"),
                         llvm::cl::init(32)};
  Option<unsigned> tileY{*this, "tile-y",
                         llvm::cl::desc("Threads per block along the second "
                                        "innermost parallel dimension"),
                         llvm::cl::init(8)};

  void runOnOperation() override {
    uint64_t x = tileX, y = tileY;
    if (x == 0 || y == 0 || x * y > 1024) {
      getOperation().emitError()
          << "ttt-to-gpu: tile-x * tile-y must be 1 to 1024 threads per "
             "block, got "
          << x << " x " << y;
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> roots;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>() || op.getNumReductions())
        return;
      roots.push_back(op);
    });
    for (scf::ParallelOp op : roots)
      mapToLaunch(op);
  }

  void mapToLaunch(scf::ParallelOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(b, loc, value);
    };
    auto ceilDiv = [&](Value a, Value d) -> Value {
      Value one = constant(1);
      Value sum = arith::AddIOp::create(b, loc, a,
                                        arith::SubIOp::create(b, loc, d, one));
      return arith::DivUIOp::create(b, loc, sum, d);
    };
    Value zero = constant(0), one = constant(1);

    // Trip counts of each dimension (0 for empty ranges); steps are positive.
    unsigned n = op.getNumLoops();
    SmallVector<Value> trips;
    for (unsigned i = 0; i < n; ++i) {
      Value span = arith::SubIOp::create(b, loc, op.getUpperBound()[i],
                                         op.getLowerBound()[i]);
      span = arith::MaxSIOp::create(b, loc, span, zero);
      trips.push_back(ceilDiv(span, op.getStep()[i]));
    }
    int64_t threadsX = n >= 2 ? tileX : tileX * tileY;
    int64_t threadsY = n >= 2 ? tileY : 1;
    Value tx = constant(threadsX), ty = constant(threadsY);
    Value tilesX = ceilDiv(trips[n - 1], tx);
    Value tilesY = n >= 2 ? ceilDiv(trips[n - 2], ty) : one;
    Value blocks = arith::MulIOp::create(b, loc, tilesX, tilesY);
    for (unsigned i = 0; i + 2 < n; ++i)
      blocks = arith::MulIOp::create(b, loc, blocks, trips[i]);
    // At least one block (CUDA rejects empty grids), at most the limit of
    // gridDim.x; the grid-stride loop below covers the rest.
    Value grid = arith::MinUIOp::create(b, loc, blocks,
                                        constant((int64_t(1) << 31) - 1));
    grid = arith::MaxUIOp::create(b, loc, grid, one);

    auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, tx, ty, one);
    Block &body = launch.getBody().front();
    b.setInsertionPointToStart(&body);
    gpu::TerminatorOp::create(b, loc);
    b.setInsertionPointToStart(&body);
    Value threadX = launch.getThreadIds().x;
    Value threadY = launch.getThreadIds().y;
    auto stride = scf::ForOp::create(b, loc, launch.getBlockIds().x, blocks,
                                     launch.getGridSize().x);
    b.setInsertionPointToStart(stride.getBody());
    // block -> (d0, ..., d(n-3), tile y, tile x), last fastest.
    Value rest = stride.getInductionVar();
    Value tileXIndex = arith::RemUIOp::create(b, loc, rest, tilesX);
    rest = arith::DivUIOp::create(b, loc, rest, tilesX);
    Value tileYIndex = arith::RemUIOp::create(b, loc, rest, tilesY);
    rest = arith::DivUIOp::create(b, loc, rest, tilesY);
    SmallVector<Value> index(n);
    for (int i = int(n) - 3; i >= 0; --i) {
      index[i] = i == 0 ? rest : arith::RemUIOp::create(b, loc, rest, trips[i]);
      if (i > 0)
        rest = arith::DivUIOp::create(b, loc, rest, trips[i]);
    }
    index[n - 1] = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, tileXIndex, tx), threadX);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         index[n - 1], trips[n - 1]);
    if (n >= 2) {
      index[n - 2] = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tileYIndex, ty), threadY);
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index[n - 2],
                                trips[n - 2]));
    }
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    IRMapping mapping;
    for (unsigned i = 0; i < n; ++i) {
      Value scaled = arith::MulIOp::create(b, loc, index[i], op.getStep()[i]);
      mapping.map(op.getInductionVars()[i],
                  arith::AddIOp::create(b, loc, op.getLowerBound()[i], scaled)
                      .getResult());
    }
    for (Operation &inner : op.getBody()->without_terminator())
      b.clone(inner, mapping);
    op.erase();
  }
};

//===----------------------------------------------------------------------===//
// ttt-gpu-host-boundary
//===----------------------------------------------------------------------===//

struct GPUHostBoundaryPass
    : PassWrapper<GPUHostBoundaryPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GPUHostBoundaryPass)

  StringRef getArgument() const final { return "ttt-gpu-host-boundary"; }
  StringRef getDescription() const final {
    return "Copy the memref arguments and globals of public functions into "
           "fresh (device-accessible) buffers at entry";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<memref::MemRefDialect>();
  }

  /// A fresh identity-layout buffer with the contents of `source`, made at
  /// `b`'s insertion point.
  static Value copyOf(OpBuilder &b, Location loc, Value source) {
    auto type = cast<MemRefType>(source.getType());
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dynamicSizes.push_back(memref::DimOp::create(b, loc, source, i));
    auto bufferType =
        MemRefType::get(type.getShape(), type.getElementType(),
                        MemRefLayoutAttrInterface(), type.getMemorySpace());
    Value buffer = memref::AllocOp::create(b, loc, bufferType, dynamicSizes);
    memref::CopyOp::create(b, loc, source, buffer);
    return buffer;
  }

  /// Whether the program may write to (a view of) `buffer`: any user that
  /// writes it, or that it does not understand, counts.
  static bool mayBeWritten(Value buffer, Operation *ignored) {
    SmallVector<Value> worklist{buffer};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (user == ignored)
          continue;
        if (isa<ViewLikeOpInterface>(user) ||
            isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(
                user)) {
          for (Value result : user->getResults())
            worklist.push_back(result);
          continue;
        }
        if (isa<memref::DeallocOp>(user))
          return true;
        auto effects = dyn_cast<MemoryEffectOpInterface>(user);
        if (!effects) {
          // Ops with regions (loops, launches) are judged by their bodies.
          if (user->getNumRegions() &&
              user->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
            continue;
          return true;
        }
        SmallVector<MemoryEffects::EffectInstance> list;
        effects.getEffectsOnValue(value, list);
        for (const MemoryEffects::EffectInstance &effect : list)
          if (isa<MemoryEffects::Write, MemoryEffects::Free>(
                  effect.getEffect()))
            return true;
      }
    }
    return false;
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      Location loc = func.getLoc();
      SmallVector<Value> copies;
      // (copy, argument) for arguments the program writes to: the caller
      // sees the writes, as without the copy.
      SmallVector<std::pair<Value, Value>> copyBack;
      // Arguments of public functions come from the caller's (host) memory;
      // private functions get buffers from their callers in this module.
      for (BlockArgument arg : entry.getArguments()) {
        auto type = dyn_cast<MemRefType>(arg.getType());
        if (!func.isPublic() || !type || arg.use_empty())
          continue;
        if (!type.getLayout().isIdentity()) {
          func.emitError() << "ttt-to-gpu: argument " << arg.getArgNumber()
                           << " has a non-identity layout (" << type
                           << "); public functions take plain buffers";
          return signalPassFailure();
        }
        SmallVector<OpOperand *> uses;
        for (OpOperand &use : arg.getUses())
          uses.push_back(&use);
        Value copy = copyOf(b, loc, arg);
        for (OpOperand *use : uses)
          use->set(copy);
        copies.push_back(copy);
        // copyOf's memref.copy is the last op it made.
        if (mayBeWritten(copy, &*std::prev(b.getInsertionPoint())))
          copyBack.push_back({copy, arg});
      }
      // Globals (bufferized constants) live in host memory: one copy each,
      // made once at entry, in every function.
      SmallVector<memref::GetGlobalOp> globals;
      func.walk([&](memref::GetGlobalOp op) { globals.push_back(op); });
      for (memref::GetGlobalOp global : globals) {
        OpBuilder::InsertionGuard guard(b);
        Operation *moved = global->clone();
        b.insert(moved);
        Value copy = copyOf(b, global.getLoc(), moved->getResult(0));
        Value result = global.getResult();
        if (copy.getType() != result.getType())
          copy = memref::CastOp::create(b, global.getLoc(), result.getType(),
                                        copy);
        result.replaceAllUsesWith(copy);
        global.erase();
        copies.push_back(copy);
      }
      if (copies.empty())
        continue;
      func.walk([&](func::ReturnOp ret) {
        OpBuilder rb(ret);
        for (auto [copy, arg] : copyBack)
          memref::CopyOp::create(rb, ret.getLoc(), copy, arg);
        for (Value copy : copies)
          memref::DeallocOp::create(rb, ret.getLoc(), copy);
      });
    }
  }
};

//===----------------------------------------------------------------------===//
// ttt-gpu-merge-modules
//===----------------------------------------------------------------------===//

struct GPUMergeModulesPass
    : PassWrapper<GPUMergeModulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GPUMergeModulesPass)

  StringRef getArgument() const final { return "ttt-gpu-merge-modules"; }
  StringRef getDescription() const final {
    return "Move every outlined kernel into one gpu.module (one binary, one "
           "ptxas run, one module load)";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto modules = llvm::to_vector(module.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    gpu::GPUModuleOp target = modules.front();
    if (target.getOffloadingHandlerAttr())
      return; // hand-written modules with their own handlers stay apart
    SymbolTable symbols(target);
    // (module, kernel) -> new kernel name in the target module.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp source : llvm::drop_begin(modules)) {
      if (source.getTargetsAttr() != target.getTargetsAttr() ||
          source.getOffloadingHandlerAttr())
        continue;
      for (Operation &op :
           llvm::make_early_inc_range(source.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(&op);
        if (!symbol)
          continue;
        StringAttr name = symbol.getNameAttr();
        if (isa<gpu::GPUFuncOp>(op)) {
          // Outlined kernels all share their function's name; the modules'
          // names are unique.
          if (symbols.lookup(name))
            SymbolTable::setSymbolName(&op, source.getNameAttr());
          op.moveBefore(target.getBody(), target.getBody()->end());
          symbols.insert(&op); // renames further if it still clashes
          renamed[{source.getNameAttr(), name}] =
              SymbolTable::getSymbolName(&op);
          continue;
        }
        if (Operation *existing = symbols.lookup(name)) {
          // Outlining clones the same callee into every module using it.
          if (!isa<FunctionOpInterface>(existing) ||
              !isa<FunctionOpInterface>(op)) {
            op.emitError("ttt-gpu-merge-modules: symbol clash");
            return signalPassFailure();
          }
          continue;
        }
        op.moveBefore(target.getBody(), target.getBody()->end());
        symbols.insert(&op);
      }
      source.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it =
          renamed.find({launch.getKernelModuleName(), launch.getKernelName()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          target.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};

//===----------------------------------------------------------------------===//
// ttt-gpu-launch-to-loops (host emulation, for testing)
//===----------------------------------------------------------------------===//

struct GPULaunchToLoopsPass
    : PassWrapper<GPULaunchToLoopsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GPULaunchToLoopsPass)

  StringRef getArgument() const final { return "ttt-gpu-launch-to-loops"; }
  StringRef getDescription() const final {
    return "Run gpu.launch bodies on the host: sequential loops over blocks "
           "and threads (a testing aid for kernels without barriers or "
           "shared memory)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, scf::SCFDialect>();
  }

  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches) {
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
          launch.hasClusterSize() || launch.getDynamicSharedMemorySize() ||
          !launch.getWorkgroupAttributions().empty() ||
          !launch.getPrivateAttributions().empty() ||
          !llvm::hasSingleElement(launch.getBody())) {
        launch.emitError("ttt-gpu-launch-to-loops: only synchronous "
                         "single-block launches without attributions");
        return signalPassFailure();
      }
      bool hasBarrier = false;
      launch.walk([&](gpu::BarrierOp) { hasBarrier = true; });
      if (hasBarrier) {
        launch.emitError("ttt-gpu-launch-to-loops: barriers need threads");
        return signalPassFailure();
      }
      OpBuilder b(launch);
      Location loc = launch.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      IRMapping mapping;
      gpu::KernelDim3 gridArgs = launch.getGridSize();
      gpu::KernelDim3 blockArgs = launch.getBlockSize();
      mapping.map(gridArgs.x, grid.x);
      mapping.map(gridArgs.y, grid.y);
      mapping.map(gridArgs.z, grid.z);
      mapping.map(blockArgs.x, block.x);
      mapping.map(blockArgs.y, block.y);
      mapping.map(blockArgs.z, block.z);
      gpu::KernelDim3 blockIds = launch.getBlockIds();
      gpu::KernelDim3 threadIds = launch.getThreadIds();
      std::pair<Value, Value> loops[] = {
          {blockIds.z, grid.z},   {blockIds.y, grid.y},
          {blockIds.x, grid.x},   {threadIds.z, block.z},
          {threadIds.y, block.y}, {threadIds.x, block.x}};
      for (auto [id, size] : loops) {
        auto loop = scf::ForOp::create(b, loc, zero, size, one);
        mapping.map(id, loop.getInductionVar());
        b.setInsertionPointToStart(loop.getBody());
      }
      for (Operation &op : launch.getBody().front().without_terminator())
        b.clone(op, mapping);
      launch.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::ttt::createGPUMergeModulesPass() {
  return std::make_unique<GPUMergeModulesPass>();
}

std::unique_ptr<Pass> mlir::ttt::createGPULaunchToLoopsPass() {
  return std::make_unique<GPULaunchToLoopsPass>();
}

std::unique_ptr<Pass> mlir::ttt::createGPUBf16OperandsPass() {
  return std::make_unique<GPUBf16OperandsPass>();
}

std::unique_ptr<Pass> mlir::ttt::createGPUPrepareLinalgPass() {
  return std::make_unique<GPUPrepareLinalgPass>();
}

std::unique_ptr<Pass> mlir::ttt::createGPUMapParallelLoopsPass(unsigned tileX,
                                                               unsigned tileY) {
  return std::make_unique<GPUMapParallelLoopsPass>(tileX, tileY);
}

std::unique_ptr<Pass> mlir::ttt::createGPUHostBoundaryPass() {
  return std::make_unique<GPUHostBoundaryPass>();
}

void mlir::ttt::registerGPUPipelinePasses() {
  PassRegistration<GPUBf16OperandsPass>();
  PassRegistration<GPUPrepareLinalgPass>();
  PassRegistration<GPUMapParallelLoopsPass>();
  PassRegistration<GPUHostBoundaryPass>();
  PassRegistration<GPUMergeModulesPass>();
  PassRegistration<GPULaunchToLoopsPass>();
}
