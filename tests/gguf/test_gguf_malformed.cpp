// Malformed-file corpus: every case must raise rf::Error with a message that names the problem
// and a byte offset, never crash or read out of bounds (this suite also runs under ASan+UBSan).
#include <catch2/catch.hpp>

#include <random>

#include "gguf_test_util.h"
#include "rocmforge/abi.h"
#include "rocmforge/escape.h"

using namespace gguf_test;
using Catch::Matchers::Contains;

namespace {

// Expects the file to be rejected with a message containing `what` and a byte offset.
void expect_rejected(const TempDir &dir, const RawGguf &g, const std::string &what) {
    const std::string err = open_error(dir.file("bad.gguf"), g.bytes());
    INFO("expected an error about: " << what);
    CHECK_THAT(err, Contains(what) && Contains("byte offset"));
}

} // namespace

TEST_CASE("gguf: the base corpus file is valid", "[gguf][malformed]") {
    TempDir dir;
    const std::string path = dir.file("ok.gguf");
    write_file(path, RawGguf::valid().bytes());
    const auto f = rf::gguf::File::open(path);
    REQUIRE(f->tensors().size() == 2);
    REQUIRE(f->metadata().size() == 3);
    CHECK(f->get_int("test.count", 0) == 7);
    const float *b = reinterpret_cast<const float *>(f->tensor_data(*f->find_tensor("b")));
    CHECK(b[0] == 4.0f);
}

TEST_CASE("gguf: truncation at every byte offset is rejected", "[gguf][malformed]") {
    TempDir dir;
    const Bytes full = RawGguf::valid().bytes();
    for (size_t n = 0; n < full.size(); ++n) {
        const std::string err =
            open_error(dir.file("cut.gguf"), Bytes(full.begin(), full.begin() + long(n)));
        INFO("truncated to " << n << " of " << full.size() << " bytes");
        REQUIRE_THAT(err, Contains("byte offset"));
    }
    CHECK(open_error(dir.file("full.gguf"), full).empty());
}

TEST_CASE("gguf: bad header fields", "[gguf][malformed]") {
    TempDir dir;
    RawGguf g = RawGguf::valid();

    SECTION("magic") {
        g.magic[3] = 'G';
        expect_rejected(dir, g, "magic");
    }
    SECTION("version 1") {
        g.version = 1;
        expect_rejected(dir, g, "version 1 is not supported");
    }
    SECTION("version 99") {
        g.version = 99;
        expect_rejected(dir, g, "unknown GGUF version 99");
    }
    SECTION("big-endian version") {
        g.version = 0x03000000;
        expect_rejected(dir, g, "big-endian");
    }
    SECTION("version 2 is accepted") {
        g.version = 2;
        CHECK(open_error(dir.file("v2.gguf"), g.bytes()).empty());
    }
    SECTION("huge tensor count") {
        g.n_tensors = uint64_t(1) << 60;
        expect_rejected(dir, g, "tensor count");
    }
    SECTION("huge metadata count") {
        g.n_kv = ~uint64_t(0);
        expect_rejected(dir, g, "metadata count");
    }
    SECTION("tensor count one too many") {
        g.n_tensors = 3;
        CHECK_THAT(open_error(dir.file("bad.gguf"), g.bytes()), Contains("byte offset"));
    }
}

TEST_CASE("gguf: bad metadata", "[gguf][malformed]") {
    TempDir dir;
    RawGguf g = RawGguf::valid();

    SECTION("huge key length") {
        Bytes kv;
        put<uint64_t>(kv, uint64_t(1) << 62);
        kv.insert(kv.end(), {'a', 'b'});
        g.kvs.insert(g.kvs.begin(), kv);
        expect_rejected(dir, g, "metadata key length");
    }
    SECTION("huge string value length") {
        Bytes kv;
        put_str(kv, "test.s");
        put<uint32_t>(kv, uint32_t(ValueType::STRING));
        put<uint64_t>(kv, ~uint64_t(0));
        g.kvs.insert(g.kvs.begin(), kv);
        expect_rejected(dir, g, "runs past the end");
    }
    SECTION("huge array length") {
        Bytes kv;
        put_str(kv, "test.arr");
        put<uint32_t>(kv, uint32_t(ValueType::ARRAY));
        put<uint32_t>(kv, uint32_t(ValueType::UINT8));
        put<uint64_t>(kv, uint64_t(1) << 40);
        g.kvs.insert(g.kvs.begin(), kv);
        expect_rejected(dir, g, "array length");
    }
    SECTION("more array items than the metadata budget") {
        Bytes kv;
        put_str(kv, "test.bytes");
        put<uint32_t>(kv, uint32_t(ValueType::ARRAY));
        put<uint32_t>(kv, uint32_t(ValueType::UINT8));
        const uint64_t n = (uint64_t(1) << 24) + 1; // present in the file, but too many
        put<uint64_t>(kv, n);
        kv.resize(kv.size() + n, 0);
        g.kvs.insert(g.kvs.begin(), kv);
        expect_rejected(dir, g, "items in all");
    }
    SECTION("unknown value type") {
        Bytes kv;
        put_str(kv, "test.x");
        put<uint32_t>(kv, 13);
        put<uint32_t>(kv, 0);
        g.kvs.insert(g.kvs.begin(), kv);
        expect_rejected(dir, g, "unknown value type 13");
    }
    SECTION("unknown array element type") {
        Bytes kv;
        put_str(kv, "test.x");
        put<uint32_t>(kv, uint32_t(ValueType::ARRAY));
        put<uint32_t>(kv, 77);
        put<uint64_t>(kv, 1);
        put<uint32_t>(kv, 0);
        g.kvs.insert(g.kvs.begin(), kv);
        expect_rejected(dir, g, "unknown array element type 77");
    }
    SECTION("arrays nested too deep") {
        Bytes kv;
        put_str(kv, "test.deep");
        put<uint32_t>(kv, uint32_t(ValueType::ARRAY));
        for (int k = 0; k < 40; ++k) { // array of 1 array of 1 array ...
            put<uint32_t>(kv, uint32_t(ValueType::ARRAY));
            put<uint64_t>(kv, 1);
        }
        put<uint32_t>(kv, uint32_t(ValueType::UINT8));
        put<uint64_t>(kv, 0);
        g.kvs.insert(g.kvs.begin(), kv);
        expect_rejected(dir, g, "nested deeper");
    }
    SECTION("duplicate key") {
        g.kvs.push_back(kv_u32("test.count", 8));
        expect_rejected(dir, g, "duplicate metadata key 'test.count'");
    }
    SECTION("alignment zero") {
        g.kvs.push_back(kv_u32("general.alignment", 0));
        expect_rejected(dir, g, "general.alignment");
    }
    SECTION("alignment not a power of two") {
        g.kvs.push_back(kv_u32("general.alignment", 48));
        expect_rejected(dir, g, "not a nonzero power of two");
    }
    SECTION("alignment of the wrong type") {
        g.kvs.push_back(kv_string("general.alignment", "32"));
        expect_rejected(dir, g, "general.alignment has type string");
    }
}

TEST_CASE("gguf: bad tensor infos", "[gguf][malformed]") {
    TempDir dir;
    RawGguf g = RawGguf::valid();

    SECTION("unknown type id") {
        for (uint32_t bad : {4u, 33u, 1000u, 0xffffffffu}) {
            g.tensors[1].type = bad;
            expect_rejected(dir, g, "unknown type id " + std::to_string(bad));
        }
    }
    SECTION("i-quant row shorter than its block") {
        g.tensors[1].type = RF_TYPE_IQ2_XS;
        expect_rejected(dir, g, "not a multiple of the iq2_xs block size 256");
    }
    SECTION("offset out of bounds") {
        g.tensors[1].offset = 1 << 20;
        expect_rejected(dir, g, "runs past the end of the file");
    }
    SECTION("offset near 2^64 (overflowing end)") {
        g.tensors[1].offset = ~uint64_t(31);
        expect_rejected(dir, g, "runs past the end of the file");
    }
    SECTION("misaligned offset") {
        g.tensors[1].offset = 36;
        expect_rejected(dir, g, "not a multiple of the alignment");
    }
    SECTION("overlapping data") {
        g.tensors[1].offset = 0;
        expect_rejected(dir, g, "overlaps");
    }
    SECTION("duplicate names") {
        g.tensors[1].name = "a";
        expect_rejected(dir, g, "duplicate tensor name 'a'");
    }
    SECTION("five dimensions") {
        g.tensors[1].ne = {2, 2, 2, 1, 1};
        expect_rejected(dir, g, "5 dimensions");
    }
    SECTION("huge dimension count") {
        g.tensors[1].n_dims = 0x7fffffff;
        expect_rejected(dir, g, "dimensions");
    }
    SECTION("zero dimension") {
        g.tensors[1].ne = {8, 0};
        expect_rejected(dir, g, "dimension 1 is 0");
    }
    SECTION("negative dimension") {
        g.tensors[1].ne = {-8};
        expect_rejected(dir, g, "dimension 0 is -8");
    }
    SECTION("dimension product overflows int64") {
        g.tensors[1].ne = {int64_t(1) << 32, int64_t(1) << 32};
        expect_rejected(dir, g, "overflows");
    }
    SECTION("byte size overflows") {
        g.tensors[1].ne = {int64_t(1) << 62};
        expect_rejected(dir, g, "byte size overflows");
    }
    SECTION("row length not a multiple of the block size") {
        g.tensors[1].type = RF_TYPE_Q8_0;
        g.tensors[1].ne = {8};
        expect_rejected(dir, g, "not a multiple of the q8_0 block size 32");
    }
    SECTION("data section missing (truncated right after the tensor infos)") {
        const Bytes header = g.header();
        CHECK_THAT(open_error(dir.file("bad.gguf"), header), Contains("runs past the end"));
    }
}

TEST_CASE("gguf: random byte corruption never escapes as anything but rf::Error",
          "[gguf][malformed]") {
    TempDir dir;
    const Bytes base = RawGguf::valid().bytes();
    const size_t header_size = RawGguf::valid().header().size();
    std::mt19937 rng(1234);
    int rejected = 0;
    for (int iter = 0; iter < 1500; ++iter) {
        Bytes b = base;
        const int flips = 1 + int(rng() % 4);
        for (int k = 0; k < flips; ++k) b[rng() % header_size] = uint8_t(rng());
        // open_error lets any other exception escape, failing the test.
        if (!open_error(dir.file("fuzz.gguf"), b).empty()) ++rejected;
    }
    CHECK(rejected > 500); // most corruptions of the header must be detected
}

TEST_CASE("gguf: names from the file are escaped and the message is finished", "[gguf][malformed]") {
    TempDir dir;
    RawGguf g = RawGguf::valid();
    // A NUL would end the message where the CLI prints it; control bytes would reach the terminal.
    const std::string evil_name = std::string("blk.1.ffn_norm.weight\x01", 22) + std::string(1, '\0') + "\x1b[2J";

    SECTION("tensor name with control bytes and a NUL") {
        g.tensors[0].name = evil_name;
        g.tensors[0].type = 1000;
        const std::string err = open_error(dir.file("bad.gguf"), g.bytes());
        CHECK_THAT(err, Contains("tensor 'blk.1.ffn_norm.weight\\x01\\x00\\x1b[2J' has unknown type id 1000"));
        CHECK(err.find('\0') == std::string::npos);
        CHECK(std::strlen(err.c_str()) == err.size());
        for (unsigned char c : err) CHECK((c >= 0x20 && c < 0x7f));
    }
    SECTION("metadata key with a NUL") {
        Bytes kv;
        put_str(kv, std::string("test\0key", 8));
        put<uint32_t>(kv, 362);
        g.kvs.insert(g.kvs.begin(), kv);
        CHECK_THAT(open_error(dir.file("bad.gguf"), g.bytes()),
                   Contains("unknown value type 362 for key 'test\\x00key' (byte offset"));
    }
    SECTION("a very long name is cut, with its length") {
        g.tensors[0].name = std::string(5000, 'x');
        g.tensors[1].name = g.tensors[0].name;
        const std::string err = open_error(dir.file("bad.gguf"), g.bytes());
        CHECK_THAT(err, Contains("duplicate tensor name '" + std::string(64, 'x') + "'... (5000 bytes)"));
        CHECK(err.size() < 300);
    }
}

TEST_CASE("quote_name: printable ASCII kept, every other byte as \\xNN", "[gguf]") {
    CHECK(rf::quote_name("token_embd.weight") == "'token_embd.weight'");
    CHECK(rf::quote_name(std::string("a\0b", 3)) == "'a\\x00b'");
    CHECK(rf::quote_name("it's \\ \x7f \xc3\xa9") == "'it\\x27s \\x5c \\x7f \\xc3\\xa9'");
    CHECK(rf::quote_name("abcdef", 3) == "'abc'... (6 bytes)");
}
