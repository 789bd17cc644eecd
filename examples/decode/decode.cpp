// decode: greedy generation with a decoder-only language model exported by etrt.
//
//   decode PROGRAM [-n N] [--threads T] [--runs R] [--stats] TOKEN...
//
// The program takes (tokens int64 [1, T], positions int64 [T]) and returns logits float
// [1, T, vocab], with T dynamic and the KV cache kept in the method's state (as
// etrt.export makes of transformers' static-cache decoders). The prompt TOKENs run in one
// call (prefill); each of the N new tokens is the argmax of the last logits and costs one
// call of T = 1 (decode). Prints the new token ids on one line; --stats adds the prefill and
// decode speed on stderr. --runs R generates R times, resetting the state in between.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "etrt/runtime/runtime.h"
#include "etrt/runtime/tensor_ptr.h"

namespace {

struct Options {
  std::string program;
  long new_tokens = 16;
  long runs = 1;
  int threads = 0;
  bool stats = false;
  std::vector<int64_t> prompt;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "decode: error: %s\n", message.c_str());
  return 1;
}

int fail(const etrt::Error& e) { return fail(e.to_string()); }

bool parse_long(const char* text, long lo, long hi, long* out) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// One call: tokens [1, T] and their positions [T] in, the argmax of the last logits out.
etrt::Result<int64_t> step(etrt::Method& method, const std::vector<int64_t>& tokens, int64_t first_position) {
  const int64_t t = static_cast<int64_t>(tokens.size());
  std::vector<int64_t> ids = tokens, positions(tokens.size());
  for (int64_t i = 0; i < t; ++i) positions[static_cast<size_t>(i)] = first_position + i;
  ETRT_ASSIGN_OR_RETURN(etrt::Tensor ids_t, etrt::from_blob(ids.data(), etrt::ScalarType::Long, {1, t}));
  ETRT_ASSIGN_OR_RETURN(etrt::Tensor pos_t, etrt::from_blob(positions.data(), etrt::ScalarType::Long, {t}));
  ETRT_RETURN_IF_ERROR(method.set_input(0, ids_t));
  ETRT_RETURN_IF_ERROR(method.set_input(1, pos_t));
  ETRT_RETURN_IF_ERROR(method.execute());
  const etrt::Value& out = method.output(0);
  if (!out.is_tensor() || out.to_tensor().dtype() != etrt::ScalarType::Float || out.to_tensor().dim() != 3 ||
      out.to_tensor().size(1) != t) {
    return etrt::Error(etrt::ErrorCode::InvalidArgument, "output 0 is not float logits [1, T, vocab]");
  }
  const etrt::Tensor& logits = out.to_tensor();
  const int64_t vocab = logits.size(2);
  const float* last = logits.data_as<const float>() + (t - 1) * logits.stride(1);
  int64_t best = 0;
  for (int64_t v = 1; v < vocab; ++v) {
    if (last[v * logits.stride(2)] > last[best * logits.stride(2)]) best = v;
  }
  return best;
}

int run(const Options& opt) {
  if (opt.threads > 0) {
    etrt::Error err = etrt::set_parallel_num_threads(opt.threads);
    if (!err.ok()) return fail(err);
  }
  etrt::Module module(opt.program);
  auto method_or = module.method("forward");
  if (!method_or.ok()) return fail(method_or.error());
  etrt::Method& method = **method_or;
  if (method.num_inputs() != 2 || method.num_outputs() != 1) {
    return fail("'" + opt.program + "' does not take (tokens, positions) and return logits");
  }
  auto tokens_info = method.input_tensor_info(0);
  if (!tokens_info.ok()) return fail(tokens_info.error());
  if (tokens_info->dtype != etrt::ScalarType::Long || tokens_info->sizes.size() != 2) {
    return fail("input 0 of '" + opt.program + "' is not int64 tokens [1, T]");
  }
  const int64_t max_len = tokens_info->max_sizes[1];
  const int64_t total = static_cast<int64_t>(opt.prompt.size()) + opt.new_tokens;
  if (total > max_len) {
    return fail("the prompt (" + std::to_string(opt.prompt.size()) + " tokens) and " +
                std::to_string(opt.new_tokens) + " new tokens exceed the program's longest sequence, " +
                std::to_string(max_len));
  }

  using Clock = std::chrono::steady_clock;
  std::vector<double> prefill_us, decode_us;
  std::vector<int64_t> generated;
  for (long r = 0; r < opt.runs; ++r) {
    if (r > 0) {
      etrt::Error err = method.reset_state();  // a new sequence: empty caches
      if (!err.ok()) return fail(err);
    }
    generated.clear();
    auto start = Clock::now();
    auto next = step(method, opt.prompt, 0);
    if (!next.ok()) return fail(next.error());
    auto prefilled = Clock::now();
    int64_t position = static_cast<int64_t>(opt.prompt.size());
    for (long i = 0; i < opt.new_tokens; ++i) {
      generated.push_back(*next);
      if (i + 1 == opt.new_tokens) break;
      next = step(method, {*next}, position++);
      if (!next.ok()) return fail(next.error());
    }
    auto done = Clock::now();
    prefill_us.push_back(std::chrono::duration<double, std::micro>(prefilled - start).count());
    decode_us.push_back(std::chrono::duration<double, std::micro>(done - prefilled).count());
  }
  for (size_t i = 0; i < generated.size(); ++i) std::printf("%s%lld", i ? " " : "", static_cast<long long>(generated[i]));
  std::printf("\n");
  if (opt.stats) {
    std::sort(prefill_us.begin(), prefill_us.end());
    std::sort(decode_us.begin(), decode_us.end());
    const double p = prefill_us[prefill_us.size() / 2], d = decode_us[decode_us.size() / 2];
    const long decode_steps = opt.new_tokens > 1 ? opt.new_tokens - 1 : 0;
    std::fprintf(stderr, "prefill: %zu tokens in %.1f us (%.0f tokens/s); decode: %ld tokens in %.1f us (%.0f tokens/s)\n",
                 opt.prompt.size(), p, 1e6 * static_cast<double>(opt.prompt.size()) / p, decode_steps, d,
                 d > 0 ? 1e6 * static_cast<double>(decode_steps) / d : 0.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  const char* usage = "usage: decode PROGRAM [-n N] [--threads T] [--runs R] [--stats] TOKEN...";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "-h" || arg == "--help") {
      std::printf("%s\n", usage);
      return 0;
    } else if (arg == "-n") {
      if (!has_value || !parse_long(argv[++i], 1, 1 << 20, &opt.new_tokens)) return fail("-n needs a positive count");
    } else if (arg == "--runs") {
      if (!has_value || !parse_long(argv[++i], 1, 1 << 20, &opt.runs)) return fail("--runs needs a positive count");
    } else if (arg == "--threads") {
      long t = 0;
      if (!has_value || !parse_long(argv[++i], 1, 1024, &t)) return fail("--threads needs a positive count");
      opt.threads = static_cast<int>(t);
    } else if (arg == "--stats") {
      opt.stats = true;
    } else if (opt.program.empty()) {
      opt.program = arg;
    } else {
      long token = 0;
      if (!parse_long(arg.c_str(), 0, 1L << 40, &token)) return fail("token '" + arg + "' is not a token id");
      opt.prompt.push_back(token);
    }
  }
  if (opt.program.empty() || opt.prompt.empty()) return fail(std::string("a program and a prompt are needed; ") + usage);
  return run(opt);
}
