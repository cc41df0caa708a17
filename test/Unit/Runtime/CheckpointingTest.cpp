//===- CheckpointingTest.cpp - variables to and from checkpoints ----------===//
//
// runtime::restoreVariables and saveVariables: which names a graph's saver
// uses, partitioned variables, and that a failed restore changes nothing.
//
//===----------------------------------------------------------------------===//

#include "cleave/Checkpoint/TensorBundle.h"
#include "cleave/InitAll.h"
#include "cleave/Runtime/Checkpointing.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

using namespace cleave;

namespace {

/// A checkpoint prefix in a fresh directory, removed with the object.
struct TempPrefix {
  explicit TempPrefix(llvm::StringRef name) {
    EXPECT_FALSE(
        llvm::sys::fs::createUniqueDirectory("cleave-checkpointing", dir));
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    prefix = path.str().str();
  }
  ~TempPrefix() { llvm::sys::fs::remove_directories(dir); }
  llvm::SmallString<128> dir;
  std::string prefix;
};

Tensor floats(std::vector<int64_t> shape, float start) {
  Tensor t(cleave::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data<float>()[i] = start + i;
  return t;
}

runtime::CheckpointedVariable variable(std::string name, int32_t dtype,
                                       std::vector<int64_t> shape) {
  runtime::CheckpointedVariable var;
  var.variable = var.node = var.key = std::move(name);
  var.dtype = dtype;
  var.shape = std::move(shape);
  return var;
}

TEST(Checkpointing, FailedRestoreChangesNothing) {
  TempPrefix temp("ckpt");
  const std::string &prefix = temp.prefix;
  {
    checkpoint::BundleWriter writer(prefix);
    ASSERT_FALSE(llvm::errorToBool(writer.add("a", floats({2}, 10))));
    ASSERT_FALSE(llvm::errorToBool(writer.add("b", floats({3}, 20))));
    ASSERT_FALSE(llvm::errorToBool(writer.finish()));
  }
  interp::State state;
  state.variables["a"] = floats({2}, 0);
  state.variables["b"] = floats({2}, 0);
  // "a" would restore, "b" has the wrong shape: neither may change.
  std::vector<runtime::CheckpointedVariable> vars = {
      variable("a", cleave::kFloat, {2}), variable("b", cleave::kFloat, {2})};
  llvm::Error error = runtime::restoreVariables(vars, prefix, state);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error))
                .find("variable node 'b' has shape [2] but tensor 'b'"),
            std::string::npos);
  EXPECT_EQ(state.variables["a"].data<float>()[0], 0);
  // A variable missing from the checkpoint is refused the same way.
  vars = {variable("a", cleave::kFloat, {2}),
          variable("c", cleave::kFloat, {2})};
  error = runtime::restoreVariables(vars, prefix, state);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(llvm::toString(std::move(error)).find("Key c not found"),
            std::string::npos);
  EXPECT_EQ(state.variables["a"].data<float>()[0], 0);
  // And all of it when everything fits.
  vars = {variable("a", cleave::kFloat, {2})};
  ASSERT_FALSE(llvm::errorToBool(runtime::restoreVariables(vars, prefix, state)));
  EXPECT_EQ(state.variables["a"].data<float>()[1], 11);
}

TEST(Checkpointing, PartitionedVariableRoundTrip) {
  // Two parts of a [4,2] variable "w", as a partitioned Saver names them.
  runtime::CheckpointedVariable part0 =
      variable("w/part_0", cleave::kFloat, {1, 2});
  part0.key = "w";
  part0.shapeAndSlice = "4 2 0,1:-";
  runtime::CheckpointedVariable part1 =
      variable("w/part_1", cleave::kFloat, {3, 2});
  part1.key = "w";
  part1.shapeAndSlice = "4 2 1,3:-";
  interp::State state;
  state.variables["w/part_0"] = floats({1, 2}, 0);
  state.variables["w/part_1"] = floats({3, 2}, 2);
  TempPrefix temp("parts");
  const std::string &prefix = temp.prefix;
  ASSERT_FALSE(llvm::errorToBool(
      runtime::saveVariables({part0, part1}, state, prefix)));
  // The checkpoint holds the whole variable, as TensorFlow reads it.
  auto reader = checkpoint::BundleReader::open(prefix);
  ASSERT_TRUE(bool(reader)) << llvm::toString(reader.takeError());
  auto whole = reader->read("w");
  ASSERT_TRUE(bool(whole)) << llvm::toString(whole.takeError());
  EXPECT_EQ(whole->shape(), (std::vector<int64_t>{4, 2}));
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(whole->data<float>()[i], i);
  // Restoring cuts each part out again.
  interp::State restored;
  ASSERT_FALSE(llvm::errorToBool(
      runtime::restoreVariables({part0, part1}, prefix, restored)));
  EXPECT_EQ(restored.variables["w/part_1"].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(restored.variables["w/part_1"].data<float>()[0], 2);
  EXPECT_EQ(restored.variables["w/part_1"].data<float>()[5], 7);
}

TEST(Checkpointing, SaverNamesComeFromSaveV2) {
  // A Saver that stores variable "v" under the key "renamed".
  const char *text = R"pb(
    node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
    node { name: "v/read" op: "Identity" input: "v" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "save/Const" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "model" } } } }
    node { name: "save/names" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "renamed" } } } }
    node { name: "save/slices" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "" } } } }
    node { name: "save/SaveV2" op: "SaveV2" input: "save/Const" input: "save/names" input: "save/slices" input: "v/read" attr { key: "dtypes" value { list { type: DT_FLOAT } } } }
  )pb";
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto buffer = llvm::MemoryBuffer::getMemBuffer(text, "saver.pbtxt");
  mlir::OwningOpRef<mlir::ModuleOp> module = importGraphDef(*buffer, &context);
  ASSERT_TRUE(module);
  auto vars = runtime::listCheckpointedVariables(*module);
  ASSERT_TRUE(bool(vars)) << llvm::toString(vars.takeError());
  ASSERT_EQ(vars->size(), 1u);
  EXPECT_EQ((*vars)[0].key, "renamed");
  EXPECT_EQ((*vars)[0].variable, "v");
  EXPECT_EQ((*vars)[0].shape, (std::vector<int64_t>{2}));
}

} // namespace
