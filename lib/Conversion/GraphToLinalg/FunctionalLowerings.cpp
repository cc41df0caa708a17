//===- FunctionalLowerings.cpp - functional control flow and calls --------===//
//
// If and Case become scf.if (a chain of them for Case), While scf.while,
// calls the callee's body inlined; branch and loop bodies are lowered in
// place from their library functions. A predicate known at compile time
// picks its branch statically, as the interpreter would at run time. Loop
// variables keep their static types through the loop (XLA's rule), and a
// loop counts its iterations: past the interpreter's limit it stops and the
// call fails with the interpreter's message instead of hanging. The status
// that carries such failures is threaded through every region.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "cleave/Dialect/Graph/IR/Graph.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::conversion;

static FailureOr<StringRef> functionAttr(NodeLowering &ctx, StringRef name) {
  auto f = dyn_cast_or_null<graph::FuncAttr>(ctx.getAttr(name));
  if (!f)
    return ctx.error() << "attr '" << name << "' must name a function",
           failure();
  return f.getName().getValue();
}

/// A predicate as TensorFlow reads one: a scalar is true when non-zero; any
/// other tensor when it has elements (known at compile time).
static FailureOr<Value> predicate(NodeLowering &ctx, OpBuilder &b, Location loc,
                                  const LoweredValue &value, Value tensor) {
  if (!value.shape.empty()) {
    int64_t count = 1;
    for (int64_t d : value.shape)
      count *= d;
    return b.create<arith::ConstantOp>(loc, b.getBoolAttr(count > 0))
        .getResult();
  }
  if (!isFloatDType(value.dtype) && !isIntegerDType(value.dtype) &&
      value.dtype != cleave::kBool)
    return ctx.error() << "a predicate of dtype "
                       << cleave::dtypeName(value.dtype)
                       << " has no CPU lowering",
           failure();
  Value element = b.create<tensor::ExtractOp>(loc, tensor, ValueRange{});
  return ctx.convertElement(b, loc, element, value.dtype, cleave::kBool);
}

/// A lowered value as a tensor that can cross a region boundary.
static Value tensorOf(NodeLowering &ctx, LoweredValue &value) {
  if (!value.tensor && value.constant)
    value.tensor = ctx.constantTensor(*value.constant);
  return value.tensor;
}

static std::string typesString(TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(types, os);
  return text;
}

/// Lowers `branch` into the region being built by `nested`, yielding its
/// results and the status; records their types (or an error) in `types`.
static void lowerBranch(NodeLowering &ctx, OpBuilder &nested, Location loc,
                        StringRef branch, ArrayRef<LoweredValue> args,
                        std::optional<SmallVector<Type>> &types, bool &failed) {
  OpBuilder::InsertionGuard guard(ctx.b);
  ctx.b.setInsertionPointToEnd(nested.getInsertionBlock());
  Value statusBefore = ctx.getStatus();
  ctx.enterRegion();
  FailureOr<SmallVector<LoweredValue>> results =
      failed ? FailureOr<SmallVector<LoweredValue>>(failure())
             : ctx.lowerFunctionBody(branch, args);
  ctx.exitRegion();
  SmallVector<Value> yielded;
  if (succeeded(results))
    for (LoweredValue &value : *results) {
      if (value.dtype == cleave::kResource || value.list ||
          !tensorOf(ctx, value)) {
        ctx.error() << "branch '" << branch
                    << "' returns a value compiled code cannot hold";
        results = failure();
        break;
      }
      yielded.push_back(value.tensor);
    }
  failed |= ::mlir::failed(results);
  SmallVector<Type> resultTypes =
      llvm::to_vector(ValueRange(yielded).getTypes());
  if (!failed && types && *types != resultTypes) {
    ctx.error() << "the branches give different types: (" << typesString(*types)
                << ") and (" << typesString(resultTypes)
                << "); compiled branches must agree";
    failed = true;
  }
  if (failed && types) {
    // Keep the op valid until it is erased.
    yielded.clear();
    for (Type t : *types) {
      auto tensor = cast<RankedTensorType>(t);
      yielded.push_back(ctx.b.create<tensor::EmptyOp>(loc, tensor.getShape(),
                                                      tensor.getElementType()));
    }
  }
  if (!types)
    types = resultTypes;
  yielded.push_back(failed ? statusBefore : ctx.getStatus());
  ctx.setStatus(statusBefore);
  ctx.b.create<scf::YieldOp>(loc, yielded);
}

/// Builds scf.if (pred, branches[0], else: the rest) at the builder; for
/// more than two branches (Case), `caseIndex` gives the predicate of the
/// next one. Its results: the branches' results, then the status.
static FailureOr<scf::IfOp>
buildIf(NodeLowering &ctx, Value pred, ArrayRef<StringRef> branches,
        ArrayRef<LoweredValue> args,
        std::function<Value(OpBuilder &, Location, unsigned)> caseIndex) {
  std::optional<SmallVector<Type>> types;
  bool failed = false;
  Location loc = ctx.loc;
  auto ifOp = ctx.b.create<scf::IfOp>(
      loc, pred,
      [&](OpBuilder &nested, Location l) {
        lowerBranch(ctx, nested, l, branches[0], args, types, failed);
      },
      [&](OpBuilder &nested, Location l) {
        if (branches.size() == 2) {
          lowerBranch(ctx, nested, l, branches[1], args, types, failed);
          return;
        }
        // Case: the next branch, or the one after, in a nested if.
        OpBuilder::InsertionGuard guard(ctx.b);
        ctx.b.setInsertionPointToEnd(nested.getInsertionBlock());
        Value next = caseIndex(ctx.b, l, branches.size());
        FailureOr<scf::IfOp> inner =
            failed ? FailureOr<scf::IfOp>(failure())
                   : buildIf(ctx, next, branches.drop_front(), args, caseIndex);
        if (::mlir::failed(inner)) {
          failed = true;
          SmallVector<Value> yielded;
          for (Type t : types.value_or(SmallVector<Type>())) {
            auto tensor = cast<RankedTensorType>(t);
            yielded.push_back(ctx.b.create<tensor::EmptyOp>(
                l, tensor.getShape(), tensor.getElementType()));
          }
          yielded.push_back(ctx.getStatus());
          ctx.b.create<scf::YieldOp>(l, yielded);
          return;
        }
        SmallVector<Type> innerTypes =
            llvm::to_vector(inner->getResults().drop_back().getTypes());
        if (types && *types != innerTypes) {
          ctx.error() << "the branches give different types: ("
                      << typesString(*types) << ") and ("
                      << typesString(innerTypes)
                      << "); compiled branches must agree";
          failed = true;
        }
        ctx.b.create<scf::YieldOp>(l, inner->getResults());
      });
  if (failed) {
    ifOp.erase();
    return failure();
  }
  return ifOp;
}

static LogicalResult setOutputs(NodeLowering &ctx, ValueRange results,
                                ArrayRef<LoweredValue> like) {
  unsigned n = ctx.node.getOutputs().size();
  if (results.size() != n)
    return ctx.error() << "the branches return " << results.size()
                       << " values, but the node has " << n << " outputs";
  for (unsigned i = 0; i < n; ++i) {
    int32_t dtype =
        i < like.size()
            ? like[i].dtype
            : graph::typeToDataType(
                  cast<TensorType>(ctx.node.getOutputs()[i].getType())
                      .getElementType());
    ctx.setOutput(i, results[i], dtype);
  }
  return success();
}

/// The dtypes of a node's outputs (for the results of scf ops).
static SmallVector<LoweredValue> outputDTypes(NodeLowering &ctx,
                                              ArrayRef<LoweredValue> fallback) {
  SmallVector<LoweredValue> like;
  for (auto [i, v] : llvm::enumerate(ctx.node.getOutputs())) {
    LoweredValue value;
    auto type = dyn_cast<TensorType>(v.getType());
    value.dtype = type ? graph::typeToDataType(type.getElementType()) : -1;
    if (value.dtype <= 0 && i < fallback.size())
      value.dtype = fallback[i].dtype;
    like.push_back(value);
  }
  return like;
}

/// The node's outputs from the branch `pred` (and `caseIndex`) choose.
static LogicalResult lowerConditional(
    NodeLowering &ctx, Value pred, ArrayRef<StringRef> branches,
    ArrayRef<LoweredValue> args,
    std::function<Value(OpBuilder &, Location, unsigned)> caseIndex) {
  FailureOr<scf::IfOp> ifOp = buildIf(ctx, pred, branches, args, caseIndex);
  if (failed(ifOp))
    return failure();
  ctx.setStatus(ifOp->getResults().back());
  return setOutputs(ctx, ifOp->getResults().drop_back(), outputDTypes(ctx, {}));
}

/// Lowers one branch straight into the current region (the predicate is
/// known at compile time).
static LogicalResult lowerInline(NodeLowering &ctx, StringRef branch,
                                 ArrayRef<LoweredValue> args) {
  FailureOr<SmallVector<LoweredValue>> results =
      ctx.lowerFunctionBody(branch, args);
  if (failed(results))
    return failure();
  if (results->size() != ctx.node.getOutputs().size())
    return ctx.error() << "function '" << branch << "' returned "
                       << results->size() << " values, but the node has "
                       << ctx.node.getOutputs().size() << " outputs";
  for (auto [i, value] : llvm::enumerate(*results))
    ctx.setOutput(i, value);
  return success();
}

static SmallVector<LoweredValue> argsFrom(NodeLowering &ctx, unsigned first) {
  SmallVector<LoweredValue> args;
  for (unsigned i = first; i < ctx.getNumInputs(); ++i)
    args.push_back(ctx.input(i));
  return args;
}

/// If/StatelessIf(cond, input...).
static LogicalResult ifOp(NodeLowering &ctx) {
  FailureOr<StringRef> thenBranch = functionAttr(ctx, "then_branch");
  FailureOr<StringRef> elseBranch = functionAttr(ctx, "else_branch");
  if (failed(thenBranch) || failed(elseBranch))
    return failure();
  SmallVector<LoweredValue> args = argsFrom(ctx, 1);
  const LoweredValue &cond = ctx.input(0);
  // Known at compile time: a non-scalar by its size, a constant by value.
  if (!cond.shape.empty() || cond.constant) {
    int64_t count = 1;
    for (int64_t d : cond.shape)
      count *= d;
    bool taken =
        cond.shape.empty() ? cond.constant->getAsDouble(0) != 0 : count > 0;
    return lowerInline(ctx, taken ? *thenBranch : *elseBranch, args);
  }
  FailureOr<Value> pred = predicate(ctx, ctx.b, ctx.loc, cond, ctx.tensor(0));
  if (failed(pred))
    return failure();
  return lowerConditional(ctx, *pred, {*thenBranch, *elseBranch}, args,
                          nullptr);
}

/// Case/StatelessCase(branch_index, input...): an index out of range takes
/// the last branch, as the interpreter does.
static LogicalResult caseOp(NodeLowering &ctx) {
  auto list = dyn_cast_or_null<ArrayAttr>(ctx.getAttr("branches"));
  SmallVector<StringRef> branches;
  for (Attribute a : list ? list.getValue() : ArrayRef<Attribute>())
    if (auto f = dyn_cast<graph::FuncAttr>(a))
      branches.push_back(f.getName().getValue());
  if (branches.empty() || branches.size() != (list ? list.size() : 0))
    return ctx.error() << "attr 'branches' must list at least one function";
  SmallVector<LoweredValue> args = argsFrom(ctx, 1);
  const LoweredValue &index = ctx.input(0);
  if (!isIntegerDType(index.dtype) || !index.shape.empty())
    return ctx.error() << "branch_index must be an integer scalar";
  if (index.constant || branches.size() == 1) {
    int64_t i = index.constant ? index.constant->getAsInt(0) : 0;
    if (i < 0 || i >= int64_t(branches.size()))
      i = branches.size() - 1;
    return lowerInline(ctx, branches[i], args);
  }
  Value indexTensor = ctx.tensor(0);
  Type indexType = ctx.elementType(index.dtype);
  // Branch k runs when index == k; the last one otherwise.
  unsigned total = branches.size();
  auto caseIndex = [&, indexTensor, indexType](OpBuilder &b, Location loc,
                                               unsigned remaining) -> Value {
    int64_t k = total - remaining + 1;
    Value element = b.create<tensor::ExtractOp>(loc, indexTensor, ValueRange{});
    return b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::eq, element,
        b.create<arith::ConstantOp>(loc, b.getIntegerAttr(indexType, k)));
  };
  Value element =
      ctx.b.create<tensor::ExtractOp>(ctx.loc, indexTensor, ValueRange{});
  Value first = ctx.b.create<arith::CmpIOp>(
      ctx.loc, arith::CmpIPredicate::eq, element,
      ctx.b.create<arith::ConstantOp>(ctx.loc,
                                      ctx.b.getIntegerAttr(indexType, 0)));
  return lowerConditional(ctx, first, branches, args, caseIndex);
}

/// Whether a list the loop body yields can take the place of `entry`'s.
static bool sameListKind(const LoweredValue::List &entry,
                         const LoweredValue::List &next) {
  return entry.elementDType == next.elementDType &&
         entry.elementShape == next.elementShape &&
         entry.capacity == next.capacity &&
         entry.fixedLength == next.fixedLength;
}

/// The variables the nodes of `function`'s body update (every handle an
/// update takes: an optimizer's slots too; a stateful random op's place in
/// its stream), in node order. A handle must
/// show its variable there: a loop variable's (`args`), or a variable node
/// of the body, through identities.
static FailureOr<SmallVector<std::string>>
variablesUpdatedBy(NodeLowering &ctx, StringRef function,
                   ArrayRef<LoweredValue> args) {
  SmallVector<std::string> names;
  auto callee =
      dyn_cast_or_null<graph::FuncOp>(SymbolTable::lookupNearestSymbolFrom(
          ctx.node, StringAttr::get(ctx.node.getContext(), function)));
  if (!callee || callee.getBody().empty())
    return names; // lowerFunctionBody says what is wrong
  Block &body = callee.getBody().front();
  llvm::DenseMap<Value, unsigned> argIndex;
  for (BlockArgument arg : body.getArguments())
    if (!isa<graph::ControlType>(arg.getType()))
      argIndex.try_emplace(arg, argIndex.size());
  std::function<std::string(Value)> variableOf = [&](Value v) -> std::string {
    if (auto it = argIndex.find(v); it != argIndex.end())
      return it->second < args.size() ? args[it->second].variable : "";
    auto node = v.getDefiningOp<graph::NodeOp>();
    if (!node)
      return "";
    StringRef op = node.getOpType();
    if (op == "VarHandleOp" || op == "VariableV2" || op == "Variable")
      return getVariableName(node);
    if (op == "Identity" && !node.getDataInputs().empty())
      return variableOf(node.getDataInputs()[0]);
    return "";
  };
  auto isHandle = [](Value v) {
    auto type = dyn_cast<TensorType>(v.getType());
    return type && isa<graph::ResourceType>(type.getElementType());
  };
  for (auto node : body.getOps<graph::NodeOp>()) {
    if (std::string state = getRandomStateVariableOf(node);
        !state.empty() && !llvm::is_contained(names, state))
      names.push_back(state);
    if (!updatesVariables(node.getOpType()))
      continue;
    for (Value input : node.getDataInputs()) {
      std::string name = variableOf(input);
      if (name.empty() && isHandle(input))
        return graph::nodeError(node)
                   << "updates a variable inside a compiled loop whose handle "
                      "is neither a loop variable nor a variable of the body",
               failure();
      if (!name.empty() && !llvm::is_contained(names, name))
        names.push_back(name);
    }
  }
  return names;
}

/// An update computed element-wise into a fresh tensor (the optimizers'
/// maps) writes into the loop's carried value instead, so that
/// bufferization updates the variable's buffer in place each iteration
/// rather than allocating a new one and copying it back into the loop's.
static void writeIntoCarried(Value next, BlockArgument carried) {
  auto generic = next.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInits() != 1 ||
      next.getType() != carried.getType())
    return;
  OpOperand *init = generic.getDpsInitOperand(0);
  if (init->get().getDefiningOp<tensor::EmptyOp>() &&
      !generic.payloadUsesValueFromOperand(init))
    init->set(carried);
}

/// While/StatelessWhile(input...): cond and body are functions of the loop
/// variables. A TensorList loop variable is carried as its buffer, and its
/// length when it grows or shrinks. A resource loop variable names its
/// variable (it stays the same); the variables the body updates are carried
/// as values through the iterations and written once after the loop, as
/// XLA carries a loop's resource updates.
static LogicalResult whileOp(NodeLowering &ctx) {
  FailureOr<StringRef> condFn = functionAttr(ctx, "cond");
  FailureOr<StringRef> bodyFn = functionAttr(ctx, "body");
  if (failed(condFn) || failed(bodyFn))
    return failure();
  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  SmallVector<LoweredValue> state = argsFrom(ctx, 0);
  SmallVector<Value> init;
  // Where each loop variable's values start among the scf.while's.
  SmallVector<unsigned> firstSlot;
  constexpr unsigned kNamedVariable = ~0u;
  for (LoweredValue &value : state) {
    firstSlot.push_back(init.size());
    if (value.list) {
      init.push_back(value.tensor);
      if (!value.list->fixedLength)
        init.push_back(value.list->length);
      continue;
    }
    if (value.dtype == cleave::kResource && !value.variable.empty()) {
      firstSlot.back() = kNamedVariable;
      continue;
    }
    if (value.dtype == cleave::kResource || !tensorOf(ctx, value))
      return ctx.error() << "a loop variable of dtype "
                         << cleave::dtypeName(value.dtype)
                         << " has no CPU lowering";
    init.push_back(value.tensor);
  }
  unsigned numVars = state.size();
  // The variables the body updates, after the loop variables.
  FailureOr<SmallVector<std::string>> carried =
      variablesUpdatedBy(ctx, *bodyFn, state);
  if (failed(carried))
    return failure();
  SmallVector<LoweredValue> carriedAtEntry;
  unsigned firstCarried = init.size();
  for (const std::string &name : *carried) {
    // A random stream not drawn from yet starts at its beginning.
    FailureOr<LoweredValue> value =
        isRandomStateVariable(name)
            ? ctx.readVariableOr(name, cleave::Tensor(cleave::kUInt64, {}))
            : ctx.currentVariable(name);
    if (failed(value) || !tensorOf(ctx, *value))
      return failure();
    carriedAtEntry.push_back(*value);
    init.push_back(value->tensor);
  }
  // Inside a region, the carried variables are its block's arguments.
  auto bindCarried = [&](ValueRange values) {
    for (auto [j, name] : llvm::enumerate(*carried))
      ctx.writeVariable(name, values[firstCarried + j], carriedAtEntry[j].dtype,
                        carriedAtEntry[j].shape);
  };
  unsigned n = init.size();
  // Extra loop variables: the iteration count and the status.
  Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  init.push_back(zero);
  init.push_back(ctx.getStatus());
  SmallVector<Type> types = llvm::to_vector(ValueRange(init).getTypes());
  int64_t limit = ctx.getMaxIterations();
  int64_t code =
      ctx.addError("loop did not finish within " + std::to_string(limit) +
                   " iterations (see --max-iterations)");
  auto loop = b.create<scf::WhileOp>(loc, types, init);
  SmallVector<Location> locs(types.size(), loc);
  // Loop variable i from the scf.while's values (a block's arguments, or
  // its results).
  auto loopVariable = [&](ValueRange values, unsigned i) {
    if (firstSlot[i] == kNamedVariable)
      return state[i];
    LoweredValue value;
    value.tensor = values[firstSlot[i]];
    value.dtype = state[i].dtype;
    value.shape = state[i].shape;
    value.list = state[i].list;
    if (value.list && !value.list->fixedLength)
      value.list->length = values[firstSlot[i] + 1];
    return value;
  };
  auto bind = [&](Block *block) {
    SmallVector<LoweredValue> args;
    for (unsigned i = 0; i < numVars; ++i)
      args.push_back(loopVariable(block->getArguments(), i));
    return args;
  };
  bool failed = false;
  Value statusOutside = ctx.getStatus();
  {
    // The condition: the predicate, unless the loop ran too long.
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&loop.getBefore(), {}, types, locs);
    Value count = before->getArgument(n), status = before->getArgument(n + 1);
    ctx.setStatus(status);
    bindCarried(before->getArguments());
    ctx.enterRegion();
    FailureOr<SmallVector<LoweredValue>> result =
        ctx.lowerFunctionBody(*condFn, bind(before));
    ctx.exitRegion();
    Value pred;
    if (succeeded(result) && result->size() == 1) {
      LoweredValue &value = (*result)[0];
      FailureOr<Value> p = predicate(ctx, b, loc, value, tensorOf(ctx, value));
      if (succeeded(p))
        pred = *p;
    } else if (succeeded(result)) {
      ctx.error() << "the loop condition '" << *condFn << "' returned "
                  << result->size() << " values instead of one";
    }
    failed |= !pred;
    if (!pred)
      pred = b.create<arith::ConstantOp>(loc, b.getBoolAttr(false));
    Value withinLimit = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::slt, count,
        b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(limit)));
    Value tooLong = b.create<arith::AndIOp>(
        loc, pred,
        b.create<arith::XOrIOp>(
            loc, withinLimit,
            b.create<arith::ConstantOp>(loc, b.getBoolAttr(true))));
    // The first error stays (one from the loop's body, or before it): the
    // interpreter would have stopped there.
    Value statusSoFar = ctx.getStatus();
    Value firstError = b.create<arith::AndIOp>(
        loc, tooLong,
        b.create<arith::CmpIOp>(
            loc, arith::CmpIPredicate::eq, statusSoFar,
            b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0))));
    Value nextStatus = b.create<arith::SelectOp>(
        loc, firstError,
        b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(code)),
        statusSoFar);
    Value proceed = b.create<arith::AndIOp>(loc, pred, withinLimit);
    SmallVector<Value> forwarded(before->getArguments().take_front(n + 1));
    forwarded.push_back(nextStatus);
    b.create<scf::ConditionOp>(loc, proceed, forwarded);
  }
  {
    OpBuilder::InsertionGuard guard(b);
    Block *after = b.createBlock(&loop.getAfter(), {}, types, locs);
    ctx.setStatus(after->getArgument(n + 1));
    bindCarried(after->getArguments());
    ctx.enterLoopBody(*carried);
    FailureOr<SmallVector<LoweredValue>> result =
        failed ? FailureOr<SmallVector<LoweredValue>>(failure())
               : ctx.lowerFunctionBody(*bodyFn, bind(after));
    ctx.exitLoopBody();
    SmallVector<Value> yielded;
    if (succeeded(result) && result->size() != numVars) {
      ctx.error() << "the loop body '" << *bodyFn << "' returned "
                  << result->size() << " values for " << numVars
                  << " loop variables";
      result = failure();
    }
    if (succeeded(result)) {
      for (auto [i, value] : llvm::enumerate(*result)) {
        if (state[i].list) {
          if (!value.list || !sameListKind(*state[i].list, *value.list)) {
            ctx.error() << "the loop body changes TensorList loop variable "
                        << i << " into "
                        << (value.list ? "one of another element type, "
                                         "capacity or kind (pushing to or "
                                         "popping from a list of fixed length)"
                                       : "something else")
                        << "; compiled loops keep their lists' buffers";
            result = failure();
            break;
          }
          yielded.push_back(value.tensor);
          if (!value.list->fixedLength)
            yielded.push_back(value.list->length);
          continue;
        }
        if (firstSlot[i] == kNamedVariable) {
          if (value.dtype != cleave::kResource ||
              value.variable != state[i].variable) {
            ctx.error() << "the loop body changes resource loop variable " << i
                        << " (variable " << state[i].variable
                        << "); compiled loops keep their variables";
            result = failure();
            break;
          }
          continue;
        }
        Value tensor =
            value.dtype == cleave::kResource ? Value() : tensorOf(ctx, value);
        if (!tensor || tensor.getType() != types[firstSlot[i]]) {
          ctx.error() << "the loop body changes loop variable " << i << " from "
                      << types[firstSlot[i]] << " to "
                      << (tensor ? tensor.getType() : Type())
                      << "; compiled loops keep static shapes";
          result = failure();
          break;
        }
        yielded.push_back(tensor);
      }
    }
    for (auto [j, name] : llvm::enumerate(*carried)) {
      if (::mlir::failed(result))
        break;
      FailureOr<LoweredValue> value = ctx.currentVariable(name);
      Value tensor = ::mlir::succeeded(value) ? tensorOf(ctx, *value) : Value();
      if (!tensor || tensor.getType() != types[firstCarried + j]) {
        ctx.error() << "the loop body changes variable " << name << " from "
                    << types[firstCarried + j] << " to "
                    << (tensor ? tensor.getType() : Type())
                    << "; compiled loops keep static shapes";
        result = failure();
        break;
      }
      writeIntoCarried(tensor, after->getArgument(firstCarried + j));
      yielded.push_back(tensor);
    }
    failed |= ::mlir::failed(result);
    if (failed)
      yielded.assign(after->getArguments().take_front(n).begin(),
                     after->getArguments().take_front(n).end());
    yielded.push_back(b.create<arith::AddIOp>(
        loc, after->getArgument(n),
        b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(1))));
    yielded.push_back(ctx.getStatus());
    b.create<scf::YieldOp>(loc, yielded);
  }
  if (failed) {
    loop.erase();
    ctx.setStatus(statusOutside);
    return failure();
  }
  ctx.setStatus(loop.getResult(n + 1));
  bindCarried(loop.getResults());
  for (unsigned i = 0; i < numVars && i < ctx.node.getOutputs().size(); ++i)
    ctx.setOutput(i, loopVariable(loop.getResults(), i));
  return success();
}

/// PartitionedCall/StatefulPartitionedCall(args...): the body of `f`.
static LogicalResult partitionedCall(NodeLowering &ctx) {
  FailureOr<StringRef> f = functionAttr(ctx, "f");
  if (failed(f))
    return failure();
  return lowerInline(ctx, *f, argsFrom(ctx, 0));
}

LoweringTable cleave::conversion::getFunctionalLowerings() {
  return {
      {"If", ifOp},
      {"StatelessIf", ifOp},
      {"Case", caseOp},
      {"StatelessCase", caseOp},
      {"While", whileOp},
      {"StatelessWhile", whileOp},
      {"PartitionedCall", partitionedCall},
      {"StatefulPartitionedCall", partitionedCall},
  };
}
