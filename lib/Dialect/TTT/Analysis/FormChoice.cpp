//===- FormChoice.cpp - recurrent or parallel, per layer ------------------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ttt/Dialect/TTT/Analysis/FormChoice.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <thread>

using namespace mlir;
using namespace mlir::ttt;

namespace {
/// The parallel form's time over the recurrent form's, as a constant. One
/// thread, one stream, BLAS contractions, on this project's bench machine
/// (2026-12-05): 1.3-1.7x with 512-token chunks (D = 128), 2.6-3.7x with
/// 64-token chunks and 2.4-13x with 16-token chunks (D = 64) for V2, V5,
/// V6 and MSE: its chunk states and the products over them are full-size
/// temporaries the recurrent loop never writes. On two threads only V6 with
/// 512-token chunks gained from it (4.6 against 6.2 ms); the others' parallel
/// forms barely scale (V2: 48 ms on one thread, 49 on two), so the constant
/// stays above what two cores can win back. Since a one-stream layer's GEMMs
/// are cut into blocks for the threads (ttt-contractions-to-blas), its
/// recurrent form uses the second core too: V6 at H = 1, C = 512 runs in
/// 4.6 ms recurrent against 5.3 ms parallel, and no measured shape gains.
constexpr double kParallelOverhead = 5.0;
} // namespace

unsigned mlir::ttt::getHostCores() {
  return std::max(1u, std::thread::hardware_concurrency());
}

FormChoice mlir::ttt::chooseForm(KVBLayerOp op, unsigned cores) {
  auto q = cast<RankedTensorType>(op.getQ().getType());
  FormChoice choice;
  int64_t batch = q.getDimSize(0), heads = q.getDimSize(1);
  int64_t tokens = q.getDimSize(2);
  if (ShapedType::isDynamic(batch) || ShapedType::isDynamic(heads)) {
    choice.reason = "the number of streams (B*H) is only known at run time, "
                    "and the recurrent form uses every core once B*H reaches "
                    "the core count without the parallel form's chunk-state "
                    "scan";
    return choice;
  }
  int64_t streams = batch * heads;
  if (streams >= int64_t(cores)) {
    choice.reason =
        llvm::formatv("its {0} streams (B*H) already keep the {1} cores busy, "
                      "so the parallel form's chunk-state scan would only add "
                      "work",
                      streams, cores);
    return choice;
  }
  int64_t chunk = op.getSchedule().getSize();
  if (ShapedType::isDynamic(tokens) || chunk <= 0) {
    choice.reason = llvm::formatv(
        "{0} streams use {0} of {1} cores, but the number of chunks is only "
        "known at run time",
        streams, cores);
    return choice;
  }
  int64_t chunks = (tokens + chunk - 1) / chunk;
  double usable = double(std::min<int64_t>(streams * chunks, cores));
  double speedup = usable / double(streams);
  double cost = kParallelOverhead;
  choice.parallel = speedup > cost;
  choice.reason = llvm::formatv(
      "{0} streams on {1} cores: the parallel form's {2} chunks could run "
      "{3:F1}x wider, at {4:F1}x the work and memory traffic",
      streams, cores, chunks, speedup, cost);
  return choice;
}
