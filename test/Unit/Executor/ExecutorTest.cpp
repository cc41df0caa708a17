//===- ExecutorTest.cpp - the executor as the reference interpreter -------===//

#include "cleave/Executor/Executor.h"
#include "cleave/Tensor/Npy.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::interp;

namespace {

TEST(TensorTest, NpyRoundTrip) {
  Tensor t(kFloat, {2, 3});
  for (int i = 0; i < 6; ++i)
    t.data<float>()[i] = i * 0.5f;
  Tensor back;
  std::string error;
  ASSERT_TRUE(readNpy(writeNpy(t), back, error)) << error;
  EXPECT_EQ(back.dtype(), kFloat);
  EXPECT_EQ(back.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back.data<float>()[5], 2.5f);
  EXPECT_EQ(t.toString(), "float [2,3] [[0, 0.5, 1], [1.5, 2, 2.5]]");
  EXPECT_FALSE(readNpy("not npy", back, error));
  EXPECT_EQ(error, "not a .npy file");
  // Empty tensors, which have no buffer (checked under UBSan).
  ASSERT_TRUE(readNpy(writeNpy(Tensor(kInt64, {0})), back, error)) << error;
  EXPECT_EQ(back.shape(), (std::vector<int64_t>{0}));
}

TEST(InterpreterTest, VariablesPersistAcrossRuns) {
  tensorflow::GraphDef graph;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    node { name: "v" op: "VariableV2"
           attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "shape" value { shape { } } } }
    node { name: "zero" op: "Const"
           attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 0 } } } }
    node { name: "one" op: "Const"
           attr { key: "dtype" value { type: DT_INT64 } }
           attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 1 } } } }
    node { name: "init" op: "Assign" input: "v" input: "zero"
           attr { key: "T" value { type: DT_INT64 } } }
    node { name: "inc" op: "AssignAdd" input: "v" input: "one"
           attr { key: "T" value { type: DT_INT64 } } }
  )pb", &graph));
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = importGraphDef(graph, &ctx);
  ASSERT_TRUE(module);
  Executor interpreter(*module);
  ASSERT_TRUE(succeeded(interpreter.run({}, {}, {"init"})));
  for (int step = 1; step <= 3; ++step) {
    auto results = interpreter.run({}, {"inc"}, {});
    ASSERT_TRUE(succeeded(results));
    EXPECT_EQ((*results)[0].getAsInt(0), step);
  }
  EXPECT_EQ(interpreter.getState().variables["v"].getAsInt(0), 3);
}

TEST(InterpreterTest, FetchingAMissingNodeFails) {
  tensorflow::GraphDef graph;
  MLIRContext ctx;
  ScopedDiagnosticHandler silence(&ctx, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = importGraphDef(graph, &ctx);
  ASSERT_TRUE(module);
  Executor interpreter(*module);
  EXPECT_TRUE(failed(interpreter.run({}, {"nope"}, {})));
}

TEST(InterpreterTest, FileAccessCanBeTurnedOff) {
  tensorflow::GraphDef graph;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    node { name: "prefix" op: "Const"
           attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "never-written" } } } }
    node { name: "names" op: "Const"
           attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "p" } } } }
    node { name: "slices" op: "Const"
           attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "" } } } }
    node { name: "save" op: "SaveV2" input: "prefix" input: "names"
           input: "slices" input: "prefix"
           attr { key: "dtypes" value { list { type: DT_STRING } } } }
  )pb",
                                                            &graph));
  MLIRContext ctx;
  std::string message;
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = importGraphDef(graph, &ctx);
  ASSERT_TRUE(module);
  Executor interpreter(*module);
  interpreter.setFileAccess(false);
  EXPECT_TRUE(failed(interpreter.run({}, {}, {"save"})));
  EXPECT_EQ(message, "Node 'save': SaveV2 touches the file system, which this "
                     "run does not allow");
  EXPECT_FALSE(llvm::sys::fs::exists("never-written.index"));
}

} // namespace
