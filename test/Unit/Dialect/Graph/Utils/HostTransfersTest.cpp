//===- HostTransfersTest.cpp - channels and the host sides they tie -------===//

#include "cleave/Dialect/Graph/Utils/HostTransfers.h"

#include "cleave/Dialect/Graph/IR/Graph.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;

namespace {

// The flat form of a split graph: the device side tagged `c`, two host
// sides sending on its channel, only one of which reads c's program key.
constexpr const char *kSplit = R"mlir(
graph.graph {
  %x, %x_ctl = graph.node "Placeholder" "x" {dtype = f32} : () -> tensor<f32>
  %key, %key_ctl = graph.node "_XlaCompileMlirPlaceholderProgramKey" "c/program_key" : () -> tensor<3x!graph.string>
  %other, %other_ctl = graph.node "_XlaCompileMlirPlaceholderProgramKey" "program" : () -> tensor<3x!graph.string>
  %recv, %recv_ctl = graph.node "_XlaRecvAtHost" "recv"(%key) {Toutputs = [f32], key = "args"} : (tensor<3x!graph.string>) -> tensor<f32>
  %h, %h_ctl = graph.node "Exp" "h"(%recv) {T = f32} : (tensor<f32>) -> tensor<f32>
  %send_ctl = graph.node "_XlaSendFromHost" "send"(%h, %key) {Tinputs = [f32], key = "retvals"} : (tensor<f32>, tensor<3x!graph.string>) -> ()
  %stray_ctl = graph.node "_XlaSendFromHost" "stray"(%h, %other) {Tinputs = [f32], key = "retvals"} : (tensor<f32>, tensor<3x!graph.string>) -> ()
  %hc, %hc_ctl = graph.node "_XlaHostComputeMlir" "hc"(%x) {Tinputs = [f32], Toutputs = [f32], _tpu_replicate = "c", recv_key = "retvals", send_key = "args"} : (tensor<f32>) -> tensor<f32>
  %q_ctl = graph.node "InfeedEnqueueTuple" "enqueue"(%x) {dtypes = [f32], shapes = [[]]} : (tensor<f32>) -> ()
}
)mlir";

class HostTransfersTest : public ::testing::Test {
protected:
  void SetUp() override {
    ctx.loadDialect<GraphDialect>();
    module = parseSourceString<ModuleOp>(kSplit, &ctx);
    ASSERT_TRUE(module);
    body = &(*module->getOps<GraphOp>().begin()).getBody().front();
  }
  Operation *node(StringRef name) {
    for (auto n : body->getOps<NodeOp>())
      if (n.getName() == name)
        return n;
    return nullptr;
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  Block *body = nullptr;
};

TEST_F(HostTransfersTest, ChannelUseNamesKeysAndQueues) {
  ChannelUse device = getChannelUse(*module, {node("hc")});
  EXPECT_TRUE(device.sentChannels.contains("args"));
  EXPECT_TRUE(device.receivedChannels.contains("retvals"));
  ChannelUse host = getChannelUse(*module, {node("recv"), node("send")});
  EXPECT_TRUE(host.receivedChannels.contains("args"));
  EXPECT_TRUE(host.sentChannels.contains("retvals"));
  EXPECT_TRUE(getChannelUse(*module, {node("enqueue")})
                  .sentQueues.contains("infeed"));
}

TEST_F(HostTransfersTest, SendersOfTheComputationsProgramKeyOnly) {
  llvm::DenseSet<Operation *> needed = {node("x"), node("hc")};
  ChannelUse use = getChannelUse(*module, llvm::to_vector(needed));
  SmallVector<Operation *> senders =
      findChannelSenders(*module, *body, needed, use);
  // `stray` sends on the channel too, but for another program.
  ASSERT_EQ(senders.size(), 1u);
  EXPECT_EQ(senders[0], node("send"));
  // Nothing to add once the sender is needed, or when nothing receives.
  needed.insert(node("send"));
  EXPECT_TRUE(findChannelSenders(*module, *body, needed, use).empty());
  EXPECT_TRUE(
      findChannelSenders(*module, *body, {node("x")}, ChannelUse()).empty());
}

} // namespace
