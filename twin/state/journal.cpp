#include "twin/state/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "twin/core/util.hpp"
#include "twin/topology/names.hpp"

namespace twin::state {
namespace fs = std::filesystem;

std::string history_root() {
  const char* env = std::getenv("TWIN_HISTORY_DIR");
  return env && *env ? std::string(env) : std::string("/var/lib/twin/labs");
}

std::string history_dir(const std::string& lab) { return history_root() + "/" + lab; }

namespace {

Result<void> check_lab(const std::string& lab) {
  if (!topology::valid_lab_name(lab)) return usage_error("invalid lab name '" + lab + "'");
  return {};
}

// The seq of the journal's last complete line, 0 when there is none. Reads the tail only: a
// journal line is small, the file may not be.
uint64_t last_seq(int fd) {
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return 0;
  off_t from = std::max<off_t>(0, size - 65536);
  std::string buf(static_cast<size_t>(size - from), '\0');
  ssize_t n = ::pread(fd, buf.data(), buf.size(), from);
  if (n <= 0) return 0;
  buf.resize(static_cast<size_t>(n));
  while (!buf.empty() && buf.back() == '\n') buf.pop_back();
  auto nl = buf.rfind('\n');
  std::string line = nl == std::string::npos ? buf : buf.substr(nl + 1);
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_object() && j.contains("seq") && j["seq"].is_number_unsigned())
    return j["seq"].get<uint64_t>();
  return 0;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<nlohmann::json> journal_append(const std::string& lab, const std::string& kind,
                                      nlohmann::json fields, const ReportWriter& write_report) {
  if (auto r = check_lab(lab); !r) return r.error();
  const std::string dir = history_dir(lab);
  std::error_code ec;
  fs::create_directories(dir + "/reports", ec);
  if (ec) return env_error("cannot create " + dir + "/reports: " + ec.message());
  const std::string path = dir + "/journal.jsonl";
  Fd f;
  f.fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (f.fd < 0) return env_error("cannot open " + path + ": " + std::strerror(errno));
  // The lock orders sequence numbers between concurrent commands; released by close().
  while (::flock(f.fd, LOCK_EX) != 0)
    if (errno != EINTR) return env_error("cannot lock " + path + ": " + std::strerror(errno));
  nlohmann::json ev = nlohmann::json::object();
  uint64_t seq = last_seq(f.fd) + 1;
  ev["seq"] = seq;
  ev["time"] = now_rfc3339();
  ev["lab"] = lab;
  ev["kind"] = kind;
  if (fields.is_object())
    for (auto& [k, v] : fields.items()) ev[k] = std::move(v);
  if (write_report) {
    std::string rel = "reports/" + std::to_string(seq) + "-" + kind + ".json";
    std::ofstream out(dir + "/" + rel, std::ios::binary | std::ios::trunc);
    write_report(out);
    out << "\n";
    out.close();
    if (!out) return env_error("cannot write " + dir + "/" + rel);
    ev["report"] = rel;
  }
  std::string line = ev.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(f.fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return env_error("cannot write " + path + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return ok(std::move(ev));
}

Result<JournalChunk> journal_read(const std::string& lab, uint64_t offset) {
  if (auto r = check_lab(lab); !r) return r.error();
  JournalChunk out;
  out.next_offset = offset;
  const std::string path = history_dir(lab) + "/journal.jsonl";
  std::ifstream in(path, std::ios::binary);
  if (!in) return ok(std::move(out));  // no history yet
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in) return ok(std::move(out));
  std::string line;
  uint64_t pos = offset;
  while (true) {
    if (!std::getline(in, line)) break;
    if (in.eof()) break;  // no newline: a line still being written
    pos += line.size() + 1;
    out.next_offset = pos;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) out.events.push_back(std::move(j));
  }
  return ok(std::move(out));
}

Result<nlohmann::json> journal_report(const std::string& lab, const std::string& relative) {
  if (auto r = check_lab(lab); !r) return r.error();
  if (relative.rfind("reports/", 0) != 0 || relative.find("..") != std::string::npos ||
      relative.find('/', 8) != std::string::npos)
    return usage_error("not a report of lab " + lab + ": '" + relative + "'");
  auto text = read_file(history_dir(lab) + "/" + relative);
  if (!text) return text.error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return harness_error(relative + " of lab " + lab + " is not JSON");
  return ok(std::move(j));
}

std::vector<std::string> labs_with_history() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(history_root(), ec)) {
    std::string name = e.path().filename().string();
    if (e.is_directory() && topology::valid_lab_name(name) &&
        fs::exists(e.path() / "journal.jsonl"))
      out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace twin::state
