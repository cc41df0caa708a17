//===- ParameterServerTest.cpp - a ps task's side of the messages ---------===//
//
// The placement of a train graph's variables over ps tasks, and a ps
// task's answers: not ready before the chief's values, pulls and pushes
// after them (the graph's own update applied), and a failure reply naming
// the problem for every malformed request, with the variables unchanged.
//
//===----------------------------------------------------------------------===//

#include "lib/Estimator/ParameterServer.h"

#include "cleave/InitAll.h"
#include "cleave/Translate/GraphDef.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace cleave;
using namespace cleave::estimator;

namespace {

/// w -= 0.1 * g and global_step += 1 (the train op); b is not trained;
/// w/Momentum is colocated with w, as an optimizer's slot is.
constexpr const char *kTrainGraph = R"pb(
node { name: "w" op: "VariableV2"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "w/Momentum" op: "VariableV2"
  attr { key: "_class" value { list { s: "loc:@w" } } }
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "global_step" op: "VariableV2"
  attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "shape" value { shape {} } } }
node { name: "b" op: "VariableV2"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape {} } } }
node { name: "g" op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "lr" op: "Const"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {}
                                       float_val: 0.1 } } } }
node { name: "update_w" op: "ApplyGradientDescent"
  input: "w" input: "lr" input: "g"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "one" op: "Const"
  attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape {}
                                       int64_val: 1 } } } }
node { name: "increment" op: "AssignAdd" input: "global_step" input: "one"
  input: "^update_w"
  attr { key: "T" value { type: DT_INT64 } } }
node { name: "train" op: "NoOp" input: "^increment" }
)pb";

/// Request bytes as ParameterClient writes them.
class Bytes {
public:
  template <typename T> Bytes &put(T value) {
    const char *raw = reinterpret_cast<const char *>(&value);
    bytes.insert(bytes.end(), raw, raw + sizeof(T));
    return *this;
  }
  Bytes &putString(const std::string &text) {
    put<uint32_t>(text.size());
    bytes.insert(bytes.end(), text.begin(), text.end());
    return *this;
  }
  /// dtype, rank, dims, byte count, then the bytes.
  Bytes &putTensor(int32_t dtype, std::vector<int64_t> shape,
                   const std::vector<char> &data) {
    put<int32_t>(dtype).put<uint32_t>(shape.size());
    for (int64_t dim : shape)
      put<int64_t>(dim);
    put<uint64_t>(data.size());
    bytes.insert(bytes.end(), data.begin(), data.end());
    return *this;
  }
  Bytes &putFloats(std::vector<float> values) {
    std::vector<char> data(values.size() * sizeof(float));
    std::memcpy(data.data(), values.data(), data.size());
    return putTensor(kFloat, {int64_t(values.size())}, data);
  }
  std::vector<char> bytes;
};

std::vector<char> int64Bytes(int64_t value) {
  std::vector<char> data(sizeof value);
  std::memcpy(data.data(), &value, sizeof value);
  return data;
}

class ParameterServerTest : public ::testing::Test {
protected:
  ParameterServerTest() {
    registerAllDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry);
    context->loadAllAvailableDialects();
    auto buffer = llvm::MemoryBuffer::getMemBuffer(kTrainGraph, "train");
    mlir::OwningOpRef<mlir::ModuleOp> module =
        importGraphDef(*buffer, context.get());
    EXPECT_TRUE(module);
    auto created = runtime::Session::create(std::move(module), "", {});
    EXPECT_TRUE(bool(created)) << llvm::toString(created.takeError());
    session = std::move(*created);
    // The ps task's own start: every variable has some value.
    for (const char *name : {"w", "w/Momentum"})
      EXPECT_FALSE(bool(session->writeVariable(name, Tensor(kFloat, {2}))));
    EXPECT_FALSE(bool(session->writeVariable("b", Tensor(kFloat, {}))));
    EXPECT_FALSE(
        bool(session->writeVariable("global_step", Tensor(kInt64, {}))));
  }

  ParameterLayout layout(int numPs) {
    auto built = ParameterLayout::build(*session, "global_step", numPs);
    EXPECT_TRUE(bool(built)) << llvm::toString(built.takeError());
    return built ? std::move(*built) : ParameterLayout();
  }

  /// The initial values: w = [1, 2], global_step = 5.
  Bytes initialize() {
    Bytes request;
    request.put<char>('I').put<uint32_t>(2);
    request.put<uint32_t>(0).putFloats({1, 2});
    request.put<uint32_t>(2).putTensor(kInt64, {}, int64Bytes(5));
    return request;
  }

  /// w as the store holds it.
  std::vector<float> pullW(ParameterStore &store) {
    Bytes request;
    request.put<char>('P').put<uint32_t>(1).put<uint32_t>(0);
    std::vector<char> reply = store.handle(request.bytes, "worker:0");
    EXPECT_EQ(reply.at(0), 'O');
    // Status, dtype, rank, dim, byte count, two floats.
    EXPECT_EQ(reply.size(), 1 + 4 + 4 + 8 + 8 + 8u);
    std::vector<float> w(2);
    std::memcpy(w.data(), reply.data() + reply.size() - 8, 8);
    return w;
  }

  /// The failure message of a reply ("" for another status).
  static std::string failure(const std::vector<char> &reply) {
    if (reply.empty() || reply[0] != 'F' || reply.size() < 5)
      return "";
    uint32_t size;
    std::memcpy(&size, reply.data() + 1, 4);
    return std::string(reply.data() + 5, size);
  }

  mlir::DialectRegistry registry;
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<runtime::Session> session;
};

TEST_F(ParameterServerTest, PlacesAsReplicaDeviceSetter) {
  ParameterLayout one = layout(1);
  EXPECT_EQ(one.variables,
            (std::vector<std::string>{"w", "w/Momentum", "global_step", "b"}));
  EXPECT_EQ(one.owner, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(one.trained, (std::vector<size_t>{0}));
  EXPECT_EQ(one.gradients, (std::vector<std::string>{"g"}));
  EXPECT_EQ(one.globalStep, 2u);
  // global_step on ps 0, then round-robin (w on 1, b on 0); the slot
  // follows its variable.
  EXPECT_EQ(layout(2).owner, (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(layout(3).owner, (std::vector<int>{1, 1, 0, 2}));
}

TEST(ParameterLayoutTest, SparseUpdatesAreRefusedNamingTheVariable) {
  // SGD's sparse update of an embedding: a ScatterSub of its rows.
  constexpr const char *kSparse = R"pb(
node { name: "emb" op: "VariableV2"
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: 4 } } } } }
node { name: "global_step" op: "VariableV2"
  attr { key: "dtype" value { type: DT_INT64 } }
  attr { key: "shape" value { shape {} } } }
node { name: "rows" op: "Placeholder"
  attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "values" op: "Placeholder"
  attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "update_emb" op: "ScatterSub"
  input: "emb" input: "rows" input: "values"
  attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "Tindices" value { type: DT_INT32 } } }
)pb";
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto buffer = llvm::MemoryBuffer::getMemBuffer(kSparse, "sparse");
  mlir::OwningOpRef<mlir::ModuleOp> module = importGraphDef(*buffer, &context);
  ASSERT_TRUE(module);
  auto session = runtime::Session::create(std::move(module), "", {});
  ASSERT_TRUE(bool(session)) << llvm::toString(session.takeError());
  auto layout = ParameterLayout::build(**session, "global_step", 1);
  ASSERT_FALSE(bool(layout));
  EXPECT_EQ(llvm::toString(layout.takeError()),
            "training across processes: the update of variable 'emb' is a "
            "ScatterSub; updates fed across processes are of dense "
            "gradients (sgd, momentum, adam), not sparse ones yet");
}

TEST_F(ParameterServerTest, ServesAfterTheChiefsValuesAndApplies) {
  ParameterLayout placed = layout(1);
  ParameterStore store(*session, placed, "train", 0);
  Bytes pull;
  pull.put<char>('P').put<uint32_t>(0);
  EXPECT_EQ(store.handle(pull.bytes, "worker:0"), std::vector<char>{'N'});
  Bytes push;
  push.put<char>('G').put<uint32_t>(1).put<uint32_t>(0).putFloats({10, 20});
  EXPECT_EQ(store.handle(push.bytes, "worker:0"), std::vector<char>{'N'});

  Bytes hello;
  hello.put<char>('H').put<uint32_t>(4);
  for (const char *name : {"w", "w/Momentum", "global_step", "b"})
    hello.putString(name);
  EXPECT_EQ(store.handle(hello.bytes, "worker:0"), std::vector<char>{'O'});
  Bytes other;
  other.put<char>('H').put<uint32_t>(1).putString("v");
  EXPECT_EQ(failure(store.handle(other.bytes, "worker:1")),
            "worker:1 trains a model whose variables differ from this "
            "task's (1 against 4): every task must run the same job");

  EXPECT_EQ(store.handle(initialize().bytes, "chief:0"),
            std::vector<char>{'O'});
  EXPECT_EQ(pullW(store), (std::vector<float>{1, 2}));
  // w -= 0.1 g; the reply is global_step after the train op's increment,
  // then w after the update (status, step, dtype, rank, dim, byte count,
  // two floats).
  std::vector<char> applied = store.handle(push.bytes, "worker:0");
  ASSERT_EQ(applied.size(), 1 + 8 + 4 + 4 + 8 + 8 + 8u);
  EXPECT_EQ(applied[0], 'O');
  int64_t step;
  std::memcpy(&step, applied.data() + 1, 8);
  EXPECT_EQ(step, 6);
  std::vector<float> w(2);
  std::memcpy(w.data(), applied.data() + applied.size() - 8, 8);
  EXPECT_EQ(w, (std::vector<float>{0, 0}));
  EXPECT_EQ(pullW(store), (std::vector<float>{0, 0}));
  // The next push starts from zero gradients again.
  Bytes none;
  none.put<char>('G').put<uint32_t>(0);
  EXPECT_EQ(store.handle(none.bytes, "worker:0").size(), applied.size());
  EXPECT_EQ(pullW(store), (std::vector<float>{0, 0}));
}

TEST_F(ParameterServerTest, MalformedRequestsGetFailuresNotCrashes) {
  ParameterLayout placed = layout(2);
  // This is ps 1: it serves w (and its slot), not global_step or b.
  ParameterStore store(*session, placed, "train", 1);
  ASSERT_EQ(store.handle(initialize().bytes, "chief:0"),
            std::vector<char>{'O'});
  std::vector<float> before = pullW(store);

  auto expectFailure = [&](const Bytes &request, const std::string &text) {
    std::string message = failure(store.handle(request.bytes, "worker:0"));
    EXPECT_NE(message.find(text), std::string::npos) << message;
  };
  expectFailure(Bytes(), "malformed message: truncated");
  expectFailure(Bytes().put<char>('Z'), "malformed message: request kind");
  expectFailure(Bytes().put<char>('P').put<uint32_t>(3),
                "malformed message: truncated");
  expectFailure(Bytes().put<char>('P').put<uint32_t>(1).put<uint32_t>(2),
                "malformed message: variable 2 is not on this task");
  expectFailure(Bytes().put<char>('P').put<uint32_t>(1).put<uint32_t>(99),
                "malformed message: variable 99 is not on this task");
  // A shape far larger than the bytes sent, or negative, or overflowing,
  // is refused before anything is allocated for it.
  auto pushed = [](int32_t dtype, std::vector<int64_t> shape,
                   std::vector<char> data, uint32_t gradient = 0) {
    Bytes request;
    request.put<char>('G').put<uint32_t>(1).put<uint32_t>(gradient);
    return request.putTensor(dtype, std::move(shape), data);
  };
  expectFailure(pushed(kFloat, {int64_t(1) << 40, int64_t(1) << 40}, {}),
                "malformed message: a float tensor of shape");
  expectFailure(pushed(kFloat, {-2}, {}),
                "malformed message: a float tensor of shape [?] in 0 bytes");
  expectFailure(pushed(kFloat, {int64_t(1) << 62, 4}, std::vector<char>(8)),
                "malformed message: a float tensor of shape");
  expectFailure(pushed(kString, {1}, std::vector<char>(8)),
                "malformed message: a string tensor of shape [1] in 8 bytes");
  expectFailure(pushed(12345, {1}, std::vector<char>(4)), "malformed message");
  Bytes rank;
  rank.put<char>('G')
      .put<uint32_t>(1)
      .put<uint32_t>(0)
      .put<int32_t>(kFloat)
      .put<uint32_t>(1000);
  expectFailure(rank, "malformed message: a tensor of rank 1000");
  expectFailure(pushed(kFloat, {2}, std::vector<char>(8), 7),
                "malformed message: gradient 7 is not of a variable on this "
                "task");
  expectFailure(pushed(kFloat, {3}, std::vector<char>(12)),
                "the gradient of 'w' is a float tensor of shape [3], not [2]");
  expectFailure(pushed(kInt32, {2}, std::vector<char>(8)),
                "the gradient of 'w' is a int32 tensor of shape [2], not [2]");
  Bytes truncatedTensor;
  truncatedTensor.put<char>('G')
      .put<uint32_t>(1)
      .put<uint32_t>(0)
      .put<int32_t>(kFloat)
      .put<uint32_t>(1)
      .put<int64_t>(2)
      .put<uint64_t>(8)
      .put<float>(1);
  expectFailure(truncatedTensor, "malformed message: truncated");
  // Nothing was applied.
  EXPECT_EQ(pullW(store), before);
}

} // namespace
