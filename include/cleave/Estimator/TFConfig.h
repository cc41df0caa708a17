//===- TFConfig.h - RunConfig's distributed settings from TF_CONFIG -*- C++
//-*-===//
//
// The JSON a cluster manager puts in TF_CONFIG for each task ("cluster":
// job name -> addresses, "task": type and index, and optionally
// "model_dir", "session_master", "service", "environment"), read as
// tf.estimator.RunConfig reads it, with its checks and messages: the task
// type and index, whether it is the chief, how many workers and ps tasks
// there are, and the task's global id in the cluster.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_ESTIMATOR_TFCONFIG_H
#define CLEAVE_ESTIMATOR_TFCONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cleave::estimator {

/// RunConfig's TaskType.
namespace task_type {
inline constexpr const char *kMaster = "master";
inline constexpr const char *kPs = "ps";
inline constexpr const char *kWorker = "worker";
inline constexpr const char *kChief = "chief";
inline constexpr const char *kEvaluator = "evaluator";
} // namespace task_type

/// tf.train.ClusterSpec: each job's tasks by index (a list in TF_CONFIG is
/// indices 0..n-1; a dict may leave gaps).
struct ClusterSpec {
  std::map<std::string, std::map<int64_t, std::string>> jobs;

  bool empty() const { return jobs.empty(); }
  bool hasJob(llvm::StringRef job) const { return jobs.count(job.str()); }
  /// len(job_tasks(job)): one past the largest index.
  int64_t getJobTaskListSize(llvm::StringRef job) const;
  /// The address of task `index` of `job` (empty when there is none).
  std::string getAddress(llvm::StringRef job, int64_t index) const;
  /// str(ClusterSpec): "ClusterSpec({'chief': ['host0:2222'], ...})".
  std::string str() const;
};

/// What RunConfig derives from TF_CONFIG.
struct DistributedConfig {
  /// Empty for local runs and for the evaluator (not part of training).
  ClusterSpec cluster;
  std::string taskType = task_type::kWorker;
  int64_t taskId = 0;
  /// "grpc://<address>" of this task; empty when local or alone.
  std::string master;
  std::string evaluationMaster;
  int64_t numPsReplicas = 0;
  /// Workers including the chief (or master).
  int64_t numWorkerReplicas = 1;
  /// The chief (or master) is 0, then the other jobs but ps in
  /// alphabetical order, each by index, ps last; none for the evaluator.
  std::optional<int64_t> globalIdInCluster = 0;
  bool isChief = true;
  /// TF_CONFIG's "model_dir" (empty: not given).
  std::string modelDir;
  /// TF_CONFIG's "environment" ("google": no in-process server).
  std::string environment;

  /// Whether the run is local: no cluster, and not an evaluator.
  bool isLocal() const {
    return cluster.empty() && taskType != task_type::kEvaluator;
  }
};

/// Parses TF_CONFIG's JSON (empty: a local run) with RunConfig's checks.
llvm::Expected<DistributedConfig> parseTFConfig(llvm::StringRef json);

/// RunConfig's _get_model_dir: the model directory a run uses, given the
/// job's (or the command line's) and TF_CONFIG's; they must agree.
llvm::Expected<std::string> resolveModelDir(const DistributedConfig &config,
                                            llvm::StringRef modelDir);

} // namespace cleave::estimator

#endif // CLEAVE_ESTIMATOR_TFCONFIG_H
