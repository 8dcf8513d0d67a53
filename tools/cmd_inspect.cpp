#include "cmd_inspect.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace {

using rf::gguf::File;
using rf::gguf::TensorInfo;
using rf::gguf::Value;
using rf::gguf::ValueType;

constexpr size_t kMaxArrayItemsShown = 8;
constexpr size_t kMaxStringCharsShown = 160; // chat templates can be kilobytes long

constexpr const char *kUsageLine = "usage: rocmforge inspect MODEL [--json]\n";
const std::string kUsage = std::string(kUsageLine) +
    "\n"
    "Prints a GGUF file's version, alignment, metadata (long arrays elided), tensor table\n"
    "(name, type, shape, data offset, bytes) and totals (parameters, bytes, bits per weight).\n"
    "\n"
    "  --json      machine-readable output\n"
    "  -h, --help  show this help\n";

std::string type_label(const Value &v) {
    if (!v.is_array()) return rf::gguf::value_type_name(v.type);
    return std::string("array[") + rf::gguf::value_type_name(v.elem_type) + "]";
}

std::string display_value(const Value &v) {
    if (v.is_string() && v.s.size() > kMaxStringCharsShown) {
        Value head = Value::from_string(v.s.substr(0, kMaxStringCharsShown));
        return head.to_string() + fmt::format("... ({} bytes)", v.s.size());
    }
    return v.to_string(kMaxArrayItemsShown);
}

std::string shape_string(const TensorInfo &t) {
    std::string s = "[";
    for (int d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
    return s + "]";
}

struct Totals {
    int64_t params = 0;
    uint64_t bytes = 0;
    double bits_per_weight() const { return params ? double(bytes) * 8.0 / double(params) : 0.0; }
};

Totals totals_of(const File &f) {
    Totals t;
    for (const auto &ti : f.tensors()) {
        t.params += ti.n_elements();
        t.bytes += ti.nbytes;
    }
    return t;
}

void print_text(const File &f) {
    fmt::print("file:         {}\n", f.path());
    fmt::print("version:      {}\n", f.version());
    fmt::print("alignment:    {}\n", f.alignment());
    fmt::print("data offset:  {}\n", f.data_offset());
    fmt::print("file size:    {} bytes\n", f.file_size());

    size_t key_width = 0;
    for (const auto &kv : f.metadata()) key_width = std::max(key_width, kv.key.size());
    fmt::print("\nmetadata ({} keys):\n", f.metadata().size());
    for (const auto &kv : f.metadata())
        fmt::print("  {:<{}}  {:<14} {}\n", kv.key, key_width, type_label(kv.value),
                   display_value(kv.value));

    const auto &ts = f.tensors();
    size_t name_width = 4, shape_width = 5;
    for (const auto &t : ts) {
        name_width = std::max(name_width, t.name.size());
        shape_width = std::max(shape_width, shape_string(t).size());
    }
    fmt::print("\ntensors ({}):\n", ts.size());
    if (!ts.empty()) {
        fmt::print("  {:<{}}  {:<10} {:<{}}  {:>14}  {:>14}\n", "name", name_width, "type",
                   "shape", shape_width, "offset", "bytes");
        for (const auto &t : ts)
            fmt::print("  {:<{}}  {:<10} {:<{}}  {:>14}  {:>14}\n", t.name, name_width,
                       rf::type_name(t.type), shape_string(t), shape_width, t.offset, t.nbytes);
    }
    const Totals tot = totals_of(f);
    fmt::print("\ntotals: {} parameters, {} bytes, {:.3f} bits per weight\n", tot.params,
               tot.bytes, tot.bits_per_weight());
}

using JsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void write_json_value(JsonWriter &w, const Value &v) {
    switch (v.type) {
    case ValueType::STRING: w.String(v.s.data(), rapidjson::SizeType(v.s.size())); break;
    case ValueType::BOOL: w.Bool(v.u != 0); break;
    case ValueType::FLOAT32:
    case ValueType::FLOAT64:
    {
        // Shortest round-trip text of the stored width (1e-05, not 9.999999747378752e-06).
        const std::string s = v.to_string();
        if (std::isfinite(v.f))
            w.RawValue(s.data(), s.size(), rapidjson::kNumberType);
        else // JSON has no NaN/Inf
            w.String(s.data(), rapidjson::SizeType(s.size()));
        break;
    }
    case ValueType::INT8:
    case ValueType::INT16:
    case ValueType::INT32:
    case ValueType::INT64: w.Int64(v.i); break;
    case ValueType::ARRAY:
        w.StartArray();
        for (size_t k = 0; k < v.arr.size() && k < kMaxArrayItemsShown; ++k)
            write_json_value(w, v.arr[k]);
        w.EndArray();
        break;
    default: w.Uint64(v.u); break;
    }
}

void print_json(const File &f) {
    rapidjson::StringBuffer sb;
    JsonWriter w(sb);
    w.StartObject();
    w.Key("file");
    w.String(f.path().c_str());
    w.Key("version");
    w.Uint(f.version());
    w.Key("alignment");
    w.Uint64(f.alignment());
    w.Key("data_offset");
    w.Uint64(f.data_offset());
    w.Key("file_size");
    w.Uint64(f.file_size());

    // A list keeps the file's key order and each value's GGUF type. Arrays are cut to their
    // first items; "length" gives the full count.
    w.Key("metadata");
    w.StartArray();
    for (const auto &kv : f.metadata()) {
        w.StartObject();
        w.Key("key");
        w.String(kv.key.data(), rapidjson::SizeType(kv.key.size()));
        w.Key("type");
        w.String(rf::gguf::value_type_name(kv.value.type));
        if (kv.value.is_array()) {
            w.Key("element_type");
            w.String(rf::gguf::value_type_name(kv.value.elem_type));
            w.Key("length");
            w.Uint64(kv.value.arr.size());
        }
        w.Key("value");
        write_json_value(w, kv.value);
        w.EndObject();
    }
    w.EndArray();

    w.Key("tensors");
    w.StartArray();
    for (const auto &t : f.tensors()) {
        w.StartObject();
        w.Key("name");
        w.String(t.name.data(), rapidjson::SizeType(t.name.size()));
        w.Key("type");
        w.String(rf::type_name(t.type));
        w.Key("shape");
        w.StartArray();
        for (int d = 0; d < t.n_dims; ++d) w.Int64(t.ne[d]);
        w.EndArray();
        w.Key("offset");
        w.Uint64(t.offset);
        w.Key("bytes");
        w.Uint64(t.nbytes);
        w.EndObject();
    }
    w.EndArray();

    const Totals tot = totals_of(f);
    w.Key("totals");
    w.StartObject();
    w.Key("tensors");
    w.Uint64(f.tensors().size());
    w.Key("params");
    w.Int64(tot.params);
    w.Key("bytes");
    w.Uint64(tot.bytes);
    w.Key("bits_per_weight");
    w.Double(tot.bits_per_weight());
    w.EndObject();
    w.EndObject();
    std::fwrite(sb.GetString(), 1, sb.GetSize(), stdout);
    std::fputc('\n', stdout);
}

// Usage errors print the message and the one-line synopsis to stderr; exit code 2.
int usage_error(const std::string &msg) {
    std::fprintf(stderr, "inspect: %s\n%s(run `rocmforge inspect --help` for details)\n",
                 msg.c_str(), kUsageLine);
    return 2;
}

} // namespace

int cmd_inspect(int argc, char **argv) {
    std::string model;
    bool json = false;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage.c_str(), stdout);
            return 0;
        }
        if (arg == "--json") {
            json = true;
        } else if (arg.size() > 1 && arg[0] == '-') {
            return usage_error("unknown option '" + std::string(arg) + "'");
        } else if (model.empty()) {
            model = arg;
        } else {
            return usage_error("unexpected argument '" + std::string(arg) + "'");
        }
    }
    if (model.empty()) return usage_error("missing MODEL");
    const auto file = File::open(model);
    if (json)
        print_json(*file);
    else
        print_text(*file);
    std::fflush(stdout);
    return 0;
}
