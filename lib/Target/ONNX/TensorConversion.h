//===- TensorConversion.h - TensorProto <-> elements attributes -*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_LIB_TARGET_ONNX_TENSORCONVERSION_H
#define TTT_LIB_TARGET_ONNX_TENSORCONVERSION_H

#include "ProtoUtils.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"

#include <optional>
#include <string>

namespace mlir::ttt::onnx {

/// Where and how tensors of one model are read.
struct TensorReader {
  MLIRContext *context;
  /// The directory external data locations are relative to (may be empty).
  std::string modelDir;
  /// Tensors of more bytes than this become dense_resource blobs.
  size_t resourceThreshold;
};

/// True if `tensor` keeps its data in an external file.
bool hasExternalData(const pb::TensorProto &tensor);

/// Converts `tensor` (raw or typed fields, or external data, which is
/// memory-mapped when it is suitably aligned) to an elements attribute.
/// Returns null, saying why in `error`, for unsupported element types,
/// inconsistent sizes or unreadable external data.
ElementsAttr readTensor(const pb::TensorProto &tensor,
                        const TensorReader &reader, std::string &error);

/// Writes `value` into `tensor` (data type, dims and raw_data; not the
/// name). Returns false, saying why in `error`, for values ONNX cannot hold
/// or resource blobs without data. With `borrowed`, the data of a resource
/// blob (a memory-mapped external data file, a large tensor) is not copied
/// into raw_data: `*borrowed` gets its bytes, owned by the blob, for the
/// caller to write out or copy in.
bool writeTensor(ElementsAttr value, pb::TensorProto &tensor,
                 std::string &error,
                 std::optional<ArrayRef<char>> *borrowed = nullptr);

} // namespace mlir::ttt::onnx

#endif // TTT_LIB_TARGET_ONNX_TENSORCONVERSION_H
