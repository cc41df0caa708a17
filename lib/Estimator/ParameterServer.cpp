//===- ParameterServer.cpp - asynchronous training with ps tasks ----------===//
//
// The messages between a trainer and a ps task, over a two-rank Gloo group
// of their own (the trainer announces each connection, so that either side
// can die and be restarted): a request is a kind byte and its operands, a
// reply a status byte and its results. Tensors travel as dtype, shape and
// raw bytes.
//
//===----------------------------------------------------------------------===//

#include "ParameterServer.h"

#include "Exporters.h"
#include "Support.h"

#include "cleave/Runtime/ProcessGroup.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

using namespace cleave;
using namespace cleave::estimator;

//===----------------------------------------------------------------------===//
// The layout
//===----------------------------------------------------------------------===//

/// The gradient operand of an optimizer update graph-minimize builds.
static std::optional<unsigned> getGradientOperand(llvm::StringRef opType) {
  opType.consume_front("Resource");
  return llvm::StringSwitch<std::optional<unsigned>>(opType)
      .Case("ApplyGradientDescent", 2)
      .Case("ApplyMomentum", 3)
      .Case("ApplyAdam", 9)
      .Default(std::nullopt);
}

/// "node" or "node:port" of a node's data output.
static std::string getTensorName(mlir::Value value) {
  auto node = value.getDefiningOp<graph::NodeOp>();
  unsigned port = 0;
  for (auto [index, output] : llvm::enumerate(node.getOutputs()))
    if (output == value)
      port = index;
  return node.getName().str() + (port ? ":" + std::to_string(port) : "");
}

/// The variable colocated with `node` (_class "loc:@<name>"), if any.
static std::string getColocation(graph::NodeOp node) {
  auto classes =
      llvm::dyn_cast_or_null<mlir::ArrayAttr>(node.getTFAttr("_class"));
  if (!classes)
    return "";
  for (mlir::Attribute entry : classes)
    if (auto text = llvm::dyn_cast<mlir::StringAttr>(entry))
      if (text.getValue().starts_with("loc:@") &&
          text.getValue().drop_front(5) != node.getName())
        return text.getValue().drop_front(5).str();
  return "";
}

llvm::Expected<ParameterLayout>
ParameterLayout::build(runtime::Session &session,
                       llvm::StringRef globalStepName, int numPs) {
  ParameterLayout layout;
  auto names = session.getCheckpointedVariables();
  if (!names)
    return names.takeError();
  // In graph order (replica_device_setter places them as they are
  // created), not the saver's order by name.
  mlir::ModuleOp module = session.getModule();
  llvm::StringMap<size_t> position;
  walkNodes(module, [&](graph::NodeOp node) {
    position.try_emplace(node.getName(), position.size());
  });
  layout.variables = std::move(*names);
  llvm::stable_sort(layout.variables,
                    [&](const std::string &a, const std::string &b) {
                      return position.lookup(a) < position.lookup(b);
                    });
  llvm::StringMap<size_t> index;
  for (auto [i, name] : llvm::enumerate(layout.variables))
    index[name] = i;
  auto step = index.find(globalStepName);
  if (step == index.end())
    return makeError("ps training: the train graph's checkpoint has no "
                     "global step '" +
                     globalStepName + "'");
  layout.globalStep = step->second;

  // The optimizer's updates name the trained variables and their
  // gradients.
  std::string failure;
  walkNodes(module, [&](graph::NodeOp node) {
    llvm::StringRef op = node.getOpType();
    // The optimizers' updates: Apply*, Resource*Apply*, Sparse*Apply*, and
    // SGD's sparse ScatterSub (ResourceScatterSub).
    bool update = (op.contains("Apply") &&
                   (op.starts_with("Apply") || op.starts_with("Resource") ||
                    op.starts_with("Sparse"))) ||
                  op == "ScatterSub" || op == "ResourceScatterSub";
    if (!update || !failure.empty())
      return;
    auto variable =
        node.getDataInputs().empty()
            ? graph::NodeOp()
            : node.getDataInputs()[0].getDefiningOp<graph::NodeOp>();
    std::string name = variable ? variable.getName().str() : "?";
    std::optional<unsigned> gradient = getGradientOperand(op);
    if (!gradient) {
      failure = "training across processes: the update of variable '" + name +
                "' is a " + op.str() +
                "; updates fed across processes are of dense gradients "
                "(sgd, momentum, adam), not sparse ones yet";
      return;
    }
    auto it = index.find(name);
    if (it == index.end()) {
      failure = "ps training: optimizer update '" + node.getName().str() +
                "' updates '" + name + "', which no checkpoint holds";
      return;
    }
    layout.trained.push_back(it->second);
    layout.gradients.push_back(getTensorName(node.getDataInputs()[*gradient]));
  });
  if (!failure.empty())
    return makeError(failure);
  if (layout.trained.empty())
    return makeError("ps training: the train graph has no optimizer update "
                     "(name model.optimizer)");

  // replica_device_setter: round-robin over the variables in graph order,
  // global_step first (on ps 0); colocated ones follow their variable.
  layout.owner.assign(layout.variables.size(), -1);
  layout.owner[layout.globalStep] = 0;
  int next = 1 % numPs;
  std::vector<std::string> colocation(layout.variables.size());
  for (auto [i, name] : llvm::enumerate(layout.variables)) {
    graph::NodeOp node = findNode(module, name);
    colocation[i] = node ? getColocation(node) : "";
    if (i == layout.globalStep || index.count(colocation[i]))
      continue;
    layout.owner[i] = next;
    next = (next + 1) % numPs;
  }
  for (auto [i, target] : llvm::enumerate(colocation))
    if (layout.owner[i] < 0)
      layout.owner[i] =
          layout.owner[index[target]] >= 0 ? layout.owner[index[target]] : 0;
  return layout;
}

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

/// Whether a tensor's bytes are all of its value (no strings, handles or
/// variants).
static bool isPlainData(int32_t dtype) {
  return dtype != kString && dtype != kResource && dtype != kVariant;
}

namespace {
enum class Request : char {
  /// The trainer's variable names: the ps checks it trains the same model.
  Hello = 'H',
  /// (index, tensor)...: the chief's values of every variable; the ps is
  /// ready after it.
  Initialize = 'I',
  /// index...: the values.
  Pull = 'P',
  /// (gradient number, tensor)...: applied; the reply is global_step and
  /// the task's trained variables after the update.
  Push = 'G',
};

enum class Status : char { Ok = 'O', NotReady = 'N', Failed = 'F' };

} // namespace

class estimator::MessageWriter {
public:
  template <typename T> void put(T value) {
    const char *bytes = reinterpret_cast<const char *>(&value);
    buffer.insert(buffer.end(), bytes, bytes + sizeof(T));
  }
  void putString(llvm::StringRef text) {
    put<uint32_t>(text.size());
    buffer.insert(buffer.end(), text.begin(), text.end());
  }
  void putTensor(const Tensor &tensor) {
    put<int32_t>(tensor.dtype());
    put<uint32_t>(tensor.shape().size());
    for (int64_t dim : tensor.shape())
      put<int64_t>(dim);
    put<uint64_t>(tensor.byteSize());
    buffer.insert(buffer.end(), tensor.raw(), tensor.raw() + tensor.byteSize());
  }
  std::vector<char> buffer;
};

class estimator::MessageReader {
public:
  MessageReader(std::vector<char> bytes) : bytes(std::move(bytes)) {}
  template <typename T> llvm::Expected<T> get() {
    if (bytes.size() - offset < sizeof(T))
      return truncated();
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    offset += sizeof(T);
    return value;
  }
  llvm::Expected<std::string> getString() {
    auto size = get<uint32_t>();
    if (!size)
      return size.takeError();
    if (bytes.size() - offset < *size)
      return truncated();
    std::string text(bytes.data() + offset, *size);
    offset += *size;
    return text;
  }
  llvm::Expected<Tensor> getTensor() {
    auto dtype = get<int32_t>();
    auto rank = dtype ? get<uint32_t>() : dtype.takeError();
    if (!rank)
      return rank.takeError();
    if (*rank > 64)
      return makeError("malformed message: a tensor of rank " +
                       llvm::Twine(*rank));
    std::vector<int64_t> shape;
    for (uint32_t d = 0; d < *rank; ++d) {
      auto dim = get<int64_t>();
      if (!dim)
        return dim.takeError();
      shape.push_back(*dim);
    }
    auto size = get<uint64_t>();
    if (!size)
      return size.takeError();
    if (bytes.size() - offset < *size)
      return truncated();
    // The shape must account for exactly the bytes there are, checked
    // before anything is allocated for it.
    uint64_t expected = isPlainData(*dtype) ? dtypeSize(*dtype) : 0;
    bool fits = expected != 0;
    for (int64_t dim : shape) {
      if (dim < 0 || (dim && expected > *size / uint64_t(dim)))
        fits = false;
      else
        expected *= uint64_t(dim);
    }
    if (!fits || expected != *size)
      return makeError("malformed message: a " + dtypeName(*dtype) +
                       " tensor of shape " + shapeString(shape) + " in " +
                       llvm::Twine(*size) + " bytes");
    Tensor tensor = Tensor::uninitialized(*dtype, shape);
    std::memcpy(tensor.raw(), bytes.data() + offset, *size);
    offset += *size;
    return tensor;
  }

private:
  llvm::Error truncated() { return makeError("malformed message: truncated"); }
  std::vector<char> bytes;
  size_t offset = 0;
};

//===----------------------------------------------------------------------===//
// The trainer's side
//===----------------------------------------------------------------------===//

struct ParameterClient::Server {
  std::string task;
  std::unique_ptr<runtime::ProcessGroup> pair;

  llvm::Error send(const MessageWriter &request, llvm::StringRef what) {
    return pair->send(1, request.buffer, what);
  }
  /// The reply to the request `what`: its status (a failure is an error
  /// naming the task) and its results.
  llvm::Expected<std::pair<Status, MessageReader>>
  receiveReply(llvm::StringRef what) {
    auto reply = pair->receive(1, "the reply to " + what.str());
    if (!reply)
      return reply.takeError();
    MessageReader reader(std::move(*reply));
    auto status = reader.get<char>();
    if (!status)
      return status.takeError();
    if (Status(*status) == Status::Failed) {
      auto message = reader.getString();
      return makeError(task + ": " +
                       (message ? *message : toString(message.takeError())));
    }
    return std::make_pair(Status(*status), std::move(reader));
  }
  /// Sends `request`, returns the reply's status and results.
  llvm::Expected<std::pair<Status, MessageReader>>
  call(const MessageWriter &request, llvm::StringRef what) {
    if (llvm::Error failure = send(request, what))
      return std::move(failure);
    return receiveReply(what);
  }
  /// A pull or push that finds the task without variables.
  llvm::Error lostVariables() const {
    return makeError(task + " lost its variables (it was restarted): "
                            "restart the chief, which restores them from the "
                            "latest checkpoint");
  }
};

ParameterClient::ParameterClient(const ParameterServerCluster &cluster,
                                 ParameterLayout layout)
    : cluster(cluster), layout(std::move(layout)) {}

ParameterClient::~ParameterClient() = default;

/// The directory trainer `trainer` and ps task `ps` meet in.
static std::string getMeetingPlace(const ParameterServerCluster &cluster,
                                   llvm::StringRef ps,
                                   llvm::StringRef trainer) {
  llvm::SmallString<256> path(cluster.meetingDirectory);
  llvm::sys::path::append(path, ps, trainer);
  return std::string(path);
}

llvm::Expected<std::unique_ptr<ParameterClient>>
ParameterClient::connect(const ParameterServerCluster &cluster,
                         ParameterLayout layout, InfoLog &log) {
  std::unique_ptr<ParameterClient> client(
      new ParameterClient(cluster, std::move(layout)));
  MessageWriter hello;
  hello.put(Request::Hello);
  hello.put<uint32_t>(client->layout.variables.size());
  for (const std::string &name : client->layout.variables)
    hello.putString(name);
  for (const std::string &ps : cluster.psTasks) {
    runtime::ProcessGroupOptions options;
    options.rank = 0;
    options.taskNames = {cluster.self, ps};
    options.storeDirectory = getMeetingPlace(cluster, ps, cluster.self);
    options.hostname = cluster.hostname;
    options.timeoutSeconds = cluster.timeoutSeconds;
    log.info("Connecting to " + ps + " through " + options.storeDirectory);
    auto pair = runtime::ProcessGroup::connect(options);
    if (!pair)
      return pair.takeError();
    auto server = std::make_unique<Server>();
    server->task = ps;
    server->pair = std::move(*pair);
    auto reply = server->call(hello, "the variable list");
    if (!reply)
      return reply.takeError();
    client->servers.push_back(std::move(server));
  }
  return client;
}

llvm::Error ParameterClient::initialize(runtime::Session &session) {
  // Every task gets every variable: the updates of a task's own variables
  // also read ones it does not serve (Adam's beta powers, kept in step by
  // one update per push on every task).
  MessageWriter request;
  request.put(Request::Initialize);
  request.put<uint32_t>(layout.variables.size());
  for (size_t i = 0; i < layout.variables.size(); ++i) {
    auto value = session.readVariable(layout.variables[i]);
    if (!value)
      return value.takeError();
    if (!isPlainData(value->dtype()))
      return makeError("ps training: variable '" + layout.variables[i] +
                       "' holds " + dtypeName(value->dtype()) +
                       ", which ps tasks do not hold yet");
    request.put<uint32_t>(i);
    request.putTensor(*value);
  }
  for (const auto &server : servers) {
    auto reply = server->call(request, "the initial variables");
    if (!reply)
      return reply.takeError();
  }
  return llvm::Error::success();
}

llvm::Error ParameterClient::waitUntilReady(InfoLog &log) {
  // SessionManager.wait_for_session's limit and message.
  constexpr double kMaxWaitSeconds = 7200;
  auto start = std::chrono::steady_clock::now();
  double lastLog = -1e9;
  for (const auto &server : servers) {
    while (true) {
      MessageWriter request;
      request.put(Request::Pull);
      request.put<uint32_t>(0);
      auto reply = server->call(request, "a readiness check");
      if (!reply)
        return reply.takeError();
      if (reply->first == Status::Ok)
        break;
      double waited = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      if (waited > kMaxWaitSeconds)
        return makeError("Session was not ready after waiting 7200 secs.");
      if (waited - lastLog >= 10) {
        log.info("Waiting for model to be ready. The chief has not "
                 "initialized the variables of " +
                 server->task + " yet.");
        lastLog = waited;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return llvm::Error::success();
}

llvm::Error ParameterClient::pull(runtime::Session &session,
                                  llvm::ArrayRef<size_t> variables,
                                  llvm::StringRef what) {
  for (auto [ps, server] : llvm::enumerate(servers)) {
    std::vector<size_t> owned;
    for (size_t i : variables)
      if (layout.owner[i] == int(ps))
        owned.push_back(i);
    if (owned.empty())
      continue;
    MessageWriter request;
    request.put(Request::Pull);
    request.put<uint32_t>(owned.size());
    for (size_t i : owned)
      request.put<uint32_t>(i);
    auto reply = server->call(request, what);
    if (!reply)
      return reply.takeError();
    if (reply->first == Status::NotReady)
      return server->lostVariables();
    for (size_t i : owned) {
      auto value = reply->second.getTensor();
      if (!value)
        return value.takeError();
      if (llvm::Error failure =
              session.writeVariable(layout.variables[i], std::move(*value)))
        return failure;
    }
  }
  return llvm::Error::success();
}

llvm::Error ParameterClient::pullTrained(runtime::Session &session) {
  std::vector<size_t> variables = layout.trained;
  variables.push_back(layout.globalStep);
  return pull(session, variables, "the variables' pull");
}

llvm::Error ParameterClient::pullAll(runtime::Session &session) {
  std::vector<size_t> variables;
  for (size_t i = 0; i < layout.variables.size(); ++i)
    variables.push_back(i);
  return pull(session, variables, "the pull of every variable");
}

llvm::Error ParameterClient::exchange(llvm::ArrayRef<Tensor> gradients,
                                      runtime::Session &session) {
  int64_t globalStep = -1;
  // Each ps's request is sent before any reply is awaited, so that the ps
  // tasks apply their shares at once.
  for (auto [ps, server] : llvm::enumerate(servers)) {
    MessageWriter request;
    request.put(Request::Push);
    std::vector<size_t> owned;
    for (size_t k = 0; k < layout.trained.size(); ++k)
      if (layout.owner[layout.trained[k]] == int(ps))
        owned.push_back(k);
    request.put<uint32_t>(owned.size());
    for (size_t k : owned) {
      request.put<uint32_t>(k);
      request.putTensor(gradients[k]);
    }
    if (llvm::Error failure = server->send(request, "the gradients' push"))
      return std::move(failure);
  }
  for (auto [ps, server] : llvm::enumerate(servers)) {
    auto reply = server->receiveReply("the gradients' push");
    if (!reply)
      return reply.takeError();
    auto &[status, reader] = *reply;
    if (status == Status::NotReady)
      return server->lostVariables();
    auto step = reader.get<int64_t>();
    if (!step)
      return step.takeError();
    if (ps == 0)
      globalStep = *step;
    for (size_t variable : layout.trained) {
      if (layout.owner[variable] != int(ps))
        continue;
      auto value = reader.getTensor();
      if (!value)
        return value.takeError();
      if (llvm::Error failure = session.writeVariable(
              layout.variables[variable], std::move(*value)))
        return std::move(failure);
    }
  }
  // global_step as the session holds it (int64, or another integer).
  const std::string &name = layout.variables[layout.globalStep];
  auto current = session.readVariable(name);
  if (!current)
    return current.takeError();
  Tensor step(current->dtype(), current->shape());
  step.setFromDouble(0, double(globalStep));
  return session.writeVariable(name, std::move(step));
}

//===----------------------------------------------------------------------===//
// The ps task's side
//===----------------------------------------------------------------------===//

ParameterStore::ParameterStore(runtime::Session &session,
                               const ParameterLayout &layout,
                               llvm::StringRef trainOp, int ps)
    : session(session), layout(layout), trainOp(trainOp.str()), ps(ps) {}

std::vector<char> ParameterStore::handle(std::vector<char> bytes,
                                         llvm::StringRef trainer) {
  std::lock_guard<std::mutex> lock(mutex);
  MessageReader request(std::move(bytes));
  MessageWriter reply;
  std::string failure;
  llvm::handleAllErrors(
      dispatch(request, reply, trainer),
      [&](const llvm::ErrorInfoBase &info) { failure = info.message(); });
  if (!failure.empty()) {
    reply = MessageWriter();
    reply.put(Status::Failed);
    reply.putString(failure);
  }
  return std::move(reply.buffer);
}

llvm::Error ParameterStore::dispatch(MessageReader &request,
                                     MessageWriter &reply,
                                     llvm::StringRef trainer) {
  auto kind = request.get<char>();
  if (!kind)
    return kind.takeError();
  // Pulls and pushes wait for the chief's values.
  if (!ready &&
      (Request(*kind) == Request::Pull || Request(*kind) == Request::Push)) {
    reply.put(Status::NotReady);
    return llvm::Error::success();
  }
  switch (Request(*kind)) {
  case Request::Hello:
    return hello(request, reply, trainer);
  case Request::Initialize:
    return initialize(request, reply);
  case Request::Pull:
    return pull(request, reply);
  case Request::Push:
    return push(request, reply);
  }
  return makeError("malformed message: request kind " + llvm::Twine(*kind));
}

llvm::Error ParameterStore::hello(MessageReader &request, MessageWriter &reply,
                                  llvm::StringRef trainer) {
  auto count = request.get<uint32_t>();
  if (!count)
    return count.takeError();
  std::vector<std::string> names;
  for (uint32_t i = 0; i < *count; ++i) {
    auto name = request.getString();
    if (!name)
      return name.takeError();
    names.push_back(std::move(*name));
  }
  if (names != layout.variables)
    return makeError(trainer.str() +
                     " trains a model whose variables differ from this "
                     "task's (" +
                     llvm::Twine(names.size()) + " against " +
                     llvm::Twine(layout.variables.size()) +
                     "): every task must run the same job");
  reply.put(Status::Ok);
  return llvm::Error::success();
}

llvm::Error ParameterStore::initialize(MessageReader &request,
                                       MessageWriter &reply) {
  auto count = request.get<uint32_t>();
  if (!count)
    return count.takeError();
  for (uint32_t n = 0; n < *count; ++n) {
    auto index = request.get<uint32_t>();
    auto value = index ? request.getTensor() : index.takeError();
    if (!value)
      return value.takeError();
    if (*index >= layout.variables.size())
      return makeError("malformed message: no variable " + llvm::Twine(*index));
    if (llvm::Error failure =
            session.writeVariable(layout.variables[*index], std::move(*value)))
      return failure;
  }
  ready = true;
  reply.put(Status::Ok);
  return llvm::Error::success();
}

llvm::Error ParameterStore::pull(MessageReader &request, MessageWriter &reply) {
  auto count = request.get<uint32_t>();
  if (!count)
    return count.takeError();
  MessageWriter values;
  for (uint32_t n = 0; n < *count; ++n) {
    auto index = request.get<uint32_t>();
    if (!index)
      return index.takeError();
    if (*index >= layout.variables.size() || layout.owner[*index] != ps)
      return makeError("malformed message: variable " + llvm::Twine(*index) +
                       " is not on this task");
    auto value = session.readVariable(layout.variables[*index]);
    if (!value)
      return value.takeError();
    values.putTensor(*value);
  }
  reply.put(Status::Ok);
  llvm::append_range(reply.buffer, values.buffer);
  return llvm::Error::success();
}

/// The trained variables' updates run with the pushed gradients; those
/// of other tasks' variables get zeros (their values here are not read).
llvm::Error ParameterStore::push(MessageReader &request, MessageWriter &reply) {
  if (feeds.empty())
    for (auto [k, variable] : llvm::enumerate(layout.trained)) {
      auto value = session.readVariable(layout.variables[variable]);
      if (!value)
        return value.takeError();
      feeds.emplace_back(layout.gradients[k],
                         Tensor(value->dtype(), value->shape()));
      holdsGradient.push_back(false);
    }
  std::vector<bool> given(feeds.size());
  auto count = request.get<uint32_t>();
  if (!count)
    return count.takeError();
  for (uint32_t n = 0; n < *count; ++n) {
    auto k = request.get<uint32_t>();
    auto value = k ? request.getTensor() : k.takeError();
    if (!value)
      return value.takeError();
    if (*k >= feeds.size() || layout.owner[layout.trained[*k]] != ps)
      return makeError("malformed message: gradient " + llvm::Twine(*k) +
                       " is not of a variable on this task");
    if (value->dtype() != feeds[*k].second.dtype() ||
        value->shape() != feeds[*k].second.shape())
      return makeError("the gradient of '" +
                       layout.variables[layout.trained[*k]] + "' is a " +
                       dtypeName(value->dtype()) + " tensor of shape " +
                       shapeString(value->shape()) + ", not " +
                       shapeString(feeds[*k].second.shape()));
    feeds[*k].second = std::move(*value);
    given[*k] = holdsGradient[*k] = true;
  }
  // A gradient this push leaves out is zero (allocated only when an earlier
  // push gave one: trainers give all of this task's every time).
  for (size_t k = 0; k < feeds.size(); ++k)
    if (!given[k] && holdsGradient[k]) {
      feeds[k].second =
          Tensor(feeds[k].second.dtype(), feeds[k].second.shape());
      holdsGradient[k] = false;
    }
  auto ran = session.run(feeds, {}, {trainOp});
  if (!ran)
    return ran.takeError();
  auto step = session.readVariable(layout.variables[layout.globalStep]);
  if (!step)
    return step.takeError();
  reply.put(Status::Ok);
  reply.put<int64_t>(step->getAsInt(0));
  // The trained variables after the update: what the trainer's next step
  // reads, without a pull of its own.
  for (size_t variable : layout.trained) {
    if (layout.owner[variable] != ps)
      continue;
    auto value = session.readVariable(layout.variables[variable]);
    if (!value)
      return value.takeError();
    reply.putTensor(*value);
  }
  return llvm::Error::success();
}

llvm::Error estimator::serveParameters(runtime::Session &session,
                                       const ParameterLayout &layout,
                                       llvm::StringRef trainOp,
                                       const ParameterServerCluster &cluster,
                                       InfoLog &log) {
  auto self = llvm::find(cluster.psTasks, cluster.self);
  if (self == cluster.psTasks.end())
    return makeError("ps training: " + cluster.self + " is not a ps task");
  int ps = int(self - cluster.psTasks.begin());
  size_t owned = llvm::count(layout.owner, ps);
  log.info("Serving " + llvm::Twine(owned) + " of the " +
           llvm::Twine(layout.variables.size()) + " variables to " +
           llvm::Twine(cluster.trainerTasks.size()) + " trainers as " +
           cluster.self);
  ParameterStore store(session, layout, trainOp, ps);
  // One thread per trainer: each connection is served until it breaks,
  // then the next one the trainer (restarted) announces.
  std::vector<std::thread> threads;
  std::mutex logMutex;
  for (const std::string &trainer : cluster.trainerTasks)
    threads.emplace_back([&, trainer] {
      while (true) {
        runtime::ProcessGroupOptions options;
        options.rank = 1;
        options.taskNames = {trainer, cluster.self};
        options.storeDirectory =
            getMeetingPlace(cluster, cluster.self, trainer);
        options.hostname = cluster.hostname;
        options.timeoutSeconds = cluster.timeoutSeconds;
        options.connectTimeoutSeconds = 1e9;
        auto pair = runtime::ProcessGroup::connect(options);
        if (!pair) {
          std::lock_guard<std::mutex> lock(logMutex);
          log.warning(toString(pair.takeError()));
          std::this_thread::sleep_for(std::chrono::seconds(1));
          continue;
        }
        {
          std::lock_guard<std::mutex> lock(logMutex);
          log.info("Connected to " + trainer);
        }
        while (true) {
          // A trainer may be quiet for long (a checkpoint, an evaluation).
          auto request = (*pair)->receive(0, "a request", 1e9);
          if (!request) {
            std::lock_guard<std::mutex> lock(logMutex);
            log.info("Lost " + trainer + ": " + toString(request.takeError()));
            break;
          }
          std::vector<char> reply = store.handle(std::move(*request), trainer);
          if (llvm::Error failure = (*pair)->send(0, reply, "a reply")) {
            std::lock_guard<std::mutex> lock(logMutex);
            log.info("Lost " + trainer + ": " + toString(std::move(failure)));
            break;
          }
        }
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  return llvm::Error::success();
}
