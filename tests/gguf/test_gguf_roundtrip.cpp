// Writer -> reader round trips, typed getters, and the writer's atomicity guarantees.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>

#include <sys/resource.h>

#include "gguf_test_util.h"
#include "rocmforge/abi.h"
#include "rocmforge/types.h"

using namespace gguf_test;
using rf::gguf::File;
using rf::gguf::Value;
using rf::gguf::Writer;
using Catch::Matchers::Contains;

namespace {

Value scalar(ValueType t, uint64_t u, int64_t i, double f) {
    Value v;
    v.type = t;
    v.u = u;
    v.i = i;
    v.f = f;
    return v;
}

Value array_of(ValueType elem, std::vector<Value> items) {
    Value v;
    v.type = ValueType::ARRAY;
    v.elem_type = elem;
    v.arr = std::move(items);
    return v;
}

// Deep equality of the fields that matter for each type.
bool same(const Value &a, const Value &b) {
    if (a.type != b.type) return false;
    switch (a.type) {
    case ValueType::STRING: return a.s == b.s;
    case ValueType::FLOAT32:
    case ValueType::FLOAT64: return a.f == b.f;
    case ValueType::INT8:
    case ValueType::INT16:
    case ValueType::INT32:
    case ValueType::INT64: return a.i == b.i;
    case ValueType::ARRAY:
        if (a.elem_type != b.elem_type || a.arr.size() != b.arr.size()) return false;
        for (size_t k = 0; k < a.arr.size(); ++k)
            if (!same(a.arr[k], b.arr[k])) return false;
        return true;
    default: return a.u == b.u;
    }
}

// One key per value type, extreme values included, plus arrays of each kind.
std::vector<rf::gguf::KeyValue> every_value_type() {
    std::vector<rf::gguf::KeyValue> kv;
    kv.push_back({"t.u8", scalar(ValueType::UINT8, 255, 0, 0)});
    kv.push_back({"t.i8", scalar(ValueType::INT8, 0, -128, 0)});
    kv.push_back({"t.u16", scalar(ValueType::UINT16, 65535, 0, 0)});
    kv.push_back({"t.i16", scalar(ValueType::INT16, 0, -32768, 0)});
    kv.push_back({"t.u32", Value::from_u32(4000000000u)});
    kv.push_back({"t.i32", Value::from_i32(-2000000000)});
    kv.push_back({"t.f32", Value::from_f32(1e-5f)});
    kv.push_back({"t.bool", Value::from_bool(true)});
    kv.push_back({"t.string", Value::from_string(std::string("h\xc3\xa9llo\0world", 12))});
    kv.push_back({"t.empty_string", Value::from_string("")});
    kv.push_back({"t.u64", Value::from_u64(~uint64_t(0))});
    kv.push_back({"t.i64", scalar(ValueType::INT64, 0, INT64_MIN, 0)});
    kv.push_back({"t.f64", scalar(ValueType::FLOAT64, 0, 0, 3.141592653589793)});
    kv.push_back({"t.strings", Value::from_strings({"a", "", "\xe2\x96\x81the"})});
    kv.push_back({"t.i32s", Value::from_i32s({1, -2, 2147483647})});
    kv.push_back({"t.f32s", Value::from_f32s({0.5f, -0.25f})});
    kv.push_back({"t.bools", array_of(ValueType::BOOL, {Value::from_bool(false),
                                                         Value::from_bool(true)})});
    kv.push_back({"t.u8s", array_of(ValueType::UINT8, {scalar(ValueType::UINT8, 7, 0, 0)})});
    kv.push_back({"t.i64s", array_of(ValueType::INT64, {scalar(ValueType::INT64, 0, -5, 0)})});
    kv.push_back({"t.f64s", array_of(ValueType::FLOAT64, {scalar(ValueType::FLOAT64, 0, 0, 2.5)})});
    kv.push_back({"t.empty_array", array_of(ValueType::UINT32, {})});
    kv.push_back({"t.nested", array_of(ValueType::ARRAY, {Value::from_i32s({1, 2}),
                                                          Value::from_strings({"x"}),
                                                          array_of(ValueType::ARRAY, {})})});
    return kv;
}

std::vector<uint16_t> f16_bits(const std::vector<float> &v) {
    std::vector<uint16_t> out;
    for (float x : v) out.push_back(rf::fp32_to_fp16(x));
    return out;
}

} // namespace

TEST_CASE("gguf: every value type round-trips in order", "[gguf][roundtrip]") {
    TempDir dir;
    const auto kvs = every_value_type();
    Writer w;
    for (const auto &kv : kvs) w.set(kv.key, kv.value);
    const std::string path = dir.file("values.gguf");
    w.write(path);

    const auto f = File::open(path);
    CHECK(f->version() == 3);
    CHECK(f->alignment() == 32);
    CHECK(f->tensors().empty());
    REQUIRE(f->metadata().size() == kvs.size());
    for (size_t k = 0; k < kvs.size(); ++k) {
        INFO(kvs[k].key);
        CHECK(f->metadata()[k].key == kvs[k].key);
        CHECK(same(f->metadata()[k].value, kvs[k].value));
    }
    CHECK(f->find("t.nested")->arr[1].arr[0].s == "x");
    CHECK(f->find("missing") == nullptr);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("gguf: tensors round-trip with alignment and zero padding", "[gguf][roundtrip]") {
    TempDir dir;
    const uint64_t alignment = GENERATE(uint64_t(32), uint64_t(64), uint64_t(256));
    const std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; // [4, 3]
    const std::vector<uint16_t> h = f16_bits({0.5f, -1, 2, 65504, 0, -0.0f, 3, 4, 5}); // [9]
    std::vector<float> q_src(64 * 2);
    for (size_t k = 0; k < q_src.size(); ++k) q_src[k] = float(k % 17) - 8.0f;

    Writer w;
    w.set("general.architecture", Value::from_string("test"));
    w.set_alignment(alignment);
    w.add_tensor("a", RF_TYPE_F32, {4, 3}, a.data());
    w.add_tensor("h", RF_TYPE_F16, {9}, [&](uint8_t *dst) {
        std::memcpy(dst, h.data(), h.size() * 2);
    });
    const size_t q_row = rf::row_size(RF_TYPE_Q8_0, 64);
    std::vector<uint8_t> q_bytes(q_row * 2);
    rf::quantize_row(RF_TYPE_Q8_0, q_src.data(), q_bytes.data(), 64);
    rf::quantize_row(RF_TYPE_Q8_0, q_src.data() + 64, q_bytes.data() + q_row, 64);
    w.add_tensor("blk.0.q", RF_TYPE_Q8_0, {64, 2, 1}, q_bytes.data());
    const std::string path = dir.file("tensors.gguf");
    w.write(path);

    const auto f = File::open(path);
    CHECK(f->alignment() == alignment);
    CHECK(f->get_int("general.alignment", 32) == int64_t(alignment));
    CHECK(f->data_offset() % alignment == 0);
    CHECK(f->file_size() % alignment == 0);
    REQUIRE(f->tensors().size() == 3);
    const auto *ta = f->find_tensor("a");
    const auto *th = f->find_tensor("h");
    const auto *tq = f->find_tensor("blk.0.q");
    REQUIRE((ta && th && tq));
    CHECK(ta->n_dims == 2);
    CHECK(ta->ne[0] == 4);
    CHECK(ta->ne[1] == 3);
    CHECK(ta->ne[2] == 1);
    CHECK(ta->nbytes == 48);
    CHECK(th->nbytes == 18);
    CHECK(tq->n_dims == 3);
    CHECK(tq->nbytes == q_bytes.size());
    for (const auto &t : f->tensors()) CHECK(t.offset % alignment == 0);
    CHECK(std::memcmp(f->tensor_data(*ta), a.data(), 48) == 0);
    CHECK(std::memcmp(f->tensor_data(*th), h.data(), 18) == 0);
    CHECK(std::memcmp(f->tensor_data(*tq), q_bytes.data(), q_bytes.size()) == 0);

    // Everything between the end of one tensor and the start of the next is zero.
    const uint8_t *base = f->mapped_base();
    for (uint64_t p = f->data_offset() + ta->nbytes; p < f->data_offset() + th->offset; ++p)
        REQUIRE(base[p] == 0);
    for (uint64_t p = f->data_offset() + tq->offset + tq->nbytes; p < f->file_size(); ++p)
        REQUIRE(base[p] == 0);
}

TEST_CASE("gguf: typed getters check types and name the key", "[gguf][getters]") {
    TempDir dir;
    Writer w;
    w.set("s", Value::from_string("text"));
    w.set("n", Value::from_u32(42));
    w.set("neg", Value::from_i32(-3));
    w.set("x", Value::from_f32(0.25f));
    w.set("b", Value::from_bool(true));
    w.set("big", Value::from_u64(~uint64_t(0)));
    w.set("n", Value::from_u32(43)); // replaces, keeps position
    const std::string path = dir.file("getters.gguf");
    w.write(path);
    const auto f = File::open(path);

    REQUIRE(f->metadata().size() == 6);
    CHECK(f->metadata()[1].key == "n");
    CHECK(f->get_string("s") == "text");
    CHECK(f->get_string("nope", "dflt") == "dflt");
    CHECK(f->get_int("n", 0) == 43);
    CHECK(f->get_int("neg", 0) == -3);
    CHECK(f->get_int("nope", 9) == 9);
    CHECK(f->get_float("x", 0) == 0.25);
    CHECK(f->get_float("n", 0) == 43.0);
    CHECK(f->get_bool("b", false));
    CHECK(f->get_bool("nope", true));

    CHECK_THROWS_WITH(f->get_string("n"), Contains("'n'") && Contains("uint32"));
    CHECK_THROWS_WITH(f->get_int("s", 0), Contains("'s'") && Contains("string"));
    CHECK_THROWS_WITH(f->get_int("x", 0), Contains("'x'"));
    CHECK_THROWS_WITH(f->get_int("big", 0), Contains("'big'"));
    CHECK_THROWS_WITH(f->get_float("s", 0), Contains("'s'"));
    CHECK_THROWS_WITH(f->get_bool("n", false), Contains("'n'") && Contains("bool"));
    CHECK_THROWS_AS(f->get_bool("n", false), rf::Error);
}

TEST_CASE("gguf: Value rendering elides long arrays", "[gguf][value]") {
    CHECK(Value::from_i32s({1, 2, 3}).to_string() == "[1, 2, 3]");
    CHECK(Value::from_i32s({1, 2, 3, 4}).to_string(2) == "[1, 2, ...] (4 items)");
    CHECK(Value::from_string("a\"b\n").to_string() == "\"a\\\"b\\n\"");
    CHECK(Value::from_f32(1e-5f).to_string() == "1e-05");
    CHECK(Value::from_bool(false).to_string() == "false");
    CHECK(Value::from_u64(~uint64_t(0)).to_string() == "18446744073709551615");
    CHECK_THROWS_AS(Value::from_string("x").as_int(), rf::Error);
    CHECK_THROWS_AS(Value::from_i32(1).as_string(), rf::Error);
    CHECK(Value::from_i32(-7).as_float() == -7.0);
}

TEST_CASE("gguf: writer rejects invalid tensors and settings", "[gguf][writer]") {
    Writer w;
    const float data[64] = {};
    CHECK_THROWS_AS(w.add_tensor("t", 4, {32}, data), rf::Error); // unknown type id
    CHECK_THROWS_WITH(w.add_tensor("t", RF_TYPE_Q8_0, {16}, data), Contains("block size"));
    CHECK_THROWS_AS(w.add_tensor("t", RF_TYPE_F32, {4, 0}, data), rf::Error);
    CHECK_THROWS_AS(w.add_tensor("t", RF_TYPE_F32, {}, data), rf::Error);
    CHECK_THROWS_AS(w.add_tensor("t", RF_TYPE_F32, {1, 1, 1, 1, 1}, data), rf::Error);
    w.add_tensor("t", RF_TYPE_F32, {4}, data);
    CHECK_THROWS_WITH(w.add_tensor("t", RF_TYPE_F32, {4}, data), Contains("duplicate"));
    CHECK_THROWS_AS(w.set_alignment(0), rf::Error);
    CHECK_THROWS_AS(w.set_alignment(48), rf::Error);
    CHECK_THROWS_AS(w.set("general.alignment", Value::from_u32(3)), rf::Error);
    Value bad = Value::from_i32s({1});
    bad.arr[0] = Value::from_string("mixed");
    w.set("bad", bad);
    TempDir dir;
    CHECK_THROWS_WITH(w.write(dir.file("bad.gguf")), Contains("'bad'"));
    CHECK_FALSE(std::filesystem::exists(dir.file("bad.gguf")));
    CHECK_FALSE(std::filesystem::exists(dir.file("bad.gguf.tmp")));
}

TEST_CASE("gguf: a failed write leaves the destination untouched", "[gguf][writer]") {
    TempDir dir;
    const std::string path = dir.file("model.gguf");
    write_file(path, {'o', 'l', 'd'});

    SECTION("filler throws") {
        Writer w;
        w.add_tensor("t", RF_TYPE_F32, {8}, [](uint8_t *) { throw rf::Error("filler failed"); });
        CHECK_THROWS_WITH(w.write(path), Contains("filler failed"));
    }
    SECTION("directory does not exist") {
        Writer w;
        w.set("k", Value::from_u32(1));
        CHECK_THROWS_AS(w.write(dir.file("no/such/dir.gguf")), rf::Error);
    }
    SECTION("disk full (simulated with RLIMIT_FSIZE)") {
        // write() fails with EFBIG past the limit instead of killing us with SIGXFSZ.
        auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
        rlimit old_limit{};
        getrlimit(RLIMIT_FSIZE, &old_limit);
        rlimit small = old_limit;
        small.rlim_cur = 64 * 1024;
        REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
        Writer w;
        w.add_tensor("big", RF_TYPE_F32, {1024, 1024}, [](uint8_t *dst) {
            std::memset(dst, 0x3f, 4 * 1024 * 1024);
        });
        std::string err;
        try {
            w.write(path);
        } catch (const rf::Error &e) {
            err = e.what();
        }
        setrlimit(RLIMIT_FSIZE, &old_limit);
        std::signal(SIGXFSZ, old_handler);
        CHECK_THAT(err, Contains("cannot write") && Contains(".tmp"));
    }
    CHECK(read_file(path) == Bytes{'o', 'l', 'd'});
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("gguf: overwriting an existing file replaces it", "[gguf][writer]") {
    TempDir dir;
    const std::string path = dir.file("model.gguf");
    write_file(path, {'o', 'l', 'd'});
    Writer w;
    w.set("k", Value::from_u32(5));
    w.write(path);
    CHECK(File::open(path)->get_int("k", 0) == 5);
}
