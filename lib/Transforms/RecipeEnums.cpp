//===- RecipeEnums.cpp - the enum-valued recipe options ---------*- C++ -*-===//
//
// The generated spellings of RecipeEnums.td (stringifyEnum, symbolizeEnum).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Transforms/RecipeEnums.h"

#include "MSAMP/Transforms/RecipeEnums.cpp.inc"
