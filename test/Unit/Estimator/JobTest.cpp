//===- JobTest.cpp - graph-estimator jobs: parsing and settings -----------===//

#include "cleave/Estimator/Job.h"

#include "gtest/gtest.h"

using namespace cleave::estimator;

namespace {

Job parse(llvm::StringRef text) {
  auto job = parseJob(text, "job.pbtxt");
  EXPECT_TRUE(bool(job)) << (job ? "" : llvm::toString(job.takeError()));
  return job ? *job : Job();
}

std::string settingsError(llvm::StringRef text,
                          const JobOverrides &overrides = {}) {
  auto settings = getRunSettings(parse(text), overrides);
  if (settings)
    return "";
  return llvm::toString(settings.takeError());
}

TEST(JobTest, ParsesTheIssueSketch) {
  Job job = parse(R"(
    model {
      graph { train: "t.pbtxt" eval: "e.pbtxt" predict: "p.pbtxt" }
      features { key: "x" placeholder: "x" }
      labels { key: "labels" placeholder: "labels" }
      loss: "loss"
      optimizer { sgd { learning_rate: 0.001 } }
      predictions { key: "classes" tensor: "ArgMax" }
      eval_metrics {
        tensors { key: "labels" tensor: "labels" }
        builtin { metric { accuracy { labels: "labels" logits: "logits" } } }
      }
    }
    config { train_batch_size: 100 num_shards: 2 iterations_per_loop: 100
             per_host_input_for_training: PER_HOST_V1
             save_checkpoints_steps: 600 keep_checkpoint_max: 5 })");
  EXPECT_EQ(job.model().graph().train(), "t.pbtxt");
  EXPECT_EQ(job.model().optimizer().sgd().learning_rate(), 0.001);
  EXPECT_EQ(job.model().eval_metrics().builtin().metric(0).accuracy().logits(),
            "logits");
  auto settings = getRunSettings(job, {});
  ASSERT_TRUE(bool(settings));
  EXPECT_TRUE(settings->useTpu);
  EXPECT_EQ(settings->numShards, 2);
  EXPECT_EQ(settings->iterationsPerLoop, 100);
  EXPECT_EQ(settings->saveCheckpointsSteps, 600);
  EXPECT_FALSE(settings->saveCheckpointsSecs);
  EXPECT_EQ(settings->getPerReplicaBatchSize(Mode::Train), 50);
}

TEST(JobTest, ErrorsPointAtTheLine) {
  auto job =
      parseJob("config {\n  train_batch_size: 10\n  batch: 3\n}\n", "j.pbtxt");
  ASSERT_FALSE(bool(job));
  EXPECT_EQ(llvm::toString(job.takeError()),
            "j.pbtxt:3:8: Message type \"cleave.estimator.Config\" has no "
            "field named \"batch\".");
  auto typed = parseJob("config { num_shards: \"two\" }", "j.pbtxt");
  ASSERT_FALSE(bool(typed));
  EXPECT_NE(llvm::toString(typed.takeError()).find("j.pbtxt:1:22:"),
            std::string::npos);
}

TEST(JobTest, TensorFlowDefaults) {
  auto settings = getRunSettings(parse("config { train_batch_size: 8 }"), {});
  ASSERT_TRUE(bool(settings));
  // TPUEstimator(use_tpu=True), TPUConfig(iterations_per_loop=2),
  // RunConfig(save_checkpoints_secs=600, keep_checkpoint_max=5,
  // log_step_count_steps=100).
  EXPECT_TRUE(settings->useTpu);
  EXPECT_TRUE(settings->evalOnTpu);
  EXPECT_EQ(settings->iterationsPerLoop, 2);
  EXPECT_EQ(settings->saveCheckpointsSecs, 600);
  EXPECT_EQ(settings->keepCheckpointMax, 5);
  EXPECT_EQ(settings->logStepCountSteps, 100);
  // Off the device, model_fn sees the whole batch.
  JobOverrides off;
  off.useTpu = false;
  auto cpu = getRunSettings(
      parse("config { train_batch_size: 8 num_shards: 4 }"), off);
  ASSERT_TRUE(bool(cpu));
  EXPECT_EQ(cpu->getReplicas(Mode::Train), 1);
  EXPECT_EQ(cpu->getPerReplicaBatchSize(Mode::Train), 8);
}

TEST(JobTest, TensorFlowMessages) {
  EXPECT_EQ(settingsError("config { use_tpu: true }"),
            "config.train_batch_size: `train_batch_size` cannot be `None`");
  EXPECT_EQ(settingsError("config { train_batch_size: -4 }"),
            "config.train_batch_size: train_batch_size must be positive, "
            "got -4");
  EXPECT_EQ(settingsError("config { train_batch_size: 8 num_shards: -1 }"),
            "config.num_shards: TPUConfig num_shards must be positive, got -1");
  EXPECT_EQ(settingsError("config { train_batch_size: 8 "
                          "save_checkpoints_steps: 10 "
                          "save_checkpoints_secs: 10 }"),
            "config: `save_checkpoints_steps` and `save_checkpoints_secs` "
            "cannot be both set.");
  EXPECT_EQ(settingsError("config { train_batch_size: 8 "
                          "keep_checkpoint_max: -1 }"),
            "config.keep_checkpoint_max: keep_checkpoint_max should be >= 0");
  EXPECT_EQ(settingsError("config { train_batch_size: 8 "
                          "log_step_count_steps: 0 }"),
            "config.log_step_count_steps: log_step_count_steps should be > 0");
  EXPECT_NE(settingsError("config { train_batch_size: 8 "
                          "iterations_per_loop: 0 }")
                .find("Invalid TPUConfig `iterations_per_loop` value. Value "
                      "must be positive integer value or time-based value "
                      "`<N><s|m|h>` where <N> is anypositive integer"),
            std::string::npos);
  EXPECT_EQ(settingsError("config { train_batch_size: 8 "
                          "params { key: \"batch_size\" value: \"3\" } "
                          "params { key: \"lr\" value: \"0.1\" } }"),
            "config.params: ['batch_size', 'context'] are reserved keys but "
            "existed in params {'batch_size': '3', 'lr': '0.1'}.");
  EXPECT_EQ(settingsError("model { optimizer { sgd { learning_rate: 1 } "
                          "reduction: NONE } } config { train_batch_size: 8 }"),
            "model.optimizer.reduction: Unsupported reduction: none.");
}

TEST(JobTest, BatchSizesAgainstReplicas) {
  auto settings = getRunSettings(
      parse("config { train_batch_size: 6 eval_batch_size: 7 num_shards: 4 }"),
      {});
  ASSERT_TRUE(bool(settings));
  EXPECT_EQ(llvm::toString(checkBatchSize(*settings, Mode::Train)),
            "config.train_batch_size: train batch size 6 must be divisible "
            "by number of replicas 4");
  EXPECT_EQ(llvm::toString(checkBatchSize(*settings, Mode::Eval)),
            "config.eval_batch_size: eval batch size 7 must be divisible by "
            "number of replicas 4");
  EXPECT_EQ(llvm::toString(checkBatchSize(*settings, Mode::Predict)),
            "config.predict_batch_size: predict_batch_size in TPUEstimator "
            "constructor cannot be `None` if .predict is running on TPU.");
  // eval_on_tpu: false evaluates on the host, unsplit.
  auto hostEval = getRunSettings(
      parse("config { train_batch_size: 8 eval_batch_size: 7 num_shards: 4 "
            "eval_on_tpu: false }"),
      {});
  ASSERT_TRUE(bool(hostEval));
  EXPECT_FALSE(bool(checkBatchSize(*hostEval, Mode::Eval)));
  EXPECT_EQ(hostEval->getPerReplicaBatchSize(Mode::Eval), 7);
}

} // namespace
