//===- GemmMatcher.cpp - recognize GEMMs in linalg (skeleton) --*- C++ -*-===//
// SKELETON: not implemented yet.
#include "MSAMP/Transforms/GemmMatcher.h"

std::optional<mlir::msamp::GemmMatch>
mlir::msamp::matchGemm(Operation *op, std::string *reason) {
  return std::nullopt;
}
