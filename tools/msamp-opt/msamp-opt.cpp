//===- msamp-opt.cpp - the msamp optimizer driver ---------------*- C++ -*-===//
//
// mlir-opt plus the msamp dialect, passes and pipelines (--msamp-o0..o3).
//
//===----------------------------------------------------------------------===//

#include "MSAMP/Registration/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::msamp::registerAllMSAMPDialects(registry);
  mlir::msamp::registerAllMSAMPPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "msamp optimizer: FP8 mixed-precision training compiler\n",
      registry));
}
