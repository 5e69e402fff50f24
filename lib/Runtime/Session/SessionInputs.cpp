//===- SessionInputs.cpp - What a step reads: inputs, data files, batches -===//
//
// Part of the msamp project.
//
//===----------------------------------------------------------------------===//
//
// The session's data side, apart from loading and stepping (Session.cpp):
// one input set from the caller, a safetensors data file of K batches
// checked against the step's inputs, a batch selected from it, and the
// seeded synthetic batches of msamp-run --synthetic.
//
//===----------------------------------------------------------------------===//

#include "Random.h"
#include "Session.h"

#include <cstring>

namespace msamp::session {

Error Session::setInput(const std::string &name, const void *data,
                        int64_t numBytes) {
  TensorBuffer *input = findInput(name);
  if (!input)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "the step has no input named '" + name + "'");
  if (input->spec().role != "input" && input->spec().role != "target")
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "'" + name + "' is a " + input->spec().role +
                     ", which the session sets itself");
  if (numBytes != input->spec().numBytes || !data)
    return Error(MSAMP_ERROR_MISMATCH,
                 "input '" + name + "' takes " +
                     std::to_string(input->spec().numBytes) + " bytes (" +
                     mlirName(input->spec().dtype) + " " +
                     shapeToString(input->spec().shape) + "), got " +
                     std::to_string(numBytes));
  std::memcpy(input->data(), data, static_cast<size_t>(numBytes));
  return Error::success();
}

Error Session::openData(const std::string &path, int64_t &numBatches,
                        int64_t &numIgnored) {
  std::unique_ptr<SafeTensorsReader> reader;
  if (Error e = SafeTensorsReader::open(path, reader))
    return e;
  std::vector<const SafeTensor *> tensors(inputs_.size(), nullptr);
  int64_t batches = -1;
  std::string firstName;
  int64_t used = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorSpec &spec = inputs_[i]->spec();
    if (spec.role != "input" && spec.role != "target")
      continue;
    std::string expectedText =
        "[K" + (spec.shape.empty()
                    ? std::string("]")
                    : ", " + shapeToString(spec.shape).substr(1));
    const SafeTensor *t = reader->find(spec.name);
    auto fail = [&](const std::string &what) {
      return Error(MSAMP_ERROR_MISMATCH, path + ": " + what);
    };
    if (!t)
      return fail("no tensor '" + spec.name + "' for " + spec.role + " '" +
                  spec.name + "' (expected " + safetensorsName(spec.dtype) +
                  " of shape " + expectedText + ", K batches of " +
                  shapeToString(spec.shape) + ")");
    if (t->dtype != spec.dtype)
      return fail("tensor '" + spec.name + "' has dtype " +
                  safetensorsName(t->dtype) + ", expected " +
                  safetensorsName(spec.dtype) + " (" + spec.role + " '" +
                  spec.name + "' is " + mlirName(spec.dtype) + ")");
    bool shapeOk =
        t->shape.size() == spec.shape.size() + 1 &&
        std::equal(spec.shape.begin(), spec.shape.end(), t->shape.begin() + 1);
    if (!shapeOk)
      return fail("tensor '" + spec.name + "' has shape " +
                  shapeToString(t->shape) + ", expected " + expectedText +
                  " (K batches of " + spec.role + " '" + spec.name + "' " +
                  shapeToString(spec.shape) + ")");
    if (t->shape[0] == 0)
      return fail("tensor '" + spec.name + "' holds 0 batches");
    if (batches >= 0 && t->shape[0] != batches)
      return fail("tensor '" + spec.name + "' holds " +
                  std::to_string(t->shape[0]) + " batches, but '" + firstName +
                  "' holds " + std::to_string(batches));
    if (batches < 0) {
      batches = t->shape[0];
      firstName = spec.name;
    }
    tensors[i] = t;
    ++used;
  }
  numBatches = batches < 0 ? 0 : batches;
  numIgnored = static_cast<int64_t>(reader->tensors().size()) - used;
  data_ = std::move(reader);
  dataTensors_ = std::move(tensors);
  numBatches_ = numBatches;
  return Error::success();
}

Error Session::selectBatch(int64_t k) {
  if (!data_)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT, "no data file is open");
  if (k < 0 || k >= numBatches_)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "batch " + std::to_string(k) + " out of range [0, " +
                     std::to_string(numBatches_) + ")");
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (const SafeTensor *t = dataTensors_[i]) {
      size_t bytes = inputs_[i]->numBytes();
      std::memcpy(inputs_[i]->data(), t->data + static_cast<size_t>(k) * bytes,
                  bytes);
    }
  return Error::success();
}

Error Session::syntheticBatch(uint64_t seed, int64_t step, int64_t numClasses) {
  if (numClasses <= 0)
    return Error(MSAMP_ERROR_INVALID_ARGUMENT,
                 "the number of classes must be positive, got " +
                     std::to_string(numClasses));
  for (const auto &input : inputs_) {
    const TensorSpec &spec = input->spec();
    if (spec.role != "input" && spec.role != "target")
      continue;
    const uint64_t streamId =
        streamSeed(seed, spec.name + "#" + std::to_string(step));
    std::vector<float> values(static_cast<size_t>(spec.numElements));
    if (isFloatType(spec.dtype)) {
      NormalStream normal(streamId);
      for (float &v : values)
        v = static_cast<float>(normal.next());
    } else {
      SplitMix64 rng(streamId);
      const uint64_t classes = static_cast<uint64_t>(
          spec.numClasses > 0 ? spec.numClasses : numClasses);
      for (float &v : values)
        v = static_cast<float>(rng.below(classes));
    }
    encodeFromF32(spec.dtype, values.data(), spec.numElements, 1.0f,
                  input->data());
  }
  return Error::success();
}

} // namespace msamp::session
