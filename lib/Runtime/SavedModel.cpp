//===- SavedModel.cpp - running a MetaGraphDef as TensorFlow loads it -----===//
//
// TensorFlow 1.x's loader (loader.cc) restores the variables through the
// saver, then runs the main op with every asset file tensor fed its path.
// Assets are listed in MetaGraphDef.asset_file_def or, as TF 1.x wrote
// them, packed as Any in the collection `saved_model_assets`.
//
//===----------------------------------------------------------------------===//

#include "cleave/Runtime/SavedModel.h"

#include "cleave/Translate/GraphDef.h"
#include "cleave/tf/meta_graph.pb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace cleave;
using namespace cleave::runtime;
namespace tf = tensorflow;

static std::vector<std::pair<std::string, std::string>>
sortedNames(const google::protobuf::Map<std::string, tf::TensorInfo> &map) {
  std::vector<std::pair<std::string, std::string>> names;
  for (const auto &[key, info] : map)
    names.emplace_back(key, info.name());
  llvm::sort(names);
  return names;
}

llvm::Expected<Signature> runtime::getSignature(ModuleOp module,
                                                StringRef key) {
  tf::MetaGraphDef meta;
  if (!getMetaGraphInfo(module, meta))
    return llvm::createStringError(
        "--signature=%s: the graph has no SignatureDefs (it was not read "
        "from a MetaGraphDef or SavedModel)",
        key.str().c_str());
  auto it = meta.signature_def().find(key.str());
  if (it == meta.signature_def().end()) {
    std::vector<std::string> keys;
    for (const auto &entry : meta.signature_def())
      keys.push_back(entry.first);
    llvm::sort(keys);
    return llvm::createStringError(
        "--signature=%s: no such SignatureDef; the MetaGraphDef has %s",
        key.str().c_str(),
        keys.empty() ? "none" : llvm::join(keys, ", ").c_str());
  }
  for (const auto &[name, info] : it->second.inputs())
    if (info.name().empty())
      return llvm::createStringError(
          "--signature=%s: input '%s' is not a dense tensor (sparse and "
          "composite inputs are not supported)",
          key.str().c_str(), name.c_str());
  for (const auto &[name, info] : it->second.outputs())
    if (info.name().empty())
      return llvm::createStringError(
          "--signature=%s: output '%s' is not a dense tensor (sparse and "
          "composite outputs are not supported)",
          key.str().c_str(), name.c_str());
  return Signature{sortedNames(it->second.inputs()),
                   sortedNames(it->second.outputs())};
}

llvm::Expected<SavedModelInit>
runtime::getSavedModelInit(ModuleOp module, StringRef exportDir) {
  SavedModelInit init;
  tf::MetaGraphDef meta;
  if (!getMetaGraphInfo(module, meta))
    return init;
  std::vector<tf::AssetFileDef> assets(meta.asset_file_def().begin(),
                                       meta.asset_file_def().end());
  auto collection = meta.collection_def().find("saved_model_assets");
  if (collection != meta.collection_def().end())
    for (const auto &any : collection->second.any_list().value()) {
      tf::AssetFileDef asset;
      if (!any.UnpackTo(&asset))
        return llvm::createStringError(
            "collection saved_model_assets holds a '%s', not an AssetFileDef",
            any.type_url().c_str());
      assets.push_back(std::move(asset));
    }
  for (const tf::AssetFileDef &asset : assets) {
    if (asset.filename().empty() || asset.tensor_info().name().empty())
      return llvm::createStringError(
          "an AssetFileDef lacks its filename or tensor name");
    llvm::SmallString<256> path(exportDir);
    llvm::sys::path::append(path, "assets", asset.filename());
    cleave::Tensor value(cleave::kString, {});
    value.strings()[0] = path.str().str();
    init.assetFeeds.emplace_back(asset.tensor_info().name(), value);
  }
  for (const char *name : {"saved_model_main_op", "legacy_init_op"}) {
    auto it = meta.collection_def().find(name);
    if (it == meta.collection_def().end())
      continue;
    const auto &nodes = it->second.node_list().value();
    if (nodes.size() != 1)
      return llvm::createStringError(
          "collection %s must name one node, it names %d", name,
          nodes.size());
    init.mainOp = StringRef(nodes[0]).split(':').first.str();
    break;
  }
  return init;
}

std::string runtime::getExportDir(StringRef path) {
  if (llvm::sys::fs::is_directory(path))
    return path.str();
  StringRef parent = llvm::sys::path::parent_path(path);
  return parent.empty() ? "." : parent.str();
}

std::string runtime::getSavedModelVariables(ModuleOp module, StringRef path) {
  if (getImportedMessage(module) != GraphMessage::SavedModel)
    return "";
  llvm::SmallString<256> prefix(getExportDir(path));
  llvm::sys::path::append(prefix, "variables", "variables");
  return llvm::sys::fs::exists(prefix + ".index") ? prefix.str().str() : "";
}
