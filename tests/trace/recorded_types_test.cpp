// The recorder's fields as types (recorded.hpp): the writers produce the documented layout key
// for key, the readers give back what was written, and a bad field is named in the error.
#include <gtest/gtest.h>

#include "nimble/trace/io.hpp"
#include "nimble/trace/recorded.hpp"

namespace nimble::trace {
namespace {

Task task_with(const std::string& fields) {
  Task t;
  t.kind = "kernel";
  t.extra = json::parse("{" + fields + "}");
  return t;
}

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const RecordedFieldError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RecordedTypes, KindNamesRoundTripAndUnknownKindsAreOther) {
  for (TaskKind k : {TaskKind::Kernel, TaskKind::Memcpy, TaskKind::Memset, TaskKind::Sync, TaskKind::HostFunc,
                     TaskKind::Graph, TaskKind::GraphLaunch, TaskKind::EventRecord, TaskKind::EventWait, TaskKind::StreamOp}) {
    EXPECT_EQ(kind_of(kind_name(k)), k) << kind_name(k);
  }
  EXPECT_STREQ(kind_name(TaskKind::HostFunc), "host_func");
  EXPECT_STREQ(kind_name(TaskKind::StreamOp), "stream_op");
  EXPECT_EQ(kind_of("Kernel"), TaskKind::Other);
  EXPECT_EQ(kind_of("fft"), TaskKind::Other);
}

TEST(RecordedTypes, HexTextIsParsedStrictly) {
  EXPECT_EQ(parse_hex_address("0x7f00"), 0x7f00u);
  EXPECT_EQ(parse_hex_address("0XFFFFFFFFFFFFFFFF"), ~std::uint64_t{0});
  EXPECT_FALSE(parse_hex_address("0x"));
  EXPECT_FALSE(parse_hex_address("4096"));
  EXPECT_FALSE(parse_hex_address("0x1ffffffffffffffff"));  // 17 digits: more than 64 bits
  EXPECT_FALSE(parse_hex_address("0x12g"));
  EXPECT_EQ(parse_hex_bytes("00ff1A"), (std::vector<std::uint8_t>{0x00, 0xff, 0x1a}));
  EXPECT_EQ(parse_hex_bytes(""), std::vector<std::uint8_t>{});
  EXPECT_FALSE(parse_hex_bytes("abc"));
  EXPECT_FALSE(parse_hex_bytes("zz"));
  const std::uint8_t bytes[] = {0xde, 0xad, 0x01};
  EXPECT_EQ(to_hex(bytes, 3), "dead01");
  EXPECT_EQ(hex_address(0xabc), "0xabc");
}

TEST(RecordedTypes, KernelFieldsAreWrittenInTheDocumentedOrderAndReadBack) {
  KernelRecord k;
  k.name = "void f(int)";
  k.mangled = "_Z1fi";
  k.function = 0x55aa;
  k.launch.grid = {20, 1, 1};
  k.launch.block = {128, 1, 1};
  k.launch.shared_mem_bytes = 81920;
  k.args.bytes = {0x2a, 0, 0, 0, 0, 0, 0x7f, 0};
  k.args.params = {{0, 4}, {4, 4}};
  k.args.pointers = {{0, 3, 16}};
  json fields = json::object();
  add_fields(fields, k);
  EXPECT_EQ(fields.dump(),
            R"j({"name":"void f(int)","mangled":"_Z1fi","function":"0x55aa","handle":"CUfunction",)j"
            R"j("launch":{"grid":[20,1,1],"block":[128,1,1],"shared_mem_bytes":81920},)j"
            R"j("args":{"bytes":"2a00000000007f00","params":[{"offset":0,"size":4},{"offset":4,"size":4}],)j"
            R"j("pointers":[{"offset":0,"alloc":3,"alloc_offset":16}]}})j");
  Task t;
  t.extra = fields;
  const KernelRecord back = read_kernel(t);
  EXPECT_EQ(back.name, k.name);
  EXPECT_EQ(back.function, 0x55aau);
  EXPECT_FALSE(back.is_cukernel);
  EXPECT_EQ(back.launch.grid, k.launch.grid);
  EXPECT_EQ(back.launch.shared_mem_bytes, 81920u);
  EXPECT_EQ(back.args.bytes, k.args.bytes);
  ASSERT_EQ(back.args.params.size(), 2u);
  EXPECT_EQ(back.args.params[1].offset, 4u);
  ASSERT_EQ(back.args.pointers.size(), 1u);
  EXPECT_EQ(back.args.pointers[0].alloc, 3);
  EXPECT_EQ(back.args.pointers[0].alloc_offset, 16u);
}

// The recorder keeps a kernel's fields typed (Task::kernel) until the trace is written: the file
// must be the one it wrote when they were JSON in `extra`, and readers must see them.
TEST(RecordedTypes, TypedKernelFieldsAreWrittenWhereTheRecorderPutThemAndRead) {
  KernelRecord k;
  k.name = "void g(float*)";
  k.function = 0x77;
  k.launch.grid = {4, 1, 1};
  k.args.bytes = {1, 2, 3, 4};
  k.args.params = {{0, 4}};
  Trace as_json, typed;
  for (Trace* t : {&as_json, &typed}) {
    Task task;
    task.kind = "kernel";
    task.stream = 0;
    task.extra["thread"] = 12;
    if (t == &as_json) add_fields(task.extra, k);
    task.extra["api"] = "cuLaunchKernel";
    task.extra["dep_reasons"] = json::object();
    if (t == &typed) task.kernel = std::make_shared<const KernelRecord>(k);
    t->tasks.push_back(task);
  }
  const std::string text = dump_trace(as_json);
  EXPECT_EQ(dump_trace(typed), text);
  EXPECT_LT(text.find("\"thread\""), text.find("\"name\""));
  EXPECT_LT(text.find("\"args\""), text.find("\"api\""));
  EXPECT_EQ(kernel_name(typed.tasks[0]), "void g(float*)");
  EXPECT_EQ(read_kernel(typed.tasks[0]).args.bytes, k.args.bytes);
  EXPECT_EQ(kernel_name(as_json.tasks[0]), "void g(float*)");
  // Without "thread" (a task built by hand) they come first among the other fields.
  typed.tasks[0].extra.erase("thread");
  const std::string without_thread = dump_trace(typed);
  EXPECT_LT(without_thread.find("\"name\""), without_thread.find("\"api\""));
  // A field in `extra` that the typed ones also have is written once, the typed one.
  typed.tasks[0].extra["name"] = "stale";
  EXPECT_EQ(dump_trace(typed).find("stale"), std::string::npos);
  EXPECT_EQ(kernel_name(task_with(R"("name": null)")), std::nullopt);
}

TEST(RecordedTypes, DecodedAttributesFollowTheOrderTheProgramPassedThem) {
  LaunchRecord l;
  l.priority = -2;
  l.cluster = Dim3{2, 1, 1};
  l.attributes = {{launch_attribute::kPriority, "priority", {0xfe, 0xff, 0xff, 0xff}},
                  {launch_attribute::kClusterDimension, "cluster_dimension", {2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}},
                  {99, "unknown", {1}}};
  const json launch = to_json(l);
  EXPECT_EQ(launch.dump(),
            R"j({"grid":[1,1,1],"block":[1,1,1],"shared_mem_bytes":0,"priority":-2,"cluster":[2,1,1],)j"
            R"j("attributes":[{"id":8,"name":"priority","value":"feffffff"},)j"
            R"j({"id":4,"name":"cluster_dimension","value":"020000000100000001000000"},{"id":99,"name":"unknown","value":"01"}]})j");
  const LaunchRecord back = launch_from_json(launch);
  EXPECT_EQ(back.priority, -2);
  EXPECT_EQ(back.cluster, (Dim3{2, 1, 1}));
  ASSERT_EQ(back.attributes.size(), 3u);
  EXPECT_EQ(back.attributes[2].id, 99);
  EXPECT_EQ(back.attributes[2].value, std::vector<std::uint8_t>{1});
  // A cooperative launch without attributes (cuLaunchCooperativeKernel) says so after the size.
  LaunchRecord coop;
  coop.cooperative = true;
  EXPECT_EQ(to_json(coop).dump(), R"j({"grid":[1,1,1],"block":[1,1,1],"shared_mem_bytes":0,"cooperative":true})j");
}

TEST(RecordedTypes, UnreadableArgumentsAreWrittenAsUnknown) {
  ArgsRecord a;
  a.known = false;
  EXPECT_EQ(to_json(a).dump(), R"j({"known":false})j");
  EXPECT_FALSE(args_from_json(to_json(a)).known);
  ArgsRecord none;  // no pointers: the field is left out
  EXPECT_EQ(to_json(none).dump(), R"j({"bytes":"","params":[]})j");
}

TEST(RecordedTypes, BytesTheProgramPassedWhenFewerRoundTrip) {
  ArgsRecord a;  // NCCL's way: a 4-byte argument of which the program passed 2
  a.bytes = {7, 9, 0, 0};
  a.params = {{0, 4}};
  a.passed_bytes = 2;
  EXPECT_EQ(to_json(a).dump(), R"j({"bytes":"07090000","params":[{"offset":0,"size":4}],"passed_bytes":2})j");
  EXPECT_EQ(args_from_json(to_json(a)).passed_bytes, std::optional<std::uint64_t>(2));
  EXPECT_FALSE(args_from_json(json::parse(R"j({"bytes": "00"})j")).passed_bytes);
  EXPECT_EQ(error_of([] { args_from_json(json::parse(R"j({"bytes": "0000", "passed_bytes": 3})j")); }),
            "field \"args.passed_bytes\": must be at most 2, got 3");
}

TEST(RecordedTypes, CopiesMemsetsAndAccessesRoundTrip) {
  CopyRecord c{"DtoH", 0x7f00, 0x5500, 4096, CopyShape{64, 64, std::nullopt, 128, 64}, 0, {}};
  EXPECT_EQ(to_json(c).dump(),
            R"j({"direction":"DtoH","bytes":4096,"src":"0x7f00","dst":"0x5500",)j"
            R"j("shape":{"width_bytes":64,"height":64,"src_pitch":128,"dst_pitch":64}})j");
  const CopyRecord back = copy_from_json(to_json(c));
  EXPECT_EQ(back.direction, "DtoH");
  EXPECT_EQ(back.dst, 0x5500u);
  ASSERT_TRUE(back.shape);
  EXPECT_FALSE(back.shape->depth);
  EXPECT_EQ(back.shape->src_pitch, 128u);

  CopyRecord batch{"batch", 0, 0, 12, std::nullopt, 3, {{"HtoD", 0x10, 0x20, 12, std::nullopt, 0, {}}}};
  EXPECT_EQ(to_json(batch).dump(),
            R"j({"direction":"batch","bytes":12,"count":3,"copies":[{"direction":"HtoD","bytes":12,"src":"0x10","dst":"0x20"}]})j");
  const CopyRecord batch_back = copy_from_json(to_json(batch));
  EXPECT_EQ(batch_back.count, 3u);
  ASSERT_EQ(batch_back.copies.size(), 1u);
  EXPECT_EQ(batch_back.copies[0].src, 0x10u);

  const MemsetRecord m{0x7f00, 1024, 4, 7, 512, 64, 4};
  Task t;
  t.extra = {{"memset", to_json(m)}};
  EXPECT_EQ(t.extra["memset"].dump(),
            R"j({"dst":"0x7f00","bytes":1024,"element_size":4,"value":7,"pitch":512,"width":64,"height":4})j");
  const MemsetRecord mb = read_memset(t);
  EXPECT_EQ(mb.pitch, 512u);
  EXPECT_EQ(mb.width, 64u);
  t.extra = {{"memset", to_json(MemsetRecord{0x7f00, 1024, 4, 0, 0, 0, 1})}};
  EXPECT_EQ(read_memset(t).width, 256u);  // 1D: the elements of the whole range

  using Target = MemoryAccess::Target;
  const std::vector<MemoryAccess> mem = {{Target::Allocation, 3, 16, 64, AccessMode::Read},
                                         {Target::Address, -1, 0x5500, 8, AccessMode::Write},
                                         {Target::Everything, -1, 0, 0, AccessMode::ReadWrite}};
  t.extra = {{"mem", to_json(mem)}};
  EXPECT_EQ(t.extra["mem"].dump(),
            R"j([{"alloc":3,"offset":16,"size":64,"mode":"r"},{"addr":"0x5500","size":8,"mode":"w"},)j"
            R"j({"everything":true,"mode":"rw"}])j");
  const auto mem_back = read_mem(t);
  ASSERT_EQ(mem_back.size(), 3u);
  EXPECT_EQ(mem_back[0].alloc, 3);
  EXPECT_FALSE(mem_back[0].writes());
  EXPECT_EQ(mem_back[1].target, Target::Address);
  EXPECT_EQ(mem_back[1].offset, 0x5500u);
  EXPECT_EQ(mem_back[2].target, Target::Everything);
  // An entry naming no memory is read as all of it: a tool must not miss a conflict.
  t.extra = json::parse(R"j({"mem": [{"mode": "r"}]})j");
  EXPECT_EQ(read_mem(t).at(0).target, Target::Everything);
}

TEST(RecordedTypes, DependencyReasonsSplitIntoLabels) {
  Task t = task_with(R"j("dep_reasons": {"3": "stream; memory RAW alloc 0 +0x0..+0x40", "4": 7})j");
  const auto reasons = read_reasons(t, 3);
  ASSERT_TRUE(reasons);
  ASSERT_EQ(reasons->size(), 2u);
  EXPECT_EQ((*reasons)[0].label, "stream");
  EXPECT_FALSE((*reasons)[0].memory());
  EXPECT_EQ((*reasons)[1].label, "memory");
  EXPECT_EQ((*reasons)[1].text, "memory RAW alloc 0 +0x0..+0x40");
  EXPECT_EQ(join_reasons(*reasons), "stream; memory RAW alloc 0 +0x0..+0x40");
  EXPECT_FALSE(read_reasons(t, 4));  // not a string
  EXPECT_FALSE(read_reasons(t, 5));  // none given
}

TEST(RecordedTypes, AMissingOrMalformedFieldIsNamed) {
  EXPECT_EQ(error_of([] { read_kernel(task_with(R"j("launch": {}, "args": {})j")); }), "missing field \"function\"");
  EXPECT_EQ(error_of([] { read_kernel(task_with(R"j("function": "4096")j")); }),
            "field \"function\": \"4096\" is not a hex address");
  EXPECT_EQ(error_of([] { read_kernel(task_with(R"j("function": "0x1", "launch": {"grid": [1, 1, 1]}, "args": {})j")); }),
            "missing field \"launch.block\"");
  EXPECT_EQ(error_of([] { read_kernel(task_with(R"j("function": "0x1", "launch": {"grid": [1, 0, 1], "block": [1, 1, 1]})j")); }),
            "field \"launch.grid\": each size must be 1 to 2^32-1");
  EXPECT_EQ(error_of([] {
              read_kernel(task_with(R"j("function": "0x1", "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]},
                                       "args": {"bytes": "00zz"})j"));
            }),
            "field \"args.bytes\": \"zz\" at byte 1 is not hex");
  EXPECT_EQ(error_of([] { args_from_json(json::parse(R"j({"bytes": "0000", "params": [{"offset": 1, "size": 4}]})j")); }),
            "field \"args.params\": parameter at offset 1 of size 4 lies outside the 2 argument bytes");
  EXPECT_EQ(error_of([] { copy_from_json(json::parse(R"j({"direction": "HtoD", "bytes": 4, "src": "0x1"})j")); }),
            "missing field \"copy.dst\"");
  EXPECT_EQ(error_of([] {
              read_memset(task_with(R"j("memset": {"dst": "0x1", "value": 0, "element_size": 3, "bytes": 3})j"));
            }),
            "field \"memset.element_size\": must be 1, 2 or 4");
  EXPECT_EQ(error_of([] { read_library_key(task_with(R"j("library_key": "feed")j")); }),
            "field \"library_key\": \"feed\" is not a hex address");
}

}  // namespace
}  // namespace nimble::trace
