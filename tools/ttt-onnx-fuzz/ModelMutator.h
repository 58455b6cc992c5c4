//===- ModelMutator.h - structure-aware ONNX model mutations ----*- C++ -*-===//
//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef TTT_TOOLS_TTT_ONNX_FUZZ_MODELMUTATOR_H
#define TTT_TOOLS_TTT_ONNX_FUZZ_MODELMUTATOR_H

#include <cstddef>
#include <cstdint>

namespace mlir::ttt::fuzz {

/// If `data` (`size` bytes) parses as a ModelProto, applies one random edit
/// (chosen by `seed`) to the model and writes it back into `data`. Returns
/// the new size, or 0 if the bytes do not parse or the result would not fit
/// in `maxSize`.
size_t mutateModel(uint8_t *data, size_t size, size_t maxSize, unsigned seed);

} // namespace mlir::ttt::fuzz

#endif // TTT_TOOLS_TTT_ONNX_FUZZ_MODELMUTATOR_H
