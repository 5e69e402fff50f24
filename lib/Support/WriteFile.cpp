//===- WriteFile.cpp - files a reader never sees half-written ---*- C++ -*-===//

#include "MSAMP/Support/WriteFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

LogicalResult mlir::msamp::writeFileAtomically(llvm::StringRef path,
                                               llvm::StringRef contents,
                                               std::string &error) {
  if (path == "-") {
    llvm::outs() << contents;
    llvm::outs().flush();
    return success();
  }
  std::string tmp = (path + ".tmp").str();
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      error = "cannot open '" + tmp + "': " + ec.message();
      return failure();
    }
    os << contents;
    os.close();
    if (os.has_error()) {
      error = "cannot write '" + tmp + "': " + os.error().message();
      // Without this the stream would abort the process on destruction.
      os.clear_error();
      (void)llvm::sys::fs::remove(tmp);
      return failure();
    }
  }
  if ((ec = llvm::sys::fs::rename(tmp, path))) {
    error =
        "cannot rename '" + tmp + "' to '" + path.str() + "': " + ec.message();
    (void)llvm::sys::fs::remove(tmp);
    return failure();
  }
  return success();
}
