//===- DescribeLayers.cpp - what remarks call a layer's form --------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The words the canonical route's front ends (ONNX and linalg) use for a
// chunk loop and a raised layer in their remarks, so that both say the same
// of the same layer.
//
//===----------------------------------------------------------------------===//

#include "ChunkLoopForms.h"

#include "ttt/Dialect/TTT/IR/TTTOps.h"

using namespace mlir;
using namespace mlir::ttt;

std::string linalg_raise::describeLayerForm(KVBLayerOp layer) {
  ScheduleAttr schedule = layer.getSchedule();
  if (schedule.getKind() == ScheduleKind::full_batch)
    return "full-batch step";
  int64_t chunk = schedule.getSize();
  int64_t length = cast<RankedTensorType>(layer.getQ().getType()).getDimSize(2);
  std::string text = "unrolled chunk loop (";
  if (!ShapedType::isDynamic(length) && chunk > 0)
    text += std::to_string((length + chunk - 1) / chunk) + " chunks";
  else
    text += "chunks";
  text += " of " + std::to_string(chunk) + " tokens";
  if (!ShapedType::isDynamic(length) && chunk > 0 && length % chunk != 0)
    text += ", the last of " + std::to_string(length % chunk);
  return text + ")";
}

std::string linalg_raise::describeChunkLoop(ChunkLoopOp loop) {
  std::string text = "chunk loop (";
  int64_t length = ShapedType::kDynamic;
  if (!loop.getSequences().empty() && !loop.getWindowAxes().empty())
    length = cast<RankedTensorType>(loop.getSequences()[0].getType())
                 .getDimSize(loop.getWindowAxes()[0]);
  if (loop.isSingleChunk())
    text += "one chunk";
  else if (ShapedType::isDynamic(length))
    text += "chunks of " + std::to_string(loop.getChunk());
  else
    text += std::to_string((length + loop.getChunk() - 1) / loop.getChunk()) +
            " chunks of " + std::to_string(loop.getChunk()) +
            (length % loop.getChunk()
                 ? ", the last of " + std::to_string(length % loop.getChunk())
                 : "");
  return text + ", " + std::to_string(loop.getInits().size()) +
         " state values)";
}
