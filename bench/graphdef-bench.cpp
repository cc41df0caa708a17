//===- graphdef-bench.cpp - GraphDef import/export benchmark driver -------===//
//
//   cleave-graphdef-bench generate N out.pb [--tower]
//       writes a realistic GraphDef; with --tower the layers' compute lies
//       in name scope "model/" (variables stay outside), ready to replicate.
//   cleave-graphdef-bench roundtrip in.pb [out.mlir]
//       times parse, import, export and serialize of a binary GraphDef and
//       optionally writes the module (generic form) for mlir-opt to parse.
//   cleave-graphdef-bench replicate in.pb REPLICAS
//       times graph-replicate (computation=model, one outside-compilation
//       scope) and graph-cluster-formation on a --tower graph, export, then
//       graph-extract-outside-compilation.
//
// The generated graph mixes what training graphs contain: constants with
// small tensors, placeholders and variables on a parameter-server device,
// dense layers (MatMul, BiasAdd, Relu), gradients-style Identity chains with
// control edges, and `_class` / `_output_shapes` attrs.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Graph/IR/Graph.h"
#include "cleave/InitAll.h"
#include "cleave/Support/ToolInit.h"
#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/graph.pb.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <sys/resource.h>

namespace tf = tensorflow;
using Clock = std::chrono::steady_clock;

static void addAttrType(tf::NodeDef &n, const char *key, tf::DataType t) {
  (*n.mutable_attr())[key].set_type(t);
}

static void generate(long numNodes, bool tower, tf::GraphDef &g) {
  const char *devices[] = {"/job:worker/replica:0/task:0/device:CPU:0",
                           "/job:worker/replica:0/task:0/device:GPU:0",
                           "/job:ps/replica:0/task:0/device:CPU:0", ""};
  long i = 0;
  auto name = [](const char *prefix, long k) {
    return std::string(prefix) + "_" + std::to_string(k);
  };
  std::string prev = "input";
  {
    tf::NodeDef *n = g.add_node();
    n->set_name("input");
    n->set_op("Placeholder");
    addAttrType(*n, "dtype", tf::DT_FLOAT);
    auto *shape = (*n->mutable_attr())["shape"].mutable_shape();
    shape->add_dim()->set_size(-1);
    shape->add_dim()->set_size(128);
    ++i;
  }
  for (long layer = 0; i < numNodes; ++layer) {
    std::string varScope = "layer" + std::to_string(layer) + "/";
    std::string scope = (tower ? "model/" : "") + varScope;
    const char *device = devices[layer % 4];
    // Weights: a variable on the ps, a constant initializer, its read.
    tf::NodeDef *w = g.add_node();
    w->set_name(varScope + "kernel");
    w->set_op("VariableV2");
    w->set_device(devices[2]);
    addAttrType(*w, "dtype", tf::DT_FLOAT);
    auto *ws = (*w->mutable_attr())["shape"].mutable_shape();
    ws->add_dim()->set_size(128);
    ws->add_dim()->set_size(128);
    (*w->mutable_attr())["container"].set_s("");
    (*w->mutable_attr())["shared_name"].set_s("");
    tf::NodeDef *init = g.add_node();
    init->set_name(varScope + "kernel/Initializer/Const");
    init->set_op("Const");
    addAttrType(*init, "dtype", tf::DT_FLOAT);
    auto *t = (*init->mutable_attr())["value"].mutable_tensor();
    t->set_dtype(tf::DT_FLOAT);
    t->mutable_tensor_shape()->add_dim()->set_size(4);
    for (int k = 0; k < 4; ++k)
      t->add_float_val(0.01f * (k + layer % 7));
    (*init->mutable_attr())["_class"].mutable_list()->add_s("loc:@" + varScope +
                                                             "kernel");
    tf::NodeDef *read = g.add_node();
    read->set_name(varScope + "kernel/read");
    read->set_op("Identity");
    read->add_input(varScope + "kernel");
    read->set_device(devices[2]);
    addAttrType(*read, "T", tf::DT_FLOAT);
    // Dense layer.
    tf::NodeDef *mm = g.add_node();
    mm->set_name(scope + "MatMul");
    mm->set_op("MatMul");
    mm->add_input(prev);
    mm->add_input(varScope + "kernel/read");
    mm->set_device(device);
    addAttrType(*mm, "T", tf::DT_FLOAT);
    (*mm->mutable_attr())["transpose_a"].set_b(false);
    (*mm->mutable_attr())["transpose_b"].set_b(false);
    auto *os = (*mm->mutable_attr())["_output_shapes"].mutable_list()->add_shape();
    os->add_dim()->set_size(-1);
    os->add_dim()->set_size(128);
    tf::NodeDef *bias = g.add_node();
    bias->set_name(scope + "BiasAdd");
    bias->set_op("BiasAdd");
    bias->add_input(scope + "MatMul");
    bias->add_input(varScope + "kernel/Initializer/Const");
    bias->set_device(device);
    addAttrType(*bias, "T", tf::DT_FLOAT);
    (*bias->mutable_attr())["data_format"].set_s("NHWC");
    tf::NodeDef *relu = g.add_node();
    relu->set_name(scope + "Relu");
    relu->set_op("Relu");
    relu->add_input(scope + "BiasAdd");
    relu->set_device(device);
    addAttrType(*relu, "T", tf::DT_FLOAT);
    // A control-dependency group, as tf.group / tuple() write them.
    tf::NodeDef *group = g.add_node();
    group->set_name(scope + "tuple/group_deps");
    group->set_op("NoOp");
    group->add_input("^" + scope + "Relu");
    group->add_input("^" + varScope + "kernel/read");
    tf::NodeDef *dep = g.add_node();
    dep->set_name(scope + "tuple/control_dependency");
    dep->set_op("Identity");
    dep->add_input(scope + "Relu");
    dep->add_input("^" + scope + "tuple/group_deps");
    addAttrType(*dep, "T", tf::DT_FLOAT);
    (*dep->mutable_attr())["_class"].mutable_list()->add_s("loc:@" + scope +
                                                           "Relu");
    prev = scope + "tuple/control_dependency";
    i += 8;
  }
  g.mutable_versions()->set_producer(1395);
  g.mutable_versions()->set_min_consumer(12);
  (void)name;
}

static double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

static long currentRssMiB() {
  long pages = 0, resident = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    std::fclose(f);
  }
  return resident * 4 / 1024;
}

static long peakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

static bool readGraphDef(const char *path, google::protobuf::Arena &arena,
                         tf::GraphDef *&g) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = buffer.str();
  g = google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  stream.SetTotalBytesLimit(INT32_MAX);
  if (!g->ParseFromCodedStream(&stream)) {
    std::cerr << "cannot parse " << path << "\n";
    return false;
  }
  return true;
}

/// Times `pipeline` (passes on the module) alone; the verifier runs
/// afterwards, untimed.
static double timePass(mlir::ModuleOp module, llvm::StringRef pipeline) {
  mlir::PassManager pm(module->getContext());
  pm.enableVerifier(false);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm))) {
    std::cerr << "bad pipeline " << pipeline.str() << "\n";
    std::exit(1);
  }
  auto t0 = Clock::now();
  if (mlir::failed(pm.run(module)))
    std::exit(1);
  auto t1 = Clock::now();
  if (mlir::failed(mlir::verify(module)))
    std::exit(1);
  return seconds(t0, t1);
}

static int replicate(const char *path, long replicas) {
  google::protobuf::Arena arena;
  tf::GraphDef *g;
  if (!readGraphDef(path, arena, g))
    return 1;
  mlir::DialectRegistry registry;
  cleave::registerAllDialects(registry);
  cleave::registerAllPasses();
  mlir::MLIRContext ctx(registry);
  ctx.disableMultithreading();
  auto t0 = Clock::now();
  auto module = cleave::importGraphDef(*g, &ctx);
  if (!module)
    return 1;
  auto t1 = Clock::now();
  double replicateS = timePass(
      *module, "graph-replicate{computation=model num-replicas=" +
                   std::to_string(replicas) +
                   " outside-compilation=model/layer1}");
  double clusterS =
      timePass(*module, "graph-cluster-formation");
  auto t2 = Clock::now();
  tf::GraphDef &out =
      *google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
  if (mlir::failed(cleave::exportGraphDef(*module, out)))
    return 1;
  auto t3 = Clock::now();
  long tagged = 0;
  for (const tf::NodeDef &node : out.node())
    tagged += node.attr().count("_tpu_replicate");
  // Extraction timed on its own, after the export of the formed graph.
  double extractS = timePass(*module, "graph-extract-outside-compilation");
  long hostComputes = 0;
  module->walk([&](cleave::graph::NodeOp node) {
    hostComputes += node.getOpType() == "_XlaHostComputeMlir";
  });
  std::printf("nodes=%d\nimport_s=%.3f\nreplicate_s=%.3f\ncluster_s=%.3f\n"
              "export_s=%.3f\nextract_s=%.3f\nexported_nodes=%d\n"
              "tagged_nodes=%ld\nhost_computes=%ld\npeak_rss_mib=%ld\n",
              g->node_size(), seconds(t0, t1), replicateS, clusterS,
              seconds(t2, t3), extractS, out.node_size(), tagged,
              hostComputes, peakRssMiB());
  return 0;
}

int main(int argc, char **argv) {
  cleave::initTool(argc, argv);
  if (argc >= 4 && std::string(argv[1]) == "generate") {
    tf::GraphDef g;
    generate(std::stol(argv[2]), argc >= 5 && std::string(argv[4]) == "--tower",
             g);
    std::ofstream out(argv[3], std::ios::binary);
    g.SerializeToOstream(&out);
    std::cout << "generated " << g.node_size() << " nodes\n";
    return 0;
  }
  if (argc >= 3 && std::string(argv[1]) == "roundtrip") {
    std::ifstream in(argv[2], std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string bytes = buffer.str();
    auto t0 = Clock::now();
    google::protobuf::Arena arena;
    tf::GraphDef &g = *google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    stream.SetTotalBytesLimit(INT32_MAX);
    if (!g.ParseFromCodedStream(&stream)) {
      std::cerr << "cannot parse " << argv[2] << "\n";
      return 1;
    }
    auto t1 = Clock::now();
    long rssParsed = currentRssMiB();
    mlir::MLIRContext ctx;
    ctx.disableMultithreading();
    auto module = cleave::importGraphDef(g, &ctx);
    if (!module)
      return 1;
    auto t2 = Clock::now();
    long rssImported = currentRssMiB();
    tf::GraphDef &out = *google::protobuf::Arena::CreateMessage<tf::GraphDef>(&arena);
    if (mlir::failed(cleave::exportGraphDef(*module, out)))
      return 1;
    auto t3 = Clock::now();
    std::string written;
    google::protobuf::io::StringOutputStream os(&written);
    {
      google::protobuf::io::CodedOutputStream coded(&os);
      coded.SetSerializationDeterministic(true);
      out.SerializeToCodedStream(&coded);
    }
    auto t4 = Clock::now();
    // Identical to the input written deterministically?
    std::string expected;
    {
      google::protobuf::io::StringOutputStream es(&expected);
      google::protobuf::io::CodedOutputStream coded(&es);
      coded.SetSerializationDeterministic(true);
      g.SerializeToCodedStream(&coded);
    }
    // Machine-readable: one key=value per line.
    std::printf("rss_after_parse_mib=%ld\nrss_after_import_mib=%ld\n",
                rssParsed, rssImported);
    std::printf("nodes=%d\nbytes=%zu\nparse_s=%.3f\nimport_s=%.3f\n"
                "export_s=%.3f\nserialize_s=%.3f\nroundtrip_s=%.3f\n"
                "peak_rss_mib=%ld\nidentical=%d\n",
                g.node_size(), bytes.size(), seconds(t0, t1), seconds(t1, t2),
                seconds(t2, t3), seconds(t3, t4), seconds(t0, t4),
                peakRssMiB(), written == expected ? 1 : 0);
    if (argc >= 4) {
      std::error_code ec;
      llvm::raw_fd_ostream mlirOut(argv[3], ec);
      mlir::OpPrintingFlags flags;
      flags.printGenericOpForm();
      module->print(mlirOut, flags);
    }
    return 0;
  }
  if (argc >= 4 && std::string(argv[1]) == "replicate")
    return replicate(argv[2], std::stol(argv[3]));
  std::cerr << "usage: cleave-graphdef-bench generate N out.pb [--tower]\n"
               "       cleave-graphdef-bench roundtrip in.pb [out.mlir]\n"
               "       cleave-graphdef-bench replicate in.pb REPLICAS\n";
  return 2;
}
