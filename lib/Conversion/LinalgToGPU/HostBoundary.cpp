//===- HostBoundary.cpp - kernels see no host-only memory -----------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `ttt-gpu-host-boundary` (on buffers, after bufferization and
// deallocation): every public function copies its memref arguments, and
// every function the globals (memref.get_global) it uses, into fresh
// buffers at entry, so that kernels never see host-only memory once
// memref.alloc means device-accessible managed memory. The copies are freed
// before returning; arguments the program may write to are copied back
// first.
//
//===----------------------------------------------------------------------===//

#include "ttt/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::ttt {
#define GEN_PASS_DEF_TTTGPUHOSTBOUNDARY
#include "ttt/Conversion/Passes.h.inc"
} // namespace mlir::ttt

using namespace mlir;

namespace {
struct TTTGPUHostBoundaryPass
    : public ttt::impl::TTTGPUHostBoundaryBase<TTTGPUHostBoundaryPass> {
  using Base::Base;

  /// Copies `source` into `target` (same shape, identity layouts); returns
  /// the op that writes `target`. A gpu.memcpy runs on a stream of its own,
  /// waited for at once: gpu-to-llvm lowers only the async form.
  Operation *emitCopy(OpBuilder &b, Location loc, Value source,
                      Value target) const {
    if (!gpuMemcpy)
      return memref::CopyOp::create(b, loc, source, target);
    Type token = gpu::AsyncTokenType::get(b.getContext());
    Value stream =
        gpu::WaitOp::create(b, loc, token, ValueRange()).getResult(0);
    auto copy = gpu::MemcpyOp::create(b, loc, token, ValueRange{stream}, target,
                                      source);
    gpu::WaitOp::create(b, loc, Type(), ValueRange{copy.getAsyncToken()});
    return copy;
  }

  /// A fresh identity-layout buffer with the contents of `source`, made at
  /// `b`'s insertion point, and the op that copies them there.
  std::pair<Value, Operation *> copyOf(OpBuilder &b, Location loc,
                                       Value source) const {
    auto type = cast<MemRefType>(source.getType());
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dynamicSizes.push_back(memref::DimOp::create(b, loc, source, i));
    auto bufferType =
        MemRefType::get(type.getShape(), type.getElementType(),
                        MemRefLayoutAttrInterface(), type.getMemorySpace());
    Value buffer = memref::AllocOp::create(b, loc, bufferType, dynamicSizes);
    Operation *copy = emitCopy(b, loc, source, buffer);
    return {buffer, copy};
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
        auto [copy, copyIn] = copyOf(b, loc, arg);
        for (OpOperand *use : uses)
          use->set(copy);
        copies.push_back(copy);
        if (mayBeWritten(copy, copyIn))
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
        Value copy = copyOf(b, global.getLoc(), moved->getResult(0)).first;
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
        for (auto [buffer, arg] : copyBack)
          emitCopy(rb, ret.getLoc(), buffer, arg);
        for (Value buffer : copies)
          memref::DeallocOp::create(rb, ret.getLoc(), buffer);
      });
    }
  }
};
} // namespace
