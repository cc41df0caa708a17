//===- ParameterServer.h - asynchronous training with ps tasks --*- C++ -*-===//
//
// TensorFlow's between-graph replication with parameter servers, over
// Gloo's point-to-point messages. The train graph's variables are placed
// on the ps tasks as replica_device_setter places them (round-robin in
// graph order, global_step on ps 0, a variable colocated with another,
// such as an optimizer slot, with it). Each trainer pulls the variables
// its step reads, computes the gradients, and pushes them; each ps applies
// the pushed gradients of its variables with the train graph's own
// optimizer ops (slots on the ps), one push at a time. The chief puts the
// variables it initialized or restored onto the ps tasks, and pulls them
// all back before each checkpoint it writes.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_ESTIMATOR_PARAMETERSERVER_H
#define CLEAVE_LIB_ESTIMATOR_PARAMETERSERVER_H

#include "GradientExchange.h"

#include "cleave/Estimator/Estimator.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cleave::runtime {
class ProcessGroup;
} // namespace cleave::runtime

namespace cleave::estimator {

class InfoLog;

/// Where each variable of the train graph lives, and the gradients a
/// trainer pushes.
struct ParameterLayout {
  /// The variables a checkpoint holds, in graph order, and the ps task
  /// (index) of each.
  std::vector<std::string> variables;
  std::vector<int> owner;
  /// Per trained variable: its index in `variables` and the tensor its
  /// optimizer update reads as the gradient.
  std::vector<size_t> trained;
  std::vector<std::string> gradients;
  size_t globalStep = 0;

  /// The layout of `session`'s train graph (with its optimizer step, the
  /// update op of each variable named by graph-minimize) over `numPs`
  /// tasks. Sparse updates are an error naming the variable.
  static llvm::Expected<ParameterLayout>
  build(runtime::Session &session, llvm::StringRef globalStepName, int numPs);
};

/// A trainer's connections to every ps task.
class ParameterClient : public GradientExchange {
public:
  static llvm::Expected<std::unique_ptr<ParameterClient>>
  connect(const ParameterServerCluster &cluster, ParameterLayout layout,
          InfoLog &log);
  ~ParameterClient();

  /// The chief's start: every variable of `session` onto its ps task.
  llvm::Error initialize(runtime::Session &session);
  /// A worker's start: waits until the chief has initialized every ps
  /// task (SessionManager.wait_for_session).
  llvm::Error waitUntilReady(InfoLog &log);
  /// Before a step: the trained variables and global_step into `session`.
  llvm::Error pullTrained(runtime::Session &session);
  /// Before a checkpoint: every variable (slots too) into `session`.
  llvm::Error pullAll(runtime::Session &session);
  const std::vector<std::string> &getGradients() const override {
    return layout.gradients;
  }
  /// After a step: `gradients` (in the layout's order) to their ps tasks,
  /// which apply them and reply with the trained variables and global_step
  /// after the update; those go into `session` (so the next step needs no
  /// pull).
  llvm::Error exchange(llvm::ArrayRef<Tensor> gradients,
                       runtime::Session &session) override;

private:
  struct Server;
  ParameterClient(const ParameterServerCluster &cluster,
                  ParameterLayout layout);
  llvm::Error pull(runtime::Session &session, llvm::ArrayRef<size_t> variables,
                   llvm::StringRef what);

  const ParameterServerCluster &cluster;
  ParameterLayout layout;
  std::vector<std::unique_ptr<Server>> servers;
};

class MessageReader;
class MessageWriter;

/// One ps task's variables (in `session`, which holds the train graph) and
/// the requests about them: the other side of ParameterClient's messages.
class ParameterStore {
public:
  ParameterStore(runtime::Session &session, const ParameterLayout &layout,
                 llvm::StringRef trainOp, int ps);
  /// The reply to one request from `trainer`, one request at a time; a
  /// malformed or failing request gets a failure reply naming the problem.
  std::vector<char> handle(std::vector<char> request, llvm::StringRef trainer);

private:
  llvm::Error dispatch(MessageReader &request, MessageWriter &reply,
                       llvm::StringRef trainer);
  llvm::Error hello(MessageReader &request, MessageWriter &reply,
                    llvm::StringRef trainer);
  llvm::Error initialize(MessageReader &request, MessageWriter &reply);
  llvm::Error pull(MessageReader &request, MessageWriter &reply);
  llvm::Error push(MessageReader &request, MessageWriter &reply);

  runtime::Session &session;
  const ParameterLayout &layout;
  std::string trainOp;
  int ps;
  std::mutex mutex;
  /// Whether the chief has put the variables here.
  bool ready = false;
  /// The updates' gradient tensors, fed with each push, and which of them
  /// hold a pushed gradient (the others are zeros).
  runtime::NamedTensors feeds;
  std::vector<bool> holdsGradient;
};

/// A ps task: serves every trainer of the cluster, each over its own
/// connection (a trainer that dies and restarts connects again), until
/// the process is stopped. `session` holds the train graph, initialized;
/// the ps applies gradients with `trainOp`.
llvm::Error serveParameters(runtime::Session &session,
                            const ParameterLayout &layout,
                            llvm::StringRef trainOp,
                            const ParameterServerCluster &cluster,
                            InfoLog &log);

} // namespace cleave::estimator

#endif // CLEAVE_LIB_ESTIMATOR_PARAMETERSERVER_H
