#pragma once
// The real Backend of twin serve: reads labs through the engine (status, live graph, journal)
// and runs long work as jobs, each `twin <command> --json` in a child process (this very
// binary), so the API takes the CLI's code paths and lab locks: a CLI `apply` and an API apply
// on one lab wait for each other. A job's files (what the request sent) are written under
// <jobs_root>/<id>/ and kept after it (a lab brought up by a job may refer to its topology).
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "twin/serve/api.hpp"

namespace twin::serve {

class SystemBackend final : public Backend {
 public:
  // `self`: the twin binary jobs run (/proc/self/exe resolved). `jobs_root`: where job folders go.
  SystemBackend(std::string self, std::string jobs_root = "/run/twin-serve/jobs");
  ~SystemBackend() override;  // cancels running jobs and waits for them

  nlohmann::json labs() override;
  std::optional<nlohmann::json> images(Response* err) override;
  std::optional<nlohmann::json> lab_status(const std::string& lab, Response* err) override;
  std::optional<nlohmann::json> lab_graph(const std::string& lab, Response* err) override;
  std::optional<std::string> lab_graph_text(const std::string& lab, const std::string& format,
                                            Response* err) override;
  std::optional<nlohmann::json> node_detail(const std::string& lab, const std::string& node,
                                            Response* err) override;
  std::optional<nlohmann::json> history(const std::string& lab, uint64_t after_seq,
                                        Response* err) override;
  std::optional<nlohmann::json> report(const std::string& lab, const std::string& name,
                                       Response* err) override;
  std::optional<nlohmann::json> check_topology(const std::string& topology, const Files& files,
                                               const std::string& name, Response* err) override;
  JobView start_job(const std::string& kind, const std::string& lab,
                    const std::vector<std::string>& args, const Files& files) override;
  std::vector<JobView> jobs() override;
  std::optional<JobView> job(const std::string& id) override;
  bool cancel_job(const std::string& id) override;
  bool running(const std::string& lab, const std::string& node) override;
  std::optional<nlohmann::json> exec(const std::string& lab, const std::string& node,
                                     const std::vector<std::string>& command, double timeout_s,
                                     Response* err) override;

 private:
  struct Job {
    std::mutex mu;
    JobView view;
    int pid = 0;
    bool cancel_requested = false;
    std::thread thread;
  };
  // Writes `files` under `dir`. Errors as a 500 Response.
  std::optional<Response> write_files(const std::string& dir, const Files& files);
  static constexpr size_t kMaxJobs = 200;
  std::string self_;
  std::string jobs_root_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::atomic<int> next_id_{1};
};

}  // namespace twin::serve
