#include "twin/state/state.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "twin/core/util.hpp"
#include "twin/topology/names.hpp"

namespace fs = std::filesystem;

namespace twin::state {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Resource, kind, name, node, pid, start_time, uri)

void to_json(nlohmann::json& j, const State& s) {
  j = {{"schema_version", s.schema_version},
       {"lab", s.lab},
       {"status", s.status},
       {"created_at", s.created_at},
       {"twin_version", s.twin_version},
       {"plan", plan::to_json(s.plan)},
       {"resources", s.resources}};
}

void from_json(const nlohmann::json& j, State& s) {
  j.at("schema_version").get_to(s.schema_version);
  if (s.schema_version > kStateSchemaVersion)
    throw nlohmann::json::other_error::create(
        501,
        "state file schema version " + std::to_string(s.schema_version) +
            " is newer than this twin reads (" + std::to_string(kStateSchemaVersion) +
            "): a newer twin made the lab; take it down with that twin",
        &j);
  j.at("lab").get_to(s.lab);
  j.at("status").get_to(s.status);
  j.at("created_at").get_to(s.created_at);
  j.at("twin_version").get_to(s.twin_version);
  s.plan = plan::plan_from_json(j.at("plan"));
  j.at("resources").get_to(s.resources);
}

std::string lab_dir(const std::string& lab) { return std::string(plan::kRunRoot) + "/" + lab; }
std::string state_path(const std::string& lab) { return lab_dir(lab) + "/state.json"; }

namespace {
Result<void> check_name(const std::string& lab) {
  if (!topology::valid_lab_name(lab))
    return usage_error("invalid lab name '" + lab + "'; expected 1-" +
                       std::to_string(topology::kMaxLabName) +
                       " of A-Z a-z 0-9 _ - starting with a letter or digit");
  return {};
}
}  // namespace

Result<void> claim_lab(const std::string& lab) {
  if (auto r = check_name(lab); !r) return r;
  std::error_code ec;
  fs::create_directories(plan::kRunRoot, ec);
  if (ec) return env_error("cannot create " + std::string(plan::kRunRoot) + ": " + ec.message());
  if (::mkdir(lab_dir(lab).c_str(), 0755) != 0) {
    if (errno == EEXIST)
      return usage_error("lab '" + lab + "' is already running (" + lab_dir(lab) +
                         "); give another name (--name OTHER) or run `twin down --lab " + lab + "` first");
    return env_error("cannot create " + lab_dir(lab) + ": " + std::strerror(errno));
  }
  return {};
}

LabLock& LabLock::operator=(LabLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

LabLock::~LabLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

Result<LabLock> lock_lab(const std::string& lab, const std::function<void()>& on_wait) {
  if (auto r = check_name(lab); !r) return r.error();
  int fd = ::open(lab_dir(lab).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return usage_error("lab '" + lab + "' is not running (no " + lab_dir(lab) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return LabLock(fd);
  if (on_wait) on_wait();
  // SIGINT/SIGTERM interrupt flock (the CLI installs its handlers without SA_RESTART).
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR && interrupted()) {
      ::close(fd);
      return Error{ErrorKind::kInterrupted, "interrupted while waiting for lab '" + lab + "'"};
    }
    if (errno != EINTR) {
      ::close(fd);
      return harness_error("locking " + lab_dir(lab) + ": " + std::strerror(errno));
    }
  }
  return LabLock(fd);
}

Result<void> save_state(const State& s) {
  nlohmann::json j = s;
  return write_file_atomically(state_path(s.lab), j.dump(1) + "\n");
}

Result<State> load_state(const std::string& lab) {
  if (auto r = check_name(lab); !r) return r.error();
  std::ifstream f(state_path(lab));
  if (!f) return usage_error("lab '" + lab + "' is not running (no " + state_path(lab) + ")");
  try {
    nlohmann::json j = nlohmann::json::parse(f);
    return j.get<State>();
  } catch (const nlohmann::json::exception& e) {
    return harness_error("corrupt state file " + state_path(lab) + ": " + e.what() +
                         "; twin cannot tell what the lab holds. Its resources are named "
                         "after it: namespaces tw-" +
                         lab +
                         "-<node> (`ip netns list`), the "
                         "cgroup twin/" +
                         lab + " under the cgroup2 mount, and " + lab_dir(lab));
  }
}

Result<std::vector<Resource>> load_resources(const std::string& lab) {
  if (auto r = check_name(lab); !r) return r.error();
  std::ifstream f(state_path(lab));
  if (!f) return usage_error("lab '" + lab + "' is not running (no " + state_path(lab) + ")");
  try {
    // Only the resources become objects; the plan is skipped by the parser's callback.
    nlohmann::json j = nlohmann::json::parse(
        f, [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
          if (depth == 1 && event == nlohmann::json::parse_event_t::key)
            return parsed == "resources";
          return true;
        });
    return j.at("resources").get<std::vector<Resource>>();
  } catch (const nlohmann::json::exception& e) {
    return harness_error("corrupt state file " + state_path(lab) + ": " + e.what());
  }
}

const Resource* find_process(const std::vector<Resource>& resources, const std::string& name,
                             const std::string& node) {
  for (const auto& r : resources)
    if (r.kind == "process" && r.name == name && r.node == node) return &r;
  return nullptr;
}

std::vector<std::string> list_labs() {
  std::vector<std::string> labs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(plan::kRunRoot, ec))
    if (e.is_directory() && topology::valid_lab_name(e.path().filename().string()))
      labs.push_back(e.path().filename().string());
  std::sort(labs.begin(), labs.end());
  return labs;
}

Result<std::string> resolve_lab(const std::string& requested) {
  if (!requested.empty()) {
    if (auto r = check_name(requested); !r) return r.error();
    if (!fs::is_directory(lab_dir(requested))) {
      auto labs = list_labs();
      std::string list;
      for (const auto& l : labs) list += (list.empty() ? "" : ", ") + l;
      return usage_error("lab '" + requested + "' is not running" +
                         (labs.empty() ? "" : "; running labs: " + list));
    }
    return requested;
  }
  auto labs = list_labs();
  if (labs.size() == 1) return labs[0];
  if (labs.empty()) return usage_error("no lab is running; start one with `twin up FILE`");
  std::string list;
  for (const auto& l : labs) list += (list.empty() ? "" : ", ") + l;
  return usage_error("several labs are running (" + list + "); choose one with --lab NAME");
}

Result<State> load_lab(const std::string& requested) {
  auto lab = resolve_lab(requested);
  if (!lab) return lab.error();
  return load_state(*lab);
}

bool process_alive(int pid, uint64_t start_time) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string content;
  if (!f || !std::getline(f, content)) return false;
  auto close = content.rfind(')');
  if (close == std::string::npos || close + 2 >= content.size()) return false;
  if (content[close + 2] == 'Z' || content[close + 2] == 'X') return false;  // awaiting reaper
  return start_time == 0 || process_start_time(pid) == start_time;
}

std::string wait_status_text(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string()) +
           (WCOREDUMP(status) ? ", core dumped" : "");
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

std::string exit_status_text(int pid, uint64_t start_time) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string content;
  if (!f || !std::getline(f, content)) return "";
  auto close = content.rfind(')');
  if (close == std::string::npos || close + 2 >= content.size()) return "";
  if (content[close + 2] != 'Z') return "";  // running, or another process by now
  std::istringstream rest(content.substr(close + 2));
  std::string field;
  uint64_t started = 0;
  // rest starts at field 3; start time is field 22, the exit code (a wait status) field 52.
  for (int i = 3; i <= 52 && rest >> field; ++i) {
    if (i == 22) started = std::stoull(field);
    if (i == 52) {
      if (start_time != 0 && started != start_time) return "";
      return wait_status_text(std::stoi(field));
    }
  }
  return "";
}

Result<void> stop_processes(const std::vector<Resource>& procs, const std::string& node) {
  using namespace std::chrono_literals;
  using Clock = std::chrono::steady_clock;
  for (const auto& r : procs)
    if (process_alive(r.pid, r.start_time)) ::kill(r.pid, SIGTERM);
  auto until = Clock::now() + 3s;
  for (const auto& r : procs) {
    while (process_alive(r.pid, r.start_time) && Clock::now() < until)
      std::this_thread::sleep_for(10ms);
    if (process_alive(r.pid, r.start_time)) ::kill(r.pid, SIGKILL);
  }
  for (const auto& r : procs) {
    auto hard = Clock::now() + 3s;
    while (process_alive(r.pid, r.start_time) && Clock::now() < hard)
      std::this_thread::sleep_for(10ms);
    if (process_alive(r.pid, r.start_time))
      return harness_error("node " + node + ": process " + std::to_string(r.pid) + " (" + r.name +
                           ") survived SIGKILL");
  }
  return {};
}

std::string cgroup_of(const State& st) {
  for (const auto& r : st.resources)
    if (r.kind == "cgroup") return r.name;
  return "";
}

}  // namespace twin::state
