//===- MSAMPEnums.td - msamp enumerations ------------------*- tablegen -*-===//

#ifndef MSAMP_DIALECT_MSAMPENUMS_TD
#define MSAMP_DIALECT_MSAMPENUMS_TD

include "MSAMP/Dialect/MSAMPDialect.td"
include "mlir/IR/EnumAttr.td"

def MSAMP_ReduceKindAttr : I32EnumAttr<"ReduceKind",
    "reduction of a data-parallel collective", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Mean", 2, "mean">]> {
  let cppNamespace = "::mlir::msamp";
}

def MSAMP_AmaxAlgoAttr : I32EnumAttr<"AmaxAlgo",
    "how an amax history is reduced to one amax", [
      I32EnumAttrCase<"Max", 0, "max">,
      I32EnumAttrCase<"MostRecent", 1, "most_recent">]> {
  let cppNamespace = "::mlir::msamp";
}

def MSAMP_ScaleKindAttr : I32EnumAttr<"ScaleKind",
    "how a scale is derived from an amax", [
      I32EnumAttrCase<"Pow2", 0, "pow2">,
      I32EnumAttrCase<"Exact", 1, "exact">]> {
  let cppNamespace = "::mlir::msamp";
}

#endif // MSAMP_DIALECT_MSAMPENUMS_TD
