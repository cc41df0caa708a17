//===- GradientFunctions.cpp - gradients through library functions --------===//
//
// The part of graph-gradient that generates library functions: gradients
// of calls (SymbolicGradient and the function's GradientDef, generated when
// missing), of If/Case (the branches' gradient functions) and of While (a
// counting loop, then a backward loop replaying each iteration).
//
//===----------------------------------------------------------------------===//

#include "Differentiator.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::graph;
using namespace cleave::graph::gradient;

/// The element types of `values`, as a list(type) attr (Tin, Tout).
static ArrayAttr typeListOf(Builder &builder, ValueRange values) {
  SmallVector<Attribute> types;
  for (Value v : values)
    types.push_back(TypeAttr::get(getElementTypeOf(v)));
  return builder.getArrayAttr(types);
}

/// The gradient of every output of `op`: `outGrads`, with zeros for the
/// outputs no gradient reached (a generated function takes them all).
static FailureOr<SmallVector<Value>> gradsOrZeros(GradientBuilder &b, NodeOp op,
                                                  ArrayRef<Value> outGrads) {
  SmallVector<Value> grads;
  for (auto [out, g] : llvm::zip(op.getOutputs(), outGrads)) {
    Value grad = g;
    if (!grad) {
      FailureOr<Value> zeros = b.zerosLike(out, op.getLoc());
      if (failed(zeros))
        return failure();
      grad = *zeros;
    }
    grads.push_back(grad);
  }
  return grads;
}

LogicalResult Differentiator::ifGrad(GradientBuilder &b, NodeOp op,
                                     ArrayRef<Value> outGrads,
                                     SmallVector<Value> &inGrads) {
  MLIRContext *ctx = op.getContext();
  Builder builder(ctx);
  SmallVector<NamedAttribute> attrs;
  bool isCase = op.getOpType().ends_with("Case");
  // The branches' gradient functions, in place of the branches.
  auto gradientOf = [&](Attribute attr,
                        StringRef what) -> FailureOr<Attribute> {
    auto f = dyn_cast_or_null<FuncAttr>(attr);
    FuncOp func =
        f ? module.lookupSymbol<FuncOp>(f.getName().getValue()) : FuncOp();
    if (!func)
      return nodeError(op) << "'" << what
                           << "' names no function of the library",
             failure();
    FailureOr<std::string> grad = getGradientFunction(op, func);
    if (failed(grad))
      return failure();
    return Attribute(
        FuncAttr::get(ctx, FlatSymbolRefAttr::get(ctx, *grad), f.getAttrs()));
  };
  if (isCase) {
    auto branches = dyn_cast_or_null<ArrayAttr>(op.getTFAttr("branches"));
    if (!branches)
      return nodeError(op) << "'branches' must list functions";
    SmallVector<Attribute> grads;
    for (Attribute branch : branches) {
      FailureOr<Attribute> grad = gradientOf(branch, "branches");
      if (failed(grad))
        return failure();
      grads.push_back(*grad);
    }
    attrs.push_back(
        builder.getNamedAttr("branches", builder.getArrayAttr(grads)));
  } else {
    for (StringRef branch : {"then_branch", "else_branch"}) {
      FailureOr<Attribute> grad = gradientOf(op.getTFAttr(branch), branch);
      if (failed(grad))
        return failure();
      attrs.push_back(builder.getNamedAttr(branch, *grad));
    }
  }
  ValueRange args = op.getDataInputs().drop_front();
  SmallVector<Value> inputs{op.getDataInputs().front()};
  llvm::append_range(inputs, args);
  FailureOr<SmallVector<Value>> grads = gradsOrZeros(b, op, outGrads);
  if (failed(grads))
    return failure();
  llvm::append_range(inputs, *grads);
  if (!isCase)
    attrs.push_back(builder.getNamedAttr(
        "Tcond", TypeAttr::get(getElementTypeOf(inputs.front()))));
  attrs.push_back(builder.getNamedAttr(
      "Tin", typeListOf(builder, ValueRange(inputs).drop_front())));
  attrs.push_back(builder.getNamedAttr("Tout", typeListOf(builder, args)));
  FailureOr<NodeOp> grad =
      b.create(op.getOpType(), inputs, attrs, op.getOpType(), op.getLoc());
  if (failed(grad))
    return failure();
  // The condition gets no gradient.
  for (auto [i, g] : llvm::enumerate(grad->getOutputs()))
    inGrads[i + 1] = g;
  return success();
}

LogicalResult Differentiator::whileGrad(GradientBuilder &b, NodeOp op,
                                        ArrayRef<Value> outGrads,
                                        SmallVector<Value> &inGrads) {
  auto condAttr = dyn_cast_or_null<FuncAttr>(op.getTFAttr("cond"));
  auto bodyAttr = dyn_cast_or_null<FuncAttr>(op.getTFAttr("body"));
  if (!condAttr || !bodyAttr ||
      !module.lookupSymbol<FuncOp>(bodyAttr.getName().getValue()))
    return nodeError(op) << "'cond' and 'body' must name functions of the "
                            "library";
  FailureOr<SmallVector<Value>> grads = gradsOrZeros(b, op, outGrads);
  if (failed(grads))
    return failure();
  return loopGrad(b, op, op.getDataInputs(), condAttr, bodyAttr, *grads,
                  inGrads);
}

LogicalResult Differentiator::frameGrad(GradientBuilder &b,
                                        const LoopFrame &loop, GradMap &grads,
                                        SmallVector<Value> &inGrads) {
  NodeOp anchor = loop.getAnchor();
  Location loc = anchor.getLoc();
  // The gradient reaching each Exit (aggregated).
  SmallVector<Value> finalGrads;
  bool reached = false;
  for (LoopVariable v : loop.variables) {
    Value g;
    if (v.exit && !stoppedExits.contains(v.exit)) {
      auto it = grads.find(v.exit);
      if (it != grads.end() && !it->second.empty() &&
          !it->second.front().empty()) {
        FailureOr<Value> dense = densify(b, it->second.front().front(), loc);
        if (failed(dense))
          return failure();
        g = *dense;
        reached = true;
      }
    }
    finalGrads.push_back(g);
  }
  if (!reached)
    return success();
  // Zeros for the rest: shaped as the final value, or the initial one
  // when the variable has no Exit; the invariants' gradients start at 0.
  for (unsigned i = 0, e = loop.variables.size(); i < e; ++i) {
    if (finalGrads[i])
      continue;
    LoopVariable v = loop.variables[i];
    FailureOr<Value> zeros = b.zerosLike(
        v.exit ? v.exit.getOutputs()[0] : v.enter.getDataInputs()[0], loc);
    if (failed(zeros))
      return failure();
    finalGrads[i] = *zeros;
  }
  for (NodeOp invariant : loop.invariants) {
    FailureOr<Value> zeros = b.zerosLike(invariant.getDataInputs()[0], loc);
    if (failed(zeros))
      return failure();
    finalGrads.push_back(*zeros);
  }
  FailureOr<FunctionalLoop> functional = functionalizeLoop(loop, module);
  if (failed(functional))
    return failure();
  MLIRContext *ctx = module.getContext();
  auto funcAttr = [&](FuncOp f) {
    return FuncAttr::get(ctx, FlatSymbolRefAttr::get(f.getSymNameAttr()),
                         DictionaryAttr::get(ctx));
  };
  std::string saved = b.prefix;
  b.prefix =
      b.getNames().unique(b.scope + "/" + anchor.getName().str() + "_grad") +
      "/";
  LogicalResult built =
      loopGrad(b, anchor, loop.getInputs(), funcAttr(functional->cond),
               funcAttr(functional->body), finalGrads, inGrads);
  b.prefix = saved;
  return built;
}

LogicalResult Differentiator::loopGrad(GradientBuilder &b, NodeOp op,
                                       ValueRange state, FuncAttr condAttr,
                                       FuncAttr bodyAttr,
                                       ArrayRef<Value> finalGrads,
                                       SmallVector<Value> &inGrads) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  FuncOp bodyFunc = module.lookupSymbol<FuncOp>(bodyAttr.getName().getValue());
  FailureOr<std::string> bodyGrad = getGradientFunction(op, bodyFunc);
  if (failed(bodyGrad))
    return failure();
  unsigned m = state.size();
  SmallVector<Type> stateTypes(state.getTypes());
  Type i32 = getTensorType(IntegerType::get(ctx, 32));
  int nodeCount = 0;
  // A node in a generated function (names unique by a counter).
  auto node = [&](OpBuilder &bb, StringRef opType, ValueRange inputs,
                  ArrayRef<NamedAttribute> attrs) -> FailureOr<NodeOp> {
    std::string error;
    FailureOr<NodeOp> created = createRegisteredNode(
        bb, loc, opType, (opType + "_" + Twine(nodeCount++)).str(), inputs, {},
        attrs, "", error);
    if (failed(created))
      return emitError(loc) << "graph-gradient: " << error, failure();
    return created;
  };
  auto intConst = [&](OpBuilder &bb, int32_t v) -> FailureOr<Value> {
    auto type = RankedTensorType::get({}, IntegerType::get(ctx, 32));
    auto tensor = TensorAttr::get(
        ctx, IntegerType::get(ctx, 32), ShapeAttr::get(ctx, {}, false, {}),
        DenseElementsAttr::get(type, APInt(32, v, true)), 1, {});
    FailureOr<NodeOp> c = node(
        bb, "Const", {},
        {bb.getNamedAttr("dtype", TypeAttr::get(IntegerType::get(ctx, 32))),
         bb.getNamedAttr("value", tensor)});
    if (failed(c))
      return failure();
    return c->getOutputs()[0];
  };
  // A call of library function `f` on `args`.
  auto call = [&](OpBuilder &bb, FuncAttr f, ValueRange args,
                  ArrayRef<Type> results) -> FailureOr<NodeOp> {
    SmallVector<Attribute> out;
    for (Type t : results)
      out.push_back(TypeAttr::get(cast<TensorType>(t).getElementType()));
    return node(bb, "PartitionedCall", args,
                {bb.getNamedAttr("Tin", typeListOf(bb, args)),
                 bb.getNamedAttr("Tout", bb.getArrayAttr(out)),
                 bb.getNamedAttr("f", f)});
  };
  auto funcAttr = [&](FuncOp f) {
    return FuncAttr::get(ctx, FlatSymbolRefAttr::get(f.getSymNameAttr()),
                         DictionaryAttr::get(ctx));
  };
  auto whileNode = [&](OpBuilder &bb, ValueRange inputs, FuncOp cond,
                       FuncOp body) {
    return node(bb, "While", inputs,
                {bb.getNamedAttr("cond", funcAttr(cond)),
                 bb.getNamedAttr("body", funcAttr(body))});
  };
  Type boolType = getTensorType(IntegerType::get(ctx, 1));
  std::string prefix = (bodyFunc.getSymName() + "_").str();

  // (s, i): runs the loop, counting iterations in i.
  SmallVector<Type> countTypes(stateTypes);
  countTypes.push_back(i32);
  auto countCond = buildLibraryFunction(
      module, prefix + "count_cond", countTypes,
      [&](OpBuilder &bb,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        auto c = call(bb, condAttr, args.take_front(m), {boolType});
        if (failed(c))
          return failure();
        return SmallVector<Value>{c->getOutputs()[0]};
      },
      loc);
  // One body step over (s, i, rest...): (body(s), i + 1, rest...).
  auto step = [&](OpBuilder &bb,
                  ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
    auto c = call(bb, bodyAttr, args.take_front(m), stateTypes);
    auto one = intConst(bb, 1);
    if (failed(c) || failed(one))
      return failure();
    auto next = node(bb, "AddV2", {args[m], *one}, {});
    if (failed(next))
      return failure();
    SmallVector<Value> results(c->getOutputs());
    results.push_back(next->getOutputs()[0]);
    llvm::append_range(results, args.drop_front(m + 1));
    return results;
  };
  auto countBody = buildLibraryFunction(module, prefix + "count_body",
                                        countTypes, step, loc);
  // (s, j, k): runs k iterations from s: the state before iteration k.
  SmallVector<Type> replayTypes(countTypes);
  replayTypes.push_back(i32);
  auto replayCond = buildLibraryFunction(
      module, prefix + "replay_cond", replayTypes,
      [&](OpBuilder &bb,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        auto less = node(bb, "Less", {args[m], args[m + 1]}, {});
        if (failed(less))
          return failure();
        return SmallVector<Value>{less->getOutputs()[0]};
      },
      loc);
  auto replayBody = buildLibraryFunction(module, prefix + "replay_body",
                                         replayTypes, step, loc);
  if (failed(countCond) || failed(countBody) || failed(replayCond) ||
      failed(replayBody))
    return failure();
  // (g, s0, k): the gradient before iteration k, from the one after it.
  SmallVector<Type> gradTypes(stateTypes);
  llvm::append_range(gradTypes, stateTypes);
  gradTypes.push_back(i32);
  auto gradCond = buildLibraryFunction(
      module, prefix + "grad_cond", gradTypes,
      [&](OpBuilder &bb,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        auto zero = intConst(bb, 0);
        if (failed(zero))
          return failure();
        auto more = node(bb, "GreaterEqual", {args[2 * m], *zero}, {});
        if (failed(more))
          return failure();
        return SmallVector<Value>{more->getOutputs()[0]};
      },
      loc);
  auto bodyGradAttr = FuncAttr::get(ctx, FlatSymbolRefAttr::get(ctx, *bodyGrad),
                                    bodyAttr.getAttrs());
  auto gradBody = buildLibraryFunction(
      module, prefix + "grad_body", gradTypes,
      [&](OpBuilder &bb,
          ArrayRef<Value> args) -> FailureOr<SmallVector<Value>> {
        ArrayRef<Value> g = args.take_front(m), s0 = args.slice(m, m);
        Value k = args[2 * m];
        auto zero = intConst(bb, 0);
        if (failed(zero))
          return failure();
        SmallVector<Value> replayInputs(s0);
        replayInputs.push_back(*zero);
        replayInputs.push_back(k);
        auto sk = whileNode(bb, replayInputs, *replayCond, *replayBody);
        if (failed(sk))
          return failure();
        SmallVector<Value> gradInputs(sk->getOutputs().take_front(m));
        llvm::append_range(gradInputs, g);
        auto step = call(bb, bodyGradAttr, gradInputs, stateTypes);
        auto one = intConst(bb, 1);
        if (failed(step) || failed(one))
          return failure();
        auto previous = node(bb, "Sub", {k, *one}, {});
        if (failed(previous))
          return failure();
        SmallVector<Value> results(step->getOutputs());
        llvm::append_range(results, s0);
        results.push_back(previous->getOutputs()[0]);
        return results;
      },
      loc);
  if (failed(gradCond) || failed(gradBody))
    return failure();

  // In the graph: count, then walk back from the last iteration.
  NodeGradientContext consts(op, b, {}, {});
  Value zero = unwrap(consts.scalar(0, 3, "zero"));
  Value one = unwrap(consts.scalar(1, 3, "one"));
  SmallVector<Value> countInputs(state);
  countInputs.push_back(zero);
  Builder builder(ctx);
  auto counted = b.create("While", countInputs,
                          {builder.getNamedAttr("cond", funcAttr(*countCond)),
                           builder.getNamedAttr("body", funcAttr(*countBody))},
                          "count", loc);
  if (failed(counted))
    return failure();
  auto last = b.create("Sub", {counted->getOutputs()[m], one}, {}, "last", loc);
  if (failed(last))
    return failure();
  SmallVector<Value> gradInputs(finalGrads);
  llvm::append_range(gradInputs, state);
  gradInputs.push_back(last->getOutputs()[0]);
  auto back = b.create("While", gradInputs,
                       {builder.getNamedAttr("cond", funcAttr(*gradCond)),
                        builder.getNamedAttr("body", funcAttr(*gradBody))},
                       "While", loc);
  if (failed(back))
    return failure();
  for (unsigned i = 0; i < m; ++i)
    inGrads[i] = back->getOutputs()[i];
  return success();
}

FuncOp Differentiator::getCallee(NodeOp op) {
  StringRef name = getCalleeName(op);
  return name.empty() ? FuncOp() : module.lookupSymbol<FuncOp>(name);
}

LogicalResult Differentiator::callGrad(GradientBuilder &b, NodeOp op,
                                       FuncOp callee, ArrayRef<Value> outGrads,
                                       SmallVector<Value> &inGrads) {
  FailureOr<std::string> gradFunc = getGradientFunction(op, callee);
  if (failed(gradFunc))
    return failure();
  SmallVector<Value> inputs(op.getDataInputs());
  FailureOr<SmallVector<Value>> grads = gradsOrZeros(b, op, outGrads);
  if (failed(grads))
    return failure();
  llvm::append_range(inputs, *grads);
  MLIRContext *ctx = op.getContext();
  DictionaryAttr callAttrs = DictionaryAttr::get(ctx);
  if (auto f = dyn_cast_or_null<FuncAttr>(op.getTFAttr("f")))
    callAttrs = f.getAttrs();
  else if (op.getOpType() == callee.getSymName())
    callAttrs = op.getAttrs();
  Builder builder(ctx);
  auto f = FuncAttr::get(ctx, FlatSymbolRefAttr::get(callee.getSymNameAttr()),
                         callAttrs);
  FailureOr<NodeOp> grad = b.create(
      "SymbolicGradient", inputs,
      {builder.getNamedAttr("Tin", typeListOf(builder, inputs)),
       builder.getNamedAttr("Tout", typeListOf(builder, op.getDataInputs())),
       builder.getNamedAttr("f", f)},
      "SymbolicGradient", op.getLoc());
  if (failed(grad))
    return failure();
  for (auto [i, g] : llvm::enumerate(grad->getOutputs()))
    inGrads[i] = g;
  return success();
}

FailureOr<std::string> Differentiator::getGradientFunction(NodeOp call,
                                                           FuncOp callee) {
  GraphOp graph;
  for (auto g : module.getOps<GraphOp>())
    graph = g;
  MLIRContext *ctx = module.getContext();
  DictionaryAttr library = graph && graph.getLibraryAttr()
                               ? graph.getLibraryAttr()
                               : DictionaryAttr::get(ctx);
  SmallVector<Attribute> entries;
  if (auto list = library.getAs<ArrayAttr>("gradient"))
    entries.assign(list.begin(), list.end());
  for (Attribute entry : entries) {
    auto dict = cast<DictionaryAttr>(entry);
    auto name = dict.getAs<StringAttr>("function_name");
    auto gradient = dict.getAs<StringAttr>("gradient_func");
    if (name && gradient && name.getValue() == callee.getSymName())
      return gradient.str();
  }
  if (!graph)
    return call.emitError() << "Node '" << call.getName()
                            << "': no graph.graph holds the library to "
                               "register a gradient function in",
           failure();
  FailureOr<FuncOp> generated = generateGradientFunction(call, callee);
  if (failed(generated))
    return failure();
  // Registered as a GradientDef, which SymbolicGradient then runs. The
  // library is read again: generating may have registered nested calls.
  Builder builder(ctx);
  library = graph.getLibraryAttr() ? graph.getLibraryAttr()
                                   : DictionaryAttr::get(ctx);
  entries.clear();
  if (auto list = library.getAs<ArrayAttr>("gradient"))
    entries.assign(list.begin(), list.end());
  entries.push_back(builder.getDictionaryAttr(
      {builder.getNamedAttr("function_name", callee.getSymNameAttr()),
       builder.getNamedAttr("gradient_func", generated->getSymNameAttr())}));
  NamedAttrList updated(library);
  updated.set("gradient", builder.getArrayAttr(entries));
  graph.setLibraryAttr(updated.getDictionary(ctx));
  return generated->getSymName().str();
}

FailureOr<FuncOp> Differentiator::generateGradientFunction(NodeOp call,
                                                           FuncOp callee) {
  auto error = [&]() {
    return call.emitError()
           << "Node '" << call.getName() << "': cannot differentiate function '"
           << callee.getSymName() << "': ";
  };
  if (callee.getUncallable())
    return error() << "it has no name", failure();
  Block &body = callee.getBody().front();
  for (Type t : body.getArgumentTypes())
    if (isa<ControlType>(t))
      return error() << "control inputs on its arguments are not supported "
                        "yet",
             failure();
  auto inputArgs = callee.getSignature().getAs<ArrayAttr>("input_arg");
  if (!inputArgs || inputArgs.size() != body.getNumArguments())
    return error() << "only functions with one argument per input arg are "
                      "supported",
           failure();
  ReturnOp ret = callee.getReturnOp();
  unsigned numData = ret.getNames().size();
  MLIRContext *ctx = module.getContext();
  Builder builder(ctx);
  auto dtypeName = [](Value v) -> std::optional<std::string> {
    int32_t dt = typeToDataType(getElementTypeOf(v));
    if (dt <= 0)
      return std::nullopt;
    return "DT_" + StringRef(getDataTypeName(getElementTypeOf(v))).upper();
  };
  // Arguments: the callee's, then one gradient per result.
  SmallVector<Type> argTypes(body.getArgumentTypes());
  SmallVector<Attribute> argNames(callee.getArgNames().begin(),
                                  callee.getArgNames().end());
  SmallVector<Attribute> inputArgDefs(inputArgs.begin(), inputArgs.end());
  for (unsigned i = 0; i < numData; ++i) {
    Value v = ret.getOperand(i);
    std::optional<std::string> dt = dtypeName(v);
    if (!dt)
      return error() << "result " << i << " has no TensorFlow dtype", failure();
    std::string name = cast<StringAttr>(ret.getNames()[i]).str() + "_grad";
    argTypes.push_back(v.getType());
    argNames.push_back(builder.getStringAttr(name));
    inputArgDefs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("name", builder.getStringAttr(name)),
         builder.getNamedAttr("type", builder.getStringAttr(*dt))}));
  }
  // A unique symbol.
  std::string name = (callee.getSymName() + "_grad").str();
  for (int k = 1; module.lookupSymbol(name); ++k)
    name = (callee.getSymName() + "_grad_" + Twine(k)).str();

  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  OperationState state(callee.getLoc(), FuncOp::getOperationName());
  auto &props = state.getOrAddProperties<FuncOp::Properties>();
  props.sym_name = mb.getStringAttr(name);
  props.arg_names = mb.getArrayAttr(argNames);
  props.function_type = TypeAttr::get(mb.getFunctionType(argTypes, {}));
  props.signature = mb.getDictionaryAttr({});
  state.addRegion();
  auto func = cast<FuncOp>(mb.create(state));
  Block *block = new Block;
  func.getBody().push_back(block);
  for (Type t : argTypes)
    block->addArgument(t, callee.getLoc());

  // The forward body, then its gradient.
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(body.getArguments(), block->getArguments()))
    mapping.map(from, to);
  OpBuilder bb = OpBuilder::atBlockEnd(block);
  SmallVector<NodeOp> forward(body.getOps<NodeOp>());
  cloneNodes(bb, forward, mapping);
  SmallVector<Value> ys, xs, gradYs;
  for (unsigned i = 0; i < numData; ++i)
    ys.push_back(mapping.lookupOrDefault(ret.getOperand(i)));
  for (unsigned i = 0; i < body.getNumArguments(); ++i)
    xs.push_back(block->getArgument(i));
  for (unsigned i = 0; i < numData; ++i)
    gradYs.push_back(block->getArgument(body.getNumArguments() + i));
  GradientOptions options;
  options.aggregationMethod = aggregationMethod;
  options.colocateGradientsWithOps = colocateGradientsWithOps;
  options.unconnectedGradients = "zero";
  FailureOr<SmallVector<Value>> grads =
      Differentiator(options).run(*block, ys, xs, gradYs, {});
  if (failed(grads))
    return failure();
  SmallVector<Attribute> resultNames, outputArgDefs;
  SmallVector<Type> resultTypes;
  for (auto [i, g] : llvm::enumerate(*grads)) {
    std::string resultName =
        cast<StringAttr>(callee.getArgNames()[i]).str() + "_grad";
    resultNames.push_back(builder.getStringAttr(resultName));
    resultTypes.push_back(g.getType());
    std::optional<std::string> dt = dtypeName(g);
    if (!dt)
      return error() << "argument " << i << " has no TensorFlow dtype",
             failure();
    outputArgDefs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr("name", builder.getStringAttr(resultName)),
         builder.getNamedAttr("type", builder.getStringAttr(*dt))}));
  }
  bb.setInsertionPointToEnd(block);
  bb.create<ReturnOp>(callee.getLoc(), *grads, bb.getArrayAttr(resultNames),
                      bb.getStrArrayAttr({}), ArrayAttr());
  func.setFunctionTypeAttr(
      TypeAttr::get(mb.getFunctionType(argTypes, resultTypes)));
  func.setSignatureAttr(mb.getDictionaryAttr(
      {mb.getNamedAttr("input_arg", mb.getArrayAttr(inputArgDefs)),
       mb.getNamedAttr("output_arg", mb.getArrayAttr(outputArgDefs))}));
  return func;
}

FailureOr<std::string>
cleave::graph::getOrCreateGradientFunction(NodeOp user, FuncOp function) {
  Differentiator differentiator{GradientOptions()};
  differentiator.module = user->getParentOfType<ModuleOp>();
  return differentiator.getGradientFunction(user, function);
}
