//===- FormatDetection.cpp - which message a graph file holds -------------===//
//
// Sniffs MLIR, GraphDefs, MetaGraphDefs and SavedModels, text or binary,
// from their content. Needs only protobuf, so that graph-diff can use it
// without MLIR.
//
//===----------------------------------------------------------------------===//

#include "cleave/Translate/InputFormat.h"
#include "cleave/tf/graph.pb.h"
#include "cleave/tf/meta_graph.pb.h"
#include "cleave/tf/saved_model.pb.h"

#include "llvm/ADT/StringExtras.h"

#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/wire_format_lite.h"

using namespace cleave;
using llvm::StringRef;
namespace tf = tensorflow;
namespace pb = google::protobuf;

/// Whether `message` or a message inside it has fields its schema does not
/// know: the sign of a buffer parsed as the wrong message type.
static bool hasUnknownFields(const pb::Message &message) {
  const pb::Reflection *r = message.GetReflection();
  if (!r->GetUnknownFields(message).empty())
    return true;
  std::vector<const pb::FieldDescriptor *> fields;
  r->ListFields(message, &fields);
  for (const pb::FieldDescriptor *field : fields) {
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    if (!field->is_repeated()) {
      if (hasUnknownFields(r->GetMessage(message, field)))
        return true;
      continue;
    }
    for (int i = 0, e = r->FieldSize(message, field); i < e; ++i)
      if (hasUnknownFields(r->GetRepeatedMessage(message, field, i)))
        return true;
  }
  return false;
}

static bool parsesCleanly(StringRef bytes, pb::Message &message) {
  pb::LogSilencer quiet; // a wrong guess is not worth a log line
  pb::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  stream.SetRecursionLimit(100);
  return message.ParseFromCodedStream(&stream) &&
         stream.ConsumedEntireMessage() && !hasUnknownFields(message);
}

/// Tells the three binary messages apart. Their top-level fields mostly
/// decide: a SavedModel alone has a varint field 1, a GraphDef alone
/// repeats field 1 (its nodes) or has a varint field 3, a MetaGraphDef
/// alone has fields 3, 6 or 7 as messages. What is left (a graph of at
/// most one node, a MetaGraphDef of a graph alone, a SavedModel of one
/// MetaGraphDef) is parsed as each in turn.
static InputFormat classifyBinary(StringRef bytes) {
  pb::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  int field1Count = 0, field2Count = 0;
  while (uint32_t tag = stream.ReadTag()) {
    int number = pb::internal::WireFormatLite::GetTagFieldNumber(tag);
    auto wireType = pb::internal::WireFormatLite::GetTagWireType(tag);
    bool isVarint = wireType == pb::internal::WireFormatLite::WIRETYPE_VARINT;
    bool isBytes =
        wireType == pb::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (number == 1 && isVarint)
      return InputFormat::SavedModelBinary;
    if (number == 3 && isVarint)
      return InputFormat::GraphDefBinary;
    if ((number == 3 || number == 6 || number == 7) && isBytes)
      return InputFormat::MetaGraphDefBinary;
    field1Count += number == 1;
    field2Count += number == 2;
    if (!pb::internal::WireFormatLite::SkipField(&stream, tag))
      return InputFormat::GraphDefBinary; // corrupt: the GraphDef error
  }
  if (field1Count > 1)
    return InputFormat::GraphDefBinary;
  if (field2Count > 1 && field1Count == 0)
    return InputFormat::SavedModelBinary;
  pb::Arena arena;
  if (parsesCleanly(bytes, *pb::Arena::CreateMessage<tf::GraphDef>(&arena)))
    return InputFormat::GraphDefBinary;
  if (parsesCleanly(bytes,
                    *pb::Arena::CreateMessage<tf::MetaGraphDef>(&arena)))
    return InputFormat::MetaGraphDefBinary;
  if (parsesCleanly(bytes, *pb::Arena::CreateMessage<tf::SavedModel>(&arena)))
    return InputFormat::SavedModelBinary;
  return InputFormat::GraphDefBinary;
}

/// The message a text file holds, from the name of its first field.
static InputFormat classifyText(StringRef firstField) {
  if (tf::MetaGraphDef::descriptor()->FindFieldByName(firstField.str()))
    return InputFormat::MetaGraphDefText;
  if (tf::SavedModel::descriptor()->FindFieldByName(firstField.str()))
    return InputFormat::SavedModelText;
  // A GraphDef field, or a misspelt one: the GraphDef parser says which.
  return InputFormat::GraphDefText;
}

/// `buffer` after leading whitespace and `#` lines (protobuf text comments,
/// a script's shebang).
static StringRef skipCommentLines(StringRef buffer) {
  StringRef rest = buffer.ltrim();
  while (rest.starts_with("#"))
    rest = rest.drop_until([](char c) { return c == '\n'; }).ltrim();
  return rest;
}

/// Whether text that is no protobuf message can be MLIR: after `//`
/// comments, its first token starts a top-level op (`module`, a
/// `dialect.op`, a generic `"op"`, results `%x =`) or an alias or resource
/// (`#a =`, `!t =`, `{-#`). An empty file is an empty module.
static bool looksLikeMLIR(StringRef buffer) {
  StringRef rest = buffer.ltrim();
  while (rest.starts_with("//"))
    rest = rest.drop_until([](char c) { return c == '\n'; }).ltrim();
  if (rest.empty())
    return true;
  if (rest.starts_with("\"") || rest.starts_with("%") ||
      rest.starts_with("#") || rest.starts_with("!") || rest.starts_with("{-#"))
    return true;
  StringRef word = rest.take_while([](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
  });
  return word == "module" || (word.contains('.') && llvm::isAlpha(word[0]));
}

InputFormat cleave::detectInputFormat(StringRef buffer) {
  // Bytes that never occur in text mean the wire format.
  StringRef head = buffer.take_front(4096);
  for (char c : head) {
    unsigned char u = c;
    if (u < 0x20 && u != '\t' && u != '\n' && u != '\r' && u != '\f' &&
        u != '\v')
      return classifyBinary(buffer);
  }
  // A text message starts with a field.
  StringRef rest = skipCommentLines(buffer);
  StringRef word = rest.take_while(
      [](char c) { return llvm::isAlnum(c) || c == '_'; });
  StringRef after = rest.drop_front(word.size()).ltrim();
  // `name {`, `name:` or `name <` is protobuf text; the only MLIR that
  // starts so is `module {`. A misspelt field stays a (bad) GraphDef, so
  // that the error says which field is wrong.
  bool protoSyntax = after.starts_with("{") || after.starts_with(":") ||
                     after.starts_with("<");
  if (!word.empty() && protoSyntax && word != "module")
    return classifyText(word);
  if (rest.empty() && !buffer.empty() && buffer.ltrim().starts_with("#"))
    return InputFormat::GraphDefText; // only comments: an empty GraphDef
  return InputFormat::MLIR;
}

std::string cleave::identifyNonGraph(StringRef buffer) {
  static const std::pair<StringRef, const char *> kMagic[] = {
      {StringRef("\x93NUMPY", 6), "a NumPy array (.npy)"},
      {StringRef("PK\x03\x04", 4), "a zip archive (.npz, .keras, ...)"},
      {StringRef("\x89HDF\r\n\x1a\n", 8), "an HDF5 file (a Keras .h5 model?)"},
      {StringRef("\x1f\x8b", 2), "a gzip file"},
      {StringRef("\x7f" "ELF", 4), "an executable (ELF)"},
      {StringRef("\x89PNG", 4), "a PNG image"},
  };
  for (const auto &[magic, what] : kMagic)
    if (buffer.starts_with(magic))
      return what;
  // A script names its interpreter on its first line.
  if (buffer.starts_with("#!")) {
    StringRef line = buffer.take_until([](char c) { return c == '\n'; });
    if (line.contains("python"))
      return "a Python script";
    return ("a script (" + line.rtrim() + ")").str();
  }
  // Text: the first word after `#` lines (comments).
  StringRef rest = skipCommentLines(buffer);
  if (rest.starts_with("{\"") || rest.starts_with("["))
    return "a JSON file";
  // A module docstring opens most Python files.
  if (rest.starts_with("\"\"\"") || rest.starts_with("'''"))
    return "a Python script";
  StringRef word =
      rest.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; });
  StringRef after = rest.drop_front(word.size());
  if ((word == "import" || word == "from" || word == "def" ||
       word == "class") &&
      after.starts_with(" "))
    return "a Python script";
  if (detectInputFormat(buffer) == InputFormat::MLIR && !looksLikeMLIR(buffer))
    return "text that is neither a protobuf text message nor MLIR";
  return "";
}
