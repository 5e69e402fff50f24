//===- RecipeEnums.td - the enum-valued recipe options -----*- tablegen -*-===//
//
// The recipe options with a fixed set of values (docs/Interfaces.md 3), and
// the other pass options with one (the train step's level, the memory
// report's format), each declared once here: the passes' options (Passes.td) and the pipelines'
// (RecipeOptions.h) take their values from these enums through
// enumValues<E>() (RecipeEnums.h), and the recipe attribute spells them with
// stringifyEnum. The scale kind and the amax algorithm are the dialect's
// ScaleKind and AmaxAlgo (MSAMPEnums.td), whose spellings are the options'.
//
//===----------------------------------------------------------------------===//

#ifndef MSAMP_TRANSFORMS_RECIPEENUMS_TD
#define MSAMP_TRANSFORMS_RECIPEENUMS_TD

include "mlir/IR/EnumAttr.td"

def MSAMP_FP8Format : I32Enum<"FP8Format",
    "FP8 formats of the converted GEMMs' operands", [
      I32EnumCase<"Hybrid", 0, "hybrid">,
      I32EnumCase<"E4M3", 1, "e4m3">]> {
  let cppNamespace = "::mlir::msamp";
}

def MSAMP_ScalingMode : I32Enum<"ScalingMode",
    "where the scales of activations and output gradients come from", [
      I32EnumCase<"Delayed", 0, "delayed">,
      I32EnumCase<"Current", 1, "current">]> {
  let cppNamespace = "::mlir::msamp";
}

def MSAMP_AMPDtype : I32Enum<"AMPDtype",
    "the 16-bit operand type of autocast GEMMs", [
      I32EnumCase<"BF16", 0, "bf16">,
      I32EnumCase<"FP16", 1, "fp16">]> {
  let cppNamespace = "::mlir::msamp";
}

def MSAMP_LossScaleMode : I32Enum<"LossScaleMode",
    "the loss scaling of --msamp-amp", [
      I32EnumCase<"Auto", 0, "auto">,
      I32EnumCase<"Dynamic", 1, "dynamic">,
      I32EnumCase<"None", 2, "none">]> {
  let cppNamespace = "::mlir::msamp";
}

// The optimizer override of msamp-synthesize-train-step and the levels: a
// kind of msamp.optimizer (docs/Interfaces.md 1), or the empty spelling, the
// default, which keeps the module's declaration. Keep is last so that the
// kinds are numbered as the cases of a closed enum.
def MSAMP_OptimizerKind : I32Enum<"OptimizerKind",
    "the optimizer kinds of msamp.optimizer", [
      I32EnumCase<"SGD", 0, "sgd">,
      I32EnumCase<"Adam", 1, "adam">,
      I32EnumCase<"AdamW", 2, "adamw">,
      I32EnumCase<"Keep", 3, "">]> {
  let cppNamespace = "::mlir::msamp";
}

def MSAMP_TrainStepLevel : I32Enum<"TrainStepLevel",
    "the msamp.level of a synthesized train step: the MS-AMP levels and the "
    "reference recipes", [
      I32EnumCase<"O0", 0, "O0">,
      I32EnumCase<"O1", 1, "O1">,
      I32EnumCase<"O2", 2, "O2">,
      I32EnumCase<"O3", 3, "O3">,
      I32EnumCase<"AMPBF16", 4, "amp-bf16">,
      I32EnumCase<"AMPFP16", 5, "amp-fp16">,
      I32EnumCase<"TE", 6, "te">]> {
  let cppNamespace = "::mlir::msamp";
}

def MSAMP_MemoryReportFormat : I32Enum<"MemoryReportFormat",
    "what --msamp-memory-report prints", [
      I32EnumCase<"Table", 0, "table">,
      I32EnumCase<"JSON", 1, "json">]> {
  let cppNamespace = "::mlir::msamp";
}

#endif // MSAMP_TRANSFORMS_RECIPEENUMS_TD
