#include "twin/core/util.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace twin {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_interrupt_shields{0};
std::atomic<int> g_interrupt_count{0};
std::atomic<int> g_second_interrupt_base{-1};

void parallel_for(size_t n, int parallel, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  int threads = std::max(1, std::min<int>(parallel, static_cast<int>(n)));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
}

std::string ms_text(double ms) { return std::to_string(std::lround(ms)) + " ms"; }

std::string now_rfc3339() {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms.count()));
  return out;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return harness_error("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Result<void> write_file(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::trunc);
  f << content;
  f.flush();
  if (!f) return harness_error("cannot write " + path + ": " + std::strerror(errno));
  return {};
}

Result<void> write_file_mode(const std::string& path, const std::string& content, mode_t mode) {
  // Created with `mode` (and set again: an existing file keeps its old one), so a secret is
  // never readable by others for a moment.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return harness_error("cannot write " + path + ": " + std::strerror(errno));
  bool good = ::fchmod(fd, mode) == 0;
  for (size_t done = 0; good && done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    good = n > 0;
    if (good) done += static_cast<size_t>(n);
  }
  const int err = errno;
  if (::close(fd) != 0 || !good)
    return harness_error("cannot write " + path + ": " + std::strerror(good ? errno : err));
  return {};
}

uint64_t process_start_time(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string content;
  if (!f || !std::getline(f, content)) return 0;
  // comm (field 2) may hold spaces and parentheses: fields after it start at the last ')'.
  auto close = content.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(content.substr(close + 2));
  std::string field;
  // rest starts at field 3 (state); start time is field 22.
  for (int i = 3; i <= 22 && rest >> field; ++i)
    if (i == 22) return std::stoull(field);
  return 0;
}

TempDir::TempDir() : TempDir(std::string()) {}

TempDir::TempDir(const std::string& parent) {
  std::string tmpl = (parent.empty() ? std::string("/tmp") : parent) + "/twin-XXXXXX";
  if (::mkdtemp(tmpl.data())) path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path.empty()) std::filesystem::remove_all(path, ec);
}

Result<void> write_file_atomically(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  if (auto w = write_file(tmp, content); !w) return w;
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return harness_error("renaming " + tmp + ": " + std::strerror(errno));
  return {};
}

std::string printable(std::string_view text, bool keep_newlines) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&](const char* prefix, unsigned char c) {
    out += prefix;
    out += hex[c >> 4];
    out += hex[c & 15];
  };
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\t' || (c == '\n' && keep_newlines)) {
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      escape("\\x", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      // A UTF-8 sequence: its length from the lead byte, then its continuation bytes.
      size_t len = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      bool valid = len > 0 && i + len <= text.size();
      for (size_t k = 1; valid && k < len; ++k)
        valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      if (!valid) {
        escape("\\x", c);  // a lone byte: 0x9b alone is CSI to an 8-bit terminal
      } else if (c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
        escape("\\u00", static_cast<unsigned char>(text[i + 1]));  // C1 control, U+0080..U+009F
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len - 1;
      }
    }
  }
  return out;
}

std::string trim_end(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string kernel_release() {
  utsname u{};
  if (uname(&u) != 0) return "unknown";
  return u.release;
}

std::string json_text(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::map<std::string, std::string> components(
    const std::vector<std::string>& nodes,
    const std::vector<std::pair<std::string, std::string>>& edges) {
  std::map<std::string, std::string> parent;
  std::function<std::string(const std::string&)> root = [&](const std::string& n) {
    auto it = parent.find(n);
    if (it == parent.end() || it->second == n) return n;
    return it->second = root(it->second);
  };
  for (const auto& n : nodes) parent[n] = n;
  for (const auto& [a, b] : edges)
    if (parent.count(a) && parent.count(b)) parent[root(a)] = root(b);
  for (const auto& n : nodes) parent[n] = root(n);
  return parent;
}

}  // namespace twin
