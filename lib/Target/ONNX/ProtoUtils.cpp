//===- ProtoUtils.cpp - shared helpers of the ONNX reader and writer ------===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ProtoUtils.h"

#include "llvm/ADT/StringExtras.h"

#include "llvm/Support/raw_ostream.h"
#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>

using namespace mlir::ttt::onnx;
using llvm::StringRef;

std::string mlir::ttt::onnx::describeNode(llvm::StringRef name,
                                          llvm::StringRef firstOutput,
                                          llvm::StringRef domain,
                                          llvm::StringRef opType,
                                          const OpsetTable &opsets) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!name.empty())
    os << "node '" << name << "'";
  else if (!firstOutput.empty())
    os << "unnamed node with output '" << firstOutput << "'";
  else
    os << "unnamed node";
  os << " ("
     << (canonicalDomain(domain).empty() ? StringRef(kDefaultDomainName)
                                         : domain)
     << "::" << opType;
  if (std::optional<int64_t> version = opsets.lookup(domain))
    os << ", opset " << *version;
  else
    os << ", no opset imported";
  os << ")";
  return text;
}

std::string mlir::ttt::onnx::describeNode(const pb::NodeProto &node,
                                          const OpsetTable &opsets) {
  llvm::StringRef firstOutput;
  for (const std::string &output : node.output())
    if (!output.empty()) {
      firstOutput = output;
      break;
    }
  return describeNode(node.name(), firstOutput, node.domain(), node.op_type(),
                      opsets);
}

std::string mlir::ttt::onnx::flattenMessage(llvm::StringRef message) {
  size_t context = message.find("==> Context:");
  if (context != llvm::StringRef::npos)
    message = message.take_front(context);
  std::string flat;
  bool space = false;
  for (char c : message) {
    if (llvm::isSpace(c)) {
      space = !flat.empty();
      continue;
    }
    if (space)
      flat.push_back(' ');
    space = false;
    // Control bytes from a corrupt model must not reach the terminal.
    flat.push_back(
        llvm::isPrint(c) || static_cast<unsigned char>(c) >= 0x80 ? c : '?');
  }
  constexpr size_t kMaxLength = 400;
  if (flat.size() > kMaxLength)
    flat = flat.substr(0, kMaxLength) + "...";
  return flat;
}

bool mlir::ttt::onnx::hasUnknownFields(
    const google::protobuf::Message &message) {
  const google::protobuf::Reflection *reflection = message.GetReflection();
  if (!reflection->GetUnknownFields(message).empty())
    return true;
  std::vector<const google::protobuf::FieldDescriptor *> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor *field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    if (!field->is_repeated()) {
      if (hasUnknownFields(reflection->GetMessage(message, field)))
        return true;
      continue;
    }
    for (int i = 0, e = reflection->FieldSize(message, field); i < e; ++i)
      if (hasUnknownFields(reflection->GetRepeatedMessage(message, field, i)))
        return true;
  }
  return false;
}
