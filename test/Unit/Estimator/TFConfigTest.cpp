//===- TFConfigTest.cpp - RunConfig's settings from TF_CONFIG -------------===//
//
// The examples of RunConfig's docstring and of the seed: each task's type,
// index, master, counts and global id in the cluster.
//
//===----------------------------------------------------------------------===//

#include "cleave/Estimator/TFConfig.h"

#include "gtest/gtest.h"

using namespace cleave::estimator;

namespace {

DistributedConfig parse(llvm::StringRef json) {
  auto config = parseTFConfig(json);
  EXPECT_TRUE(bool(config))
      << (config ? "" : llvm::toString(config.takeError()));
  return config ? *config : DistributedConfig();
}

std::string parseError(llvm::StringRef json) {
  auto config = parseTFConfig(json);
  return config ? "" : llvm::toString(config.takeError());
}

const char *kCluster = R"("cluster": {"chief": ["host0:2222"],
                           "ps": ["host1:2222", "host2:2222"],
                           "worker": ["host3:2222", "host4:2222",
                                      "host5:2222"]})";

std::string task(llvm::StringRef type, int index) {
  return std::string("{") + kCluster + R"(, "task": {"type": ")" + type.str() +
         R"(", "index": )" + std::to_string(index) + "}}";
}

TEST(TFConfigTest, LocalWithoutTFConfig) {
  for (const char *json : {"", "{}", R"({"task": {"type": "worker"}})"}) {
    DistributedConfig config = parse(json);
    EXPECT_TRUE(config.isLocal());
    EXPECT_EQ(config.taskType, "worker");
    EXPECT_EQ(config.taskId, 0);
    EXPECT_TRUE(config.isChief);
    EXPECT_EQ(config.numWorkerReplicas, 1);
    EXPECT_EQ(config.numPsReplicas, 0);
    EXPECT_EQ(config.globalIdInCluster, 0);
    EXPECT_EQ(config.master, "");
  }
}

TEST(TFConfigTest, RunConfigDocstringExamples) {
  DistributedConfig worker = parse(task("worker", 1));
  EXPECT_FALSE(worker.isLocal());
  EXPECT_EQ(worker.master, "grpc://host4:2222");
  EXPECT_EQ(worker.taskId, 1);
  EXPECT_EQ(worker.numPsReplicas, 2);
  EXPECT_EQ(worker.numWorkerReplicas, 4);
  EXPECT_EQ(worker.taskType, "worker");
  EXPECT_FALSE(worker.isChief);

  DistributedConfig chief = parse(task("chief", 0));
  EXPECT_EQ(chief.master, "grpc://host0:2222");
  EXPECT_TRUE(chief.isChief);
  EXPECT_EQ(chief.numWorkerReplicas, 4);

  // Not part of the training cluster.
  DistributedConfig evaluator = parse(task("evaluator", 0));
  EXPECT_EQ(evaluator.master, "");
  EXPECT_EQ(evaluator.evaluationMaster, "");
  EXPECT_EQ(evaluator.numPsReplicas, 0);
  EXPECT_EQ(evaluator.numWorkerReplicas, 0);
  EXPECT_TRUE(evaluator.cluster.empty());
  EXPECT_FALSE(evaluator.isLocal());
  EXPECT_FALSE(evaluator.isChief);
  EXPECT_FALSE(evaluator.globalIdInCluster);
}

TEST(TFConfigTest, GlobalIdsAsTheDocstringTable) {
  // chief 0, the workers 1-3, the ps tasks last.
  EXPECT_EQ(parse(task("chief", 0)).globalIdInCluster, 0);
  EXPECT_EQ(parse(task("worker", 0)).globalIdInCluster, 1);
  EXPECT_EQ(parse(task("worker", 2)).globalIdInCluster, 3);
  EXPECT_EQ(parse(task("ps", 0)).globalIdInCluster, 4);
  EXPECT_EQ(parse(task("ps", 1)).globalIdInCluster, 5);
  // Other jobs alphabetically between the chief and ps.
  DistributedConfig other = parse(
      R"({"cluster": {"ps": ["a:1"], "worker": ["b:1"], "chief": ["c:1"],
                      "aux": ["d:1", "e:1"]},
          "task": {"type": "worker", "index": 0}})");
  EXPECT_EQ(other.globalIdInCluster, 3);
}

TEST(TFConfigTest, LegacyMasterCluster) {
  DistributedConfig master = parse(
      R"({"cluster": {"master": ["a:1"], "worker": ["b:1", "c:1"]},
          "task": {"type": "master", "index": 0}})");
  EXPECT_TRUE(master.isChief);
  EXPECT_EQ(master.numWorkerReplicas, 3);
  EXPECT_EQ(master.globalIdInCluster, 0);
  EXPECT_EQ(master.master, "grpc://a:1");
}

TEST(TFConfigTest, OneNodeAndSessionMaster) {
  // A cluster of one node runs locally (master '').
  EXPECT_EQ(parse(R"({"cluster": {"chief": ["a:1"]},
                      "task": {"type": "chief", "index": 0}})")
                .master,
            "");
  EXPECT_EQ(parse(R"({"cluster": {"chief": ["a:1"], "worker": ["b:1"]},
                      "task": {"type": "chief", "index": 0},
                      "session_master": "grpc://elsewhere:1"})")
                .master,
            "grpc://elsewhere:1");
}

TEST(TFConfigTest, IndexAsStringAndSparseJobs) {
  DistributedConfig config = parse(
      R"({"cluster": {"chief": ["a:1"], "worker": {"2": "c:1", "0": "b:1"}},
          "task": {"type": "worker", "index": "2"}})");
  EXPECT_EQ(config.taskId, 2);
  EXPECT_EQ(config.master, "grpc://c:1");
  EXPECT_EQ(config.numWorkerReplicas, 3);
  EXPECT_EQ(config.cluster.str(),
            "ClusterSpec({'chief': ['a:1'], 'worker': {0: 'b:1', 2: 'c:1'}})");
  EXPECT_EQ(parseError(R"({"cluster": {"chief": ["a:1"]},
                           "task": {"type": "chief", "index": "x"}})"),
            "invalid literal for int() with base 10: 'x'");
}

TEST(TFConfigTest, ModelDir) {
  DistributedConfig config = parse(R"({"model_dir": "/shared/m"})");
  EXPECT_EQ(llvm::cantFail(resolveModelDir(config, "")), "/shared/m");
  EXPECT_EQ(llvm::cantFail(resolveModelDir(config, "/shared/m")), "/shared/m");
  auto conflict = resolveModelDir(config, "/other");
  ASSERT_FALSE(bool(conflict));
  EXPECT_NE(llvm::toString(conflict.takeError()).find("must have the same"),
            std::string::npos);
  EXPECT_EQ(llvm::cantFail(resolveModelDir(parse("{}"), "/mine")), "/mine");
}

} // namespace
