// libFuzzer target: a named data map (.ptd). Every tensor's info and bytes are read; then a
// program built here around the map's own keys (each constant aliased, then cloned into planned
// memory) is loaded with the map and executed, so the runtime's external-data path sees the
// map as an exported program would.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

namespace fb = etrt::fb;
constexpr size_t kMaxKeys = 8;

flatbuffers::Offset<fb::Value> tensor_value(flatbuffers::FlatBufferBuilder& b, etrt::ScalarType dtype,
                                            etrt::Span<const int64_t> sizes, etrt::Span<const uint8_t> dim_order,
                                            fb::StorageKind storage, uint64_t mem_offset, const std::string* key) {
  auto s = b.CreateVector(sizes.data(), sizes.size());
  auto order = dim_order.size() ? b.CreateVector(dim_order.data(), dim_order.size()) : 0;
  auto k = key ? b.CreateString(*key) : 0;
  auto t = fb::CreateTensor(b, static_cast<fb::ScalarType>(dtype), s, order, storage, 0, mem_offset, k);
  return fb::CreateValue(b, fb::ValueUnion::Tensor, t.Union());
}

flatbuffers::Offset<fb::Instruction> call(flatbuffers::FlatBufferBuilder& b, uint32_t op, std::vector<int32_t> args) {
  auto k = fb::CreateKernelCall(b, op, b.CreateVector(args));
  return fb::CreateInstruction(b, fb::InstructionUnion::KernelCall, k.Union());
}

// forward() returns clone(alias(c)) for every key c the map holds (up to kMaxKeys); with
// `fixed`, each constant is declared Float [2, 3] instead, which the map must refuse unless it
// agrees.
flatbuffers::Offset<fb::ExecutionPlan> plan(flatbuffers::FlatBufferBuilder& b, const etrt::FlatTensorDataMap& map,
                                            const char* name, bool fixed) {
  std::vector<flatbuffers::Offset<fb::Value>> values;
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions;
  std::vector<int32_t> outputs;
  uint64_t arena = 0;
  values.push_back(fb::CreateValue(b, fb::ValueUnion::Null, fb::CreateNull(b).Union()));
  const int64_t fixed_sizes[] = {2, 3};
  for (size_t i = 0; i < map.num_keys() && i < kMaxKeys; ++i) {
    std::string key(map.key(i));
    auto info = map.tensor_info(key);
    if (!info.ok()) continue;
    etrt::ScalarType dtype = fixed ? etrt::ScalarType::Float : info->dtype;
    etrt::Span<const int64_t> sizes = fixed ? etrt::Span<const int64_t>(fixed_sizes, 2) : info->sizes;
    etrt::Span<const uint8_t> order = fixed ? etrt::Span<const uint8_t>() : info->dim_order;
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    if (static_cast<uint64_t>(numel) > etrt_fuzz::kExecuteElements) continue;
    const int32_t base = static_cast<int32_t>(values.size());
    values.push_back(tensor_value(b, dtype, sizes, order, fb::StorageKind::External, 0, &key));
    values.push_back(tensor_value(b, dtype, sizes, order, fb::StorageKind::View, 0, nullptr));
    values.push_back(tensor_value(b, dtype, sizes, {}, fb::StorageKind::Planned, arena, nullptr));
    arena += (static_cast<uint64_t>(numel) * etrt::element_size(dtype) + 63) / 64 * 64;
    instructions.push_back(call(b, 0, {base, base + 1}));
    instructions.push_back(call(b, 1, {base + 1, 0, base + 2}));
    outputs.push_back(base + 2);
  }
  std::vector<flatbuffers::Offset<fb::Operator>> ops = {fb::CreateOperatorDirect(b, "aten::alias"),
                                                       fb::CreateOperatorDirect(b, "aten::clone")};
  return fb::CreateExecutionPlan(b, b.CreateString(name), b.CreateVector(values), b.CreateVector<int32_t>({}),
                                 b.CreateVector(outputs), b.CreateVector(ops), b.CreateVector(instructions), 0,
                                 arena);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etrt_fuzz::AlignedCopy copy(data, size);
  etrt::BufferDataLoader loader(copy.bytes(), copy.size());
  auto map = etrt::FlatTensorDataMap::load(&loader);
  etrt_fuzz::report("load", map.ok() ? etrt::Error() : map.error());
  if (!map.ok()) return 0;
  uint8_t sum = 0;
  for (size_t i = 0; i < map->num_keys(); ++i) {
    auto info = map->tensor_info(map->key(i));
    auto bytes = map->data(map->key(i));
    if (!info.ok() || !bytes.ok()) continue;
    for (uint8_t v : *bytes) sum ^= v;
  }
  asm volatile("" : : "r"(sum));

  flatbuffers::FlatBufferBuilder b;
  auto plans = b.CreateVector(std::vector<flatbuffers::Offset<fb::ExecutionPlan>>{
      plan(b, *map, "forward", false), plan(b, *map, "fixed", true)});
  b.Finish(fb::CreateProgram(b, 1, plans), fb::ProgramIdentifier());
  etrt_fuzz::AlignedCopy program_bytes(b.GetBufferPointer(), b.GetSize());
  etrt::BufferDataLoader program_loader(program_bytes.bytes(), program_bytes.size());
  auto program = etrt::Program::load(&program_loader);
  etrt_fuzz::report("load program", program.ok() ? etrt::Error() : program.error());
  if (program.ok()) etrt_fuzz::run_program(*program, program_bytes.bytes(), &*map);
  return 0;
}
