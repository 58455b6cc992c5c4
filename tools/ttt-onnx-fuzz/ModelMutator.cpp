//===- ModelMutator.cpp - structure-aware mutations of ONNX models --------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Byte-level mutations rarely get past protobuf parsing and the checker, so
// half of the time the fuzzer edits the parsed model instead: it changes an
// attribute value, an op type, a node input or output, an initializer's
// shape or type, a declared input type or an opset version, the mistakes
// and corner cases that exporters and hand-edited models make.
//
//===----------------------------------------------------------------------===//

#include "ModelMutator.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Rng = std::minstd_rand;

/// Op types with attributes or subgraphs that inference and the reader treat
/// specially (axes, perms, shapes, bodies).
const char *const kOpTypes[] = {"Transpose",
                                "Gather",
                                "Concat",
                                "Split",
                                "Squeeze",
                                "Unsqueeze",
                                "Reshape",
                                "Slice",
                                "Softmax",
                                "Flatten",
                                "ReduceSum",
                                "ReduceMean",
                                "CumSum",
                                "Pad",
                                "Expand",
                                "Tile",
                                "Einsum",
                                "Gemm",
                                "MatMul",
                                "Loop",
                                "If",
                                "Scan",
                                "Identity",
                                "Cast",
                                "TopK",
                                "ArgMax",
                                "OneHot",
                                "Range",
                                "Resize",
                                "GatherND",
                                "ScatterND",
                                "LayerNormalization",
                                "ConstantOfShape",
                                "Constant",
                                "Dropout",
                                "Where",
                                "Trilu",
                                "DepthToSpace",
                                "Conv",
                                "LSTM"};

const int64_t kIntegers[] = {0,
                             1,
                             -1,
                             2,
                             -2,
                             3,
                             7,
                             64,
                             1 << 20,
                             std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min()};

template <typename T, size_t N> const T &pick(Rng &rng, const T (&array)[N]) {
  return array[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

size_t below(Rng &rng, size_t n) {
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

void collectGraphs(onnx::GraphProto &graph,
                   std::vector<onnx::GraphProto *> &graphs) {
  graphs.push_back(&graph);
  for (onnx::NodeProto &node : *graph.mutable_node())
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        collectGraphs(*attr.mutable_g(), graphs);
      for (onnx::GraphProto &sub : *attr.mutable_graphs())
        collectGraphs(sub, graphs);
    }
}

/// Every value name of `graph` (inputs, initializers, node outputs).
std::vector<std::string> valueNames(const onnx::GraphProto &graph) {
  std::vector<std::string> names;
  for (const auto &info : graph.input())
    names.push_back(info.name());
  for (const auto &tensor : graph.initializer())
    names.push_back(tensor.name());
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      names.push_back(output);
  return names;
}

void mutateAttribute(onnx::AttributeProto &attr, Rng &rng) {
  switch (below(rng, 6)) {
  case 0:
    attr.set_i(pick(rng, kIntegers));
    break;
  case 1:
    if (attr.ints_size()) {
      // One draw per statement: argument order is unspecified in C++.
      int index = static_cast<int>(below(rng, attr.ints_size()));
      attr.set_ints(index, pick(rng, kIntegers));
    } else
      attr.add_ints(pick(rng, kIntegers));
    break;
  case 2:
    attr.set_f(static_cast<float>(pick(rng, kIntegers)) * 0.5f);
    break;
  case 3:
    attr.set_type(
        static_cast<onnx::AttributeProto::AttributeType>(below(rng, 15)));
    break;
  case 4:
    if (attr.ints_size())
      attr.mutable_ints()->RemoveLast();
    break;
  default:
    attr.set_s(pick(rng, kOpTypes));
    break;
  }
}

void mutateNode(onnx::GraphProto &graph, onnx::NodeProto &node, Rng &rng) {
  std::vector<std::string> names = valueNames(graph);
  switch (below(rng, 7)) {
  case 0:
    node.set_op_type(pick(rng, kOpTypes));
    break;
  case 1:
    if (node.attribute_size())
      mutateAttribute(
          *node.mutable_attribute(below(rng, node.attribute_size())), rng);
    break;
  case 2: {
    onnx::AttributeProto *attr = node.add_attribute();
    const char *const kNames[] = {"axis",     "axes",  "perm",
                                  "keepdims", "split", "num_scan_inputs",
                                  "to",       "mode",  "epsilon"};
    attr->set_name(pick(rng, kNames));
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(pick(rng, kIntegers));
    break;
  }
  case 3:
    if (node.input_size())
      node.mutable_input()->RemoveLast();
    break;
  case 4:
    if (!names.empty())
      node.add_input(names[below(rng, names.size())]);
    break;
  case 5:
    if (node.input_size() && !names.empty()) {
      int index = static_cast<int>(below(rng, node.input_size()));
      std::string input = below(rng, 4) ? names[below(rng, names.size())] : "";
      node.set_input(index, input);
    }
    break;
  default:
    if (node.output_size() && below(rng, 2))
      node.mutable_output()->RemoveLast();
    else
      node.add_output(below(rng, 2) && !names.empty()
                          ? names[below(rng, names.size())]
                          : "fuzz_out");
    break;
  }
}

void mutateTensor(onnx::TensorProto &tensor, Rng &rng) {
  switch (below(rng, 4)) {
  case 0:
    if (tensor.dims_size()) {
      int index = static_cast<int>(below(rng, tensor.dims_size()));
      tensor.set_dims(index, pick(rng, kIntegers));
    }
    break;
  case 1:
    tensor.add_dims(below(rng, 3));
    break;
  case 2:
    tensor.set_data_type(static_cast<int32_t>(below(rng, 18)));
    break;
  default:
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    break;
  }
}

void mutateValueInfo(onnx::ValueInfoProto &info, Rng &rng) {
  onnx::TypeProto::Tensor *tensor = info.mutable_type()->mutable_tensor_type();
  switch (below(rng, 4)) {
  case 0:
    tensor->set_elem_type(static_cast<int32_t>(below(rng, 18)));
    break;
  case 1:
    tensor->mutable_shape()->add_dim()->set_dim_value(pick(rng, kIntegers));
    break;
  case 2:
    tensor->clear_shape();
    break;
  default:
    info.mutable_type()->mutable_sequence_type();
    break;
  }
}

} // namespace

size_t mlir::ttt::fuzz::mutateModel(uint8_t *data, size_t size, size_t maxSize,
                                    unsigned seed) {
  ::onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)))
    return 0;
  Rng rng(seed);
  std::vector<::onnx::GraphProto *> graphs;
  collectGraphs(*model.mutable_graph(), graphs);
  ::onnx::GraphProto &graph = *graphs[below(rng, graphs.size())];

  switch (below(rng, 6)) {
  case 0:
  case 1:
  case 2:
    if (graph.node_size())
      mutateNode(graph, *graph.mutable_node(below(rng, graph.node_size())),
                 rng);
    break;
  case 3:
    if (graph.initializer_size())
      mutateTensor(
          *graph.mutable_initializer(below(rng, graph.initializer_size())),
          rng);
    break;
  case 4:
    if (graph.input_size())
      mutateValueInfo(*graph.mutable_input(below(rng, graph.input_size())),
                      rng);
    break;
  default:
    if (model.opset_import_size())
      model.mutable_opset_import(below(rng, model.opset_import_size()))
          ->set_version(pick(rng, kIntegers) % 40);
    break;
  }
  std::string bytes = model.SerializeAsString();
  if (bytes.size() > maxSize)
    return 0;
  std::copy(bytes.begin(), bytes.end(), data);
  return bytes.size();
}
