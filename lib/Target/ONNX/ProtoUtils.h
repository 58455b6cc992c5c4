//===- ProtoUtils.h - helpers of the ONNX reader and writer -----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Target/ONNX: the protobuf types, the opset table of a model
// and the one-line wording of node-level messages, which the reader and the
// writer share.
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_TARGET_ONNX_PROTOUTILS_H
#define TTT_LIB_TARGET_ONNX_PROTOUTILS_H

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::ttt::onnx {

/// The generated protobuf classes (ModelProto, GraphProto, ...). Spelled
/// through an alias because `onnx` is also this dialect's namespace.
namespace pb = ::onnx;

/// The default ONNX domain as the messages spell it.
inline constexpr llvm::StringLiteral kDefaultDomainName = "ai.onnx";

/// Maps "ai.onnx" to "", the spelling ONNX's own tables use.
inline llvm::StringRef canonicalDomain(llvm::StringRef domain) {
  return domain == "ai.onnx" ? llvm::StringRef() : domain;
}

/// The opset versions a model imports, keyed by canonical domain.
class OpsetTable {
public:
  void add(llvm::StringRef domain, int64_t version) {
    versions[canonicalDomain(domain)] = version;
  }
  std::optional<int64_t> lookup(llvm::StringRef domain) const {
    auto it = versions.find(canonicalDomain(domain));
    if (it == versions.end())
      return std::nullopt;
    return it->second;
  }

private:
  llvm::StringMap<int64_t> versions;
};

/// "node 'name' (ai.onnx::Relu, opset 17)"; an unnamed node is called by its
/// first output instead.
std::string describeNode(const pb::NodeProto &node, const OpsetTable &opsets);

/// The same, from the parts of a node.
std::string describeNode(llvm::StringRef name, llvm::StringRef firstOutput,
                         llvm::StringRef domain, llvm::StringRef opType,
                         const OpsetTable &opsets);

/// True if `message` or any message inside it has fields the generated
/// classes do not know (from a newer ONNX), which a writer would drop.
bool hasUnknownFields(const google::protobuf::Message &message);

/// Makes a (possibly multi-line) message from ONNX one line: drops the
/// "==> Context:" dump of the node, folds whitespace and caps the length.
std::string flattenMessage(llvm::StringRef message);

} // namespace mlir::ttt::onnx

#endif // TTT_LIB_TARGET_ONNX_PROTOUTILS_H
