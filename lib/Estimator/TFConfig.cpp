//===- TFConfig.cpp - RunConfig's distributed settings from TF_CONFIG -----===//
//
// tensorflow/estimator's run_config.py (_init_distributed_setting_from_
// environment_var, _validate_task_type_and_task_id, _get_global_id_in_
// cluster, _get_session_master) and server_lib.ClusterSpec, over the JSON
// parsed by protobuf into a google.protobuf.Struct.
//
//===----------------------------------------------------------------------===//

#include "cleave/Estimator/TFConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>

using namespace cleave;
using namespace cleave::estimator;
namespace pb = google::protobuf;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Python's repr of a str.
static std::string pythonRepr(llvm::StringRef text) {
  char quote = text.contains('\'') && !text.contains('"') ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote || c == '\\')
      out += '\\';
    out += c;
  }
  return out + quote;
}

/// Python's repr of a JSON value as json.loads gives it.
static std::string pythonRepr(const pb::Value &value) {
  switch (value.kind_case()) {
  case pb::Value::kStringValue:
    return pythonRepr(value.string_value());
  case pb::Value::kNumberValue: {
    double number = value.number_value();
    if (number == std::trunc(number) && std::abs(number) < 1e15)
      return std::to_string(int64_t(number));
    return std::to_string(number);
  }
  case pb::Value::kBoolValue:
    return value.bool_value() ? "True" : "False";
  case pb::Value::kListValue: {
    std::string out = "[";
    for (const pb::Value &item : value.list_value().values())
      out += (out.size() > 1 ? ", " : "") + pythonRepr(item);
    return out + "]";
  }
  case pb::Value::kStructValue: {
    std::string out = "{";
    for (const auto &[key, item] : value.struct_value().fields())
      out += (out.size() > 1 ? ", " : "") + pythonRepr(key) + ": " +
             pythonRepr(item);
    return out + "}";
  }
  default:
    return "None";
  }
}

/// type(value) as Python prints it.
static std::string pythonType(const pb::Value &value) {
  switch (value.kind_case()) {
  case pb::Value::kStringValue:
    return "<class 'str'>";
  case pb::Value::kNumberValue:
    return value.number_value() == std::trunc(value.number_value())
               ? "<class 'int'>"
               : "<class 'float'>";
  case pb::Value::kBoolValue:
    return "<class 'bool'>";
  case pb::Value::kListValue:
    return "<class 'list'>";
  case pb::Value::kStructValue:
    return "<class 'dict'>";
  default:
    return "<class 'NoneType'>";
  }
}

/// Python's int(value) for a task index.
static llvm::Expected<int64_t> toInt(const pb::Value &value) {
  if (value.kind_case() == pb::Value::kNumberValue &&
      std::abs(value.number_value()) < 0x1p62)
    return int64_t(value.number_value());
  if (value.kind_case() == pb::Value::kStringValue) {
    int64_t parsed;
    if (!llvm::StringRef(value.string_value()).trim().getAsInteger(10, parsed))
      return parsed;
  }
  if (value.kind_case() == pb::Value::kBoolValue)
    return int64_t(value.bool_value());
  return error("invalid literal for int() with base 10: " + pythonRepr(value));
}

int64_t ClusterSpec::getJobTaskListSize(llvm::StringRef job) const {
  auto it = jobs.find(job.str());
  if (it == jobs.end() || it->second.empty())
    return 0;
  return it->second.rbegin()->first + 1;
}

std::string ClusterSpec::getAddress(llvm::StringRef job, int64_t index) const {
  auto it = jobs.find(job.str());
  if (it == jobs.end())
    return "";
  auto task = it->second.find(index);
  return task == it->second.end() ? "" : task->second;
}

std::string ClusterSpec::str() const {
  // as_dict: a list where the indices are 0..n-1, else a dict.
  std::string out = "ClusterSpec({";
  bool first = true;
  for (const auto &[job, tasks] : jobs) {
    out += (first ? "" : ", ") + pythonRepr(job) + ": ";
    first = false;
    bool dense =
        tasks.empty() || tasks.rbegin()->first + 1 == int64_t(tasks.size());
    std::string items;
    for (const auto &[index, address] : tasks)
      items += (items.empty() ? "" : ", ") +
               (dense ? "" : std::to_string(index) + ": ") +
               pythonRepr(address);
    out += tasks.empty() ? "{}" : dense ? "[" + items + "]" : "{" + items + "}";
  }
  return out + "})";
}

/// server_lib.ClusterSpec(dict).
static llvm::Expected<ClusterSpec> parseCluster(const pb::Value &cluster) {
  ClusterSpec spec;
  if (cluster.kind_case() != pb::Value::kStructValue)
    return error("`cluster` must be a dictionary mapping one or more job "
                 "names to lists of network addresses, or a `ClusterDef` "
                 "protocol buffer");
  for (const auto &[job, tasks] : cluster.struct_value().fields()) {
    std::map<int64_t, std::string> &indexed = spec.jobs[job];
    auto add = [&](int64_t index, const pb::Value &address) -> llvm::Error {
      if (address.kind_case() != pb::Value::kStringValue)
        return error("Task address " + pythonRepr(address) +
                     " must be bytes or unicode");
      indexed[index] = address.string_value();
      return llvm::Error::success();
    };
    if (tasks.kind_case() == pb::Value::kListValue) {
      for (int i = 0; i < tasks.list_value().values_size(); ++i)
        if (llvm::Error failure = add(i, tasks.list_value().values(i)))
          return std::move(failure);
    } else if (tasks.kind_case() == pb::Value::kStructValue) {
      for (const auto &[key, address] : tasks.struct_value().fields()) {
        pb::Value keyValue;
        keyValue.set_string_value(key);
        auto index = toInt(keyValue);
        if (!index)
          return index.takeError();
        if (llvm::Error failure = add(*index, address))
          return std::move(failure);
      }
    } else {
      return error("The tasks for job " + pythonRepr(job) +
                   " must be a list or a dictionary from integers to "
                   "strings.");
    }
  }
  return spec;
}

static const pb::Value *field(const pb::Struct &object, llvm::StringRef key) {
  auto it = object.fields().find(key.str());
  return it == object.fields().end() ? nullptr : &it->second;
}

/// _validate_task_type_and_task_id.
static llvm::Error validateTask(const ClusterSpec &cluster,
                                const pb::Struct &task,
                                llvm::StringRef chiefType,
                                DistributedConfig &config) {
  if (!cluster.hasJob(chiefType))
    return error("If \"cluster\" is set in TF_CONFIG, it must have one \"" +
                 chiefType + "\" node.");
  if (cluster.jobs.at(chiefType.str()).size() > 1)
    return error("The \"cluster\" in TF_CONFIG must have only one \"" +
                 chiefType + "\" node.");
  const pb::Value *type = field(task, "type");
  const pb::Value *index = field(task, "index");
  bool typeSet = type &&
                 !(type->kind_case() == pb::Value::kStringValue &&
                   type->string_value().empty()) &&
                 type->kind_case() != pb::Value::kNullValue;
  if (!typeSet)
    return error("If \"cluster\" is set in TF_CONFIG, task type must be set.");
  if (type->kind_case() != pb::Value::kStringValue)
    return error("TF_CONFIG: task type must be a string, given " +
                 pythonRepr(*type));
  if (!index || index->kind_case() == pb::Value::kNullValue)
    return error("If \"cluster\" is set in TF_CONFIG, task index must be set.");
  auto id = toInt(*index);
  if (!id)
    return id.takeError();
  config.taskType = type->string_value();
  config.taskId = *id;
  if (config.taskId < 0)
    return error("Task index must be non-negative number.");
  // The evaluator is not part of the training cluster.
  if (config.taskType == task_type::kEvaluator)
    return llvm::Error::success();
  if (!cluster.hasJob(config.taskType))
    return error(config.taskType +
                 " is not a valid task_type in the "
                 "cluster_spec:\n" +
                 cluster.str() +
                 "\n\nNote that these values may be coming from the "
                 "TF_CONFIG environment variable.");
  if (config.taskId >= cluster.getJobTaskListSize(config.taskType))
    return error(llvm::Twine(config.taskId) +
                 " is not a valid task_id for task_type " + config.taskType +
                 " in the cluster_spec:\n" + cluster.str() +
                 "\n\nNote that these values may be coming from the "
                 "TF_CONFIG environment variable.");
  return llvm::Error::success();
}

/// _get_global_id_in_cluster.
static int64_t getGlobalId(const ClusterSpec &cluster, llvm::StringRef type,
                           int64_t id, llvm::StringRef chiefType) {
  std::vector<std::string> order = {chiefType.str()};
  for (const auto &[job, tasks] : cluster.jobs)
    if (job != chiefType && job != task_type::kPs)
      order.push_back(job);
  if (cluster.hasJob(task_type::kPs))
    order.push_back(task_type::kPs);
  int64_t next = 0;
  for (const std::string &job : order) {
    if (job == type)
      return next + id;
    next += cluster.getJobTaskListSize(job);
  }
  return next;
}

/// _get_session_master.
static std::string getMaster(const ClusterSpec &cluster, const pb::Struct &root,
                             const DistributedConfig &config) {
  if (const pb::Value *master = field(root, "session_master"))
    return master->string_value();
  if (cluster.jobs.size() == 1 && cluster.jobs.begin()->second.size() == 1)
    return "";
  return "grpc://" + cluster.getAddress(config.taskType, config.taskId);
}

/// _get_eval_session_master.
static llvm::Expected<std::string>
getEvaluationMaster(const pb::Struct &root, llvm::StringRef taskType) {
  const pb::Value *master = field(root, "eval_session_master");
  if (taskType == task_type::kEvaluator)
    return master ? master->string_value() : std::string();
  if (master)
    return error("Key (eval_session_master) should not be set for task type "
                 "other than evaluator. Task type: " +
                 taskType);
  return std::string();
}

static int64_t countJobTasks(const ClusterSpec &cluster, llvm::StringRef job) {
  auto it = cluster.jobs.find(job.str());
  return it == cluster.jobs.end() ? 0 : int64_t(it->second.size());
}

llvm::Expected<DistributedConfig>
estimator::parseTFConfig(llvm::StringRef json) {
  DistributedConfig config;
  pb::Struct root;
  if (!json.trim().empty()) {
    pb::util::JsonParseOptions options;
    auto status = pb::util::JsonStringToMessage(
        pb::StringPiece(json.data(), json.size()), &root, options);
    if (!status.ok())
      return error("TF_CONFIG is not a JSON object: " +
                   std::string(status.message()));
  }
  if (const pb::Value *modelDir = field(root, "model_dir")) {
    if (modelDir->kind_case() != pb::Value::kStringValue)
      return error("TF_CONFIG: model_dir must be a string, given " +
                   pythonRepr(*modelDir));
    if (modelDir->string_value().empty())
      return error("model_dir in TF_CONFIG should be non-empty.");
    config.modelDir = modelDir->string_value();
  }
  if (const pb::Value *environment = field(root, "environment"))
    config.environment = environment->string_value();
  if (const pb::Value *service = field(root, "service"))
    if (service->kind_case() != pb::Value::kStructValue &&
        service->kind_case() != pb::Value::kNullValue)
      return error("If \"service\" is set in TF_CONFIG, it must be a dict. "
                   "Given " +
                   pythonType(*service));

  ClusterSpec cluster;
  if (const pb::Value *value = field(root, "cluster")) {
    auto parsed = parseCluster(*value);
    if (!parsed)
      return parsed.takeError();
    cluster = std::move(*parsed);
  }
  pb::Struct task;
  if (const pb::Value *value = field(root, "task")) {
    if (value->kind_case() != pb::Value::kStructValue)
      return error("TF_CONFIG: \"task\" must be a dict, given " +
                   pythonType(*value));
    task = value->struct_value();
  }

  if (cluster.empty()) {
    // Local: the task may only say it is worker 0.
    if (const pb::Value *type = field(task, "type"))
      config.taskType = type->string_value();
    if (const pb::Value *index = field(task, "index")) {
      auto id = toInt(*index);
      if (!id)
        return id.takeError();
      config.taskId = *id;
    }
    if (config.taskType != task_type::kWorker)
      return error("If \"cluster\" is not set in TF_CONFIG, task type must "
                   "be WORKER.");
    if (config.taskId != 0)
      return error("If \"cluster\" is not set in TF_CONFIG, task index must "
                   "be 0.");
    if (const pb::Value *master = field(root, "session_master"))
      config.master = master->string_value();
    if (const pb::Value *master = field(root, "eval_session_master"))
      config.evaluationMaster = master->string_value();
    return config;
  }

  // A legacy cluster has a master instead of a chief.
  bool withMaster = cluster.hasJob(task_type::kMaster);
  llvm::StringRef chiefType =
      withMaster ? task_type::kMaster : task_type::kChief;
  if (withMaster && cluster.hasJob(task_type::kChief))
    return error("If `master` node exists in `cluster`, job `chief` is not "
                 "supported.");
  if (llvm::Error failure = validateTask(cluster, task, chiefType, config))
    return std::move(failure);
  if (withMaster && config.taskType == task_type::kEvaluator)
    return error("If `master` node exists in `cluster`, task_type "
                 "`evaluator` is not supported.");
  auto evaluationMaster = getEvaluationMaster(root, config.taskType);
  if (!evaluationMaster)
    return evaluationMaster.takeError();
  config.evaluationMaster = std::move(*evaluationMaster);
  config.isChief = config.taskType == chiefType;
  if (config.taskType == task_type::kEvaluator) {
    // Not part of the training cluster.
    config.numPsReplicas = 0;
    config.numWorkerReplicas = 0;
    config.globalIdInCluster = std::nullopt;
    return config;
  }
  config.master = getMaster(cluster, root, config);
  config.numPsReplicas = countJobTasks(cluster, task_type::kPs);
  config.numWorkerReplicas = countJobTasks(cluster, task_type::kWorker) +
                             countJobTasks(cluster, chiefType);
  config.globalIdInCluster =
      getGlobalId(cluster, config.taskType, config.taskId, chiefType);
  config.cluster = std::move(cluster);
  return config;
}

llvm::Expected<std::string>
estimator::resolveModelDir(const DistributedConfig &config,
                           llvm::StringRef modelDir) {
  if (config.modelDir.empty())
    return modelDir.str();
  if (!modelDir.empty() && modelDir != config.modelDir)
    return error("`model_dir` provided in RunConfig construct, if set, must "
                 "have the same value as the model_dir in TF_CONFIG. "
                 "model_dir: " +
                 modelDir + "\nTF_CONFIG[\"model_dir\"]: " + config.modelDir +
                 ".\n");
  return config.modelDir;
}
