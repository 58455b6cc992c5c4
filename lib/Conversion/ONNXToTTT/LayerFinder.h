//===- LayerFinder.h - TTT-KVB layers in an imported ONNX graph -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Finds test-time-training layers from the dataflow of an `onnx.graph`, not
// from node names or one exporter's op sequence:
//
//  - an unrolled chunk loop (traced export) is a Concat over the time axis
//    of chunk outputs o_0 .. o_{n-1} where each o_i reads, besides its own
//    query chunk, weights that differ from chunk to chunk (the fast weights
//    that the earlier chunks trained);
//  - a scripted chunk loop is an ONNX Loop whose body appends a chunk output
//    to a sequence and reads loop-carried weights;
//  - a full-batch layer (LaCT-NVS, ViT^3) applies weights computed from the
//    keys and values to the queries.
//
// A chunk's *query path* is what depends on the chunk's query slice, the one
// Slice that only this chunk's output reads; the *weights read* are the other
// (non-scalar) operands of query-path nodes. The finder then asks the two
// questions the theorems need (docs/Theory.md section 2.1): is the output
// linear in the fast weights, and is the chunk-to-chunk update affine in them.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_CONVERSION_ONNXTOTTT_LAYERFINDER_H
#define TTT_LIB_CONVERSION_ONNXTOTTT_LAYERFINDER_H

#include "GraphQueries.h"

#include <string>
#include <vector>

namespace mlir::ttt::raise {

/// The domain of nodes that stand for ops a reader of another dialect did
/// not translate (the shadow graph of a linalg program); their doc string,
/// when set, says why. The finder names them as what blocks a proof.
inline constexpr llvm::StringLiteral kUntranslatedDomain = "ttt.opaque";

enum class LayerForm { Unrolled, Loop, FullBatch };

/// What one chunk (or the one full-batch step) computes, as graph values.
struct ChunkStep {
  /// The chunk's output.
  Value output;
  /// The Slice chains of the query chunk the output reads (empty for a
  /// full-batch layer, whose query is `query`).
  SmallVector<SliceChain> querySlices;
  /// The tensor the queries come from.
  Value query;
  /// Weights the query path reads, in a fixed visiting order.
  SmallVector<Value> weightsRead;
  /// The keys, values and learning rates of this chunk, when the query path
  /// reads them (a causal, dual-form step); the weights read then are the
  /// chunk-start state.
  SmallVector<Value> chunkData;
};

struct FoundLayer {
  LayerForm form;
  /// The node whose result is the layer's output (Concat,
  /// ConcatFromSequence, or the full-batch output's node).
  Operation *assembly = nullptr;
  Value output;
  /// The scripted form's Loop node.
  onnx::NodeOp loop;
  /// A Loop that writes each chunk's output into a buffer it carries
  /// (ScatterND, `out[:, :, s:e] = o`) rather than appending it to a
  /// sequence: the body's write, and the last chunk's write after the loop
  /// if there is one. The matcher proves that the writes tile the buffer.
  onnx::NodeOp bodyWrite, tailWrite;
  /// The permutation those writes turn each chunk output by (a [B, H, C, E]
  /// output written into a [B, T, H, E] buffer), empty if they do not: the
  /// layer's output is turned the same way.
  SmallVector<int64_t> outputPerm;
  /// Whether the writes turn each chunk's `W phi(q)^T` ([B, H, E, C], the
  /// product of a weight stored output x input) rather than its output: the
  /// steps' outputs are those products, and outputPerm turns the layer's
  /// [B, H, T, E] output.
  bool outputSwapped = false;
  /// Unrolled: one step per chunk. Loop: the body's step, then the step
  /// after the loop (the last chunk) if there is one. Full batch: one step.
  SmallVector<ChunkStep> steps;
  /// Chunk length in tokens (0 for full batch or when not a constant).
  int64_t chunkSize = 0;
  /// For each slot of `weightsRead`: the value in the first chunk, and
  /// whether it changes from chunk to chunk (a fast weight).
  SmallVector<Value> initialWeights;
  SmallVector<bool> trained;
  /// Why the layer cannot be linear attention, from the dataflow alone;
  /// empty when the theorems' conditions may hold.
  std::string blocker;

  /// "unrolled chunk loop (4 chunks of 16 tokens)" etc.
  std::string describeForm() const;
  /// "'layer.w0', 'layer.w1' (trained: 'layer.w1')" etc.
  std::string describeWeights() const;
};

/// The parallel form is written with axes-as-input Squeeze/Unsqueeze/ReduceSum
/// nodes, which exist from opset 13 on.
inline constexpr int64_t kMinExportOpset = 13;

/// The start of the doc_string of the node that carries a rewritten layer's
/// output: what follows it already is linear attention.
inline constexpr llvm::StringLiteral kRewrittenDoc =
    "ttt: parallel linear-attention form of a TTT layer, ";

/// The graph attribute by which ttt-raise-onnx-chunks hands ttt-raise-onnx
/// the layers it found and left as they are (an array of the remarks'
/// texts): reported as found, never as "no TTT layer found".
inline constexpr llvm::StringLiteral kFoundByChunkRouteAttr =
    "ttt.found_by_chunk_route";

/// Set with kFoundByChunkRouteAttr where the one layer it names was raised
/// to a layer op (and left because its analysis says so), not left as a
/// chunk loop: its account then stands over a reader that builds no layer
/// op for it.
inline constexpr llvm::StringLiteral kRaisedByChunkRouteAttr =
    "ttt.raised_by_chunk_route";

/// A node that carries state from chunk to chunk like a TTT layer, but is
/// not one, and why.
struct Candidate {
  Operation *node;
  std::string reason;
};

/// Finds every TTT layer of `graph`, outermost first. Layers inside another
/// layer's chunk are not reported twice. With `rejected`, also lists the
/// candidates that carry state but are ordinary recurrences.
std::vector<FoundLayer> findLayers(onnx::GraphOp graph, DependenceCache &deps,
                                   std::vector<Candidate> *rejected = nullptr);

/// A readable name for a graph value: its ONNX name, or the op that made it.
std::string describeValue(Value value);

} // namespace mlir::ttt::raise

#endif // TTT_LIB_CONVERSION_ONNXTOTTT_LAYERFINDER_H
