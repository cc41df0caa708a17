//===- SessionTest.cpp - runtime::Session, the embedding API --------------===//
//
// Runs of different feeds, fetches and targets share the variables; both
// backends give the same values; checkpoints round-trip; signatures bind
// their keys; errors come back as the right kind.
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/Session.h"
#include "cleave/InitAll.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

using namespace cleave;
using runtime::Session;
using runtime::SessionOptions;

namespace cleave::runtime {
/// Names the backend in test listings (ctest's "GetParam() = ...").
static void PrintTo(SessionOptions::Backend backend, std::ostream *os) {
  *os << (backend == SessionOptions::Backend::CPU ? "CPU" : "Interpreter");
}
} // namespace cleave::runtime

namespace {

/// A float counter: `init` zeroes it, `inc` adds the fed `x`, `read` reads
/// it, and the MetaGraphDef's `serving_default` maps x -> read.
constexpr const char *kCounter = R"pb(
graph_def {
  node { name: "v" op: "VariableV2"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape {} } } }
  node { name: "zero" op: "Const"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                         float_val: 0 } } } }
  node { name: "init" op: "Assign" input: "v" input: "zero"
    attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "x" op: "Placeholder"
    attr { key: "dtype" value { type: DT_FLOAT } }
    attr { key: "shape" value { shape {} } } }
  node { name: "inc" op: "AssignAdd" input: "v" input: "x"
    attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "read" op: "Identity" input: "v"
    attr { key: "T" value { type: DT_FLOAT } } }
}
signature_def {
  key: "serving_default"
  value {
    inputs { key: "x" value { name: "x:0" dtype: DT_FLOAT } }
    outputs { key: "y" value { name: "read:0" dtype: DT_FLOAT } }
  }
}
)pb";

Tensor scalar(float value) {
  Tensor t(cleave::kFloat, {});
  t.data<float>()[0] = value;
  return t;
}

/// A directory removed with the object.
struct TempDir {
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("cleave-session", path));
  }
  ~TempDir() { (void)llvm::sys::fs::remove_directories(path); }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    return p.str().str();
  }
  llvm::SmallString<128> path;
};

class SessionTest : public ::testing::TestWithParam<SessionOptions::Backend> {
protected:
  SessionTest() {
    registerAllDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->loadAllAvailableDialects();
    context->printOpOnDiagnostic(false);
  }

  /// A session of the counter graph; diagnostics collect in `diagnostics`.
  std::unique_ptr<Session> openCounter() {
    auto buffer = llvm::MemoryBuffer::getMemBuffer(kCounter, "counter.pbtxt");
    mlir::OwningOpRef<mlir::ModuleOp> module =
        importGraphDef(*buffer, context.get());
    EXPECT_TRUE(module);
    SessionOptions options;
    options.backend = GetParam();
    auto session = Session::create(std::move(module), "", options);
    EXPECT_TRUE(bool(session)) << llvm::toString(session.takeError());
    return session ? std::move(*session) : nullptr;
  }

  /// Runs and returns the only fetch as a float.
  float runScalar(Session &session, const runtime::NamedTensors &feeds,
                  const std::string &fetch,
                  const std::vector<std::string> &targets = {}) {
    auto results = session.run(feeds, {fetch}, targets);
    EXPECT_TRUE(bool(results))
        << llvm::toString(results.takeError()) << diagnostics;
    return results && results->size() == 1 ? results->front().data<float>()[0]
                                           : -1;
  }

  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
  std::string diagnostics;
  void captureDiagnostics() {
    context->getDiagEngine().registerHandler([this](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
  }
};

TEST_P(SessionTest, RunsShareVariablesAcrossKindsOfRun) {
  captureDiagnostics();
  std::unique_ptr<Session> session = openCounter();
  ASSERT_TRUE(session);
  ASSERT_TRUE(bool(session->run({}, {}, {"init"})));
  EXPECT_EQ(runScalar(*session, {{"x", scalar(2)}}, "inc"), 2);
  EXPECT_EQ(runScalar(*session, {{"x", scalar(3)}}, "inc"), 5);
  // Another kind of run (no feed, another fetch) sees the same variable,
  // and the first kind, run again, goes on from it.
  EXPECT_EQ(runScalar(*session, {}, "read"), 5);
  EXPECT_EQ(runScalar(*session, {{"x", scalar(1)}}, "inc"), 6);
  EXPECT_EQ(runScalar(*session, {}, "read"), 6);
}

TEST_P(SessionTest, NodeErrorsAreReportedAsDiagnostics) {
  captureDiagnostics();
  std::unique_ptr<Session> session = openCounter();
  ASSERT_TRUE(session);
  auto results = session->run({}, {"read"}, {});
  ASSERT_FALSE(bool(results));
  EXPECT_TRUE(results.errorIsA<runtime::ReportedError>());
  llvm::consumeError(results.takeError());
  EXPECT_NE(diagnostics.find("Attempting to use uninitialized value v"),
            std::string::npos)
      << diagnostics;
}

TEST_P(SessionTest, SavedVariablesRestoreIntoAnotherSession) {
  TempDir dir;
  std::string prefix = dir.file("ckpt/model");
  {
    std::unique_ptr<Session> session = openCounter();
    ASSERT_TRUE(session);
    ASSERT_TRUE(bool(session->run({}, {}, {"init"})));
    EXPECT_EQ(runScalar(*session, {{"x", scalar(7)}}, "inc"), 7);
    auto variables = session->getCheckpointedVariables();
    ASSERT_TRUE(bool(variables));
    EXPECT_EQ(*variables, std::vector<std::string>{"v"});
    ASSERT_FALSE(llvm::errorToBool(session->save(prefix, 5)));
  }
  EXPECT_TRUE(llvm::sys::fs::exists(prefix + ".index"));
  EXPECT_TRUE(llvm::sys::fs::exists(dir.file("ckpt/checkpoint")));
  std::unique_ptr<Session> session = openCounter();
  ASSERT_TRUE(session);
  // A directory restores its latest checkpoint.
  ASSERT_FALSE(llvm::errorToBool(session->restore(dir.file("ckpt"))));
  EXPECT_EQ(runScalar(*session, {}, "read"), 7);
  EXPECT_EQ(runScalar(*session, {{"x", scalar(1)}}, "inc"), 8);
}

TEST_P(SessionTest, SignaturesBindTheirKeys) {
  std::unique_ptr<Session> session = openCounter();
  ASSERT_TRUE(session);
  auto binding = session->bindSignature("serving_default", {"x"}, {});
  ASSERT_TRUE(bool(binding)) << llvm::toString(binding.takeError());
  EXPECT_EQ(binding->feeds, std::vector<std::string>{"x:0"});
  EXPECT_EQ(binding->fetchKeys, std::vector<std::string>{"y"});
  EXPECT_EQ(binding->fetches, std::vector<std::string>{"read:0"});
  EXPECT_EQ(session->getFeedDType(binding->feeds[0]), cleave::kFloat);

  auto missing = session->bindSignature("serving_default", {"z"}, {});
  ASSERT_FALSE(bool(missing));
  llvm::handleAllErrors(
      missing.takeError(), [](const runtime::SignatureKeyError &e) {
        EXPECT_TRUE(e.isInput);
        EXPECT_EQ(e.key, "z");
        EXPECT_EQ(e.message,
                  "signature 'serving_default' has no input 'z' (inputs: x)");
      });
  // Output keys are checked first.
  missing = session->bindSignature("serving_default", {"z"}, {"w"});
  ASSERT_FALSE(bool(missing));
  llvm::handleAllErrors(missing.takeError(),
                        [](const runtime::SignatureKeyError &e) {
                          EXPECT_FALSE(e.isInput);
                          EXPECT_EQ(e.key, "w");
                        });
  auto unknown = session->bindSignature("nosuch", {}, {});
  ASSERT_FALSE(bool(unknown));
  EXPECT_NE(llvm::toString(unknown.takeError()).find("serving_default"),
            std::string::npos);
}

TEST(SessionOptionsTest, ChannelTimeoutMustBePositive) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto buffer = llvm::MemoryBuffer::getMemBuffer(kCounter, "counter.pbtxt");
  auto module = importGraphDef(*buffer, &context);
  ASSERT_TRUE(module);
  SessionOptions options;
  options.channelTimeoutSeconds = 0;
  auto session = Session::create(std::move(module), "", options);
  ASSERT_FALSE(bool(session));
  EXPECT_EQ(llvm::toString(session.takeError()),
            "the channel timeout must be a positive number of seconds");
}

INSTANTIATE_TEST_SUITE_P(
    Backends, SessionTest,
    ::testing::Values(SessionOptions::Backend::Interpreter,
                      SessionOptions::Backend::CPU),
    [](const ::testing::TestParamInfo<SessionOptions::Backend> &info) {
      return info.param == SessionOptions::Backend::CPU ? "CPU" : "Interpreter";
    });

} // namespace
