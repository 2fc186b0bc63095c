// twin: a digital twin of a data-center network for proofs of concept, CI gates and training.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <string>

#include "twin/cli/app.hpp"
#include "twin/core/util.hpp"

namespace {
void on_signal(int) {
  ++twin::g_interrupt_count;
  twin::g_interrupted = true;
}
}  // namespace

int main(int argc, char** argv) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // Validation keeps one raw ICMP socket open per probe in flight (a 256-node lab has ~500 per
  // node, 8 nodes at a time): raise the soft descriptor limit to the hard one. FRR daemons do
  // not inherit the cost: each gets its own --limit-fds (runtime/frr.hpp).
  if (rlimit rl{}; ::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }

  twin::cli::Cli cli;
  CLI::App& app = cli.app;

  if (std::string unknown = twin::cli::unknown_subcommand(app, {argv + 1, argv + argc});
      !unknown.empty()) {
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", unknown.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& ex) {
    return app.exit(ex);
  } catch (const CLI::CallForAllHelp& ex) {
    return app.exit(ex);
  } catch (const CLI::CallForVersion& ex) {
    return app.exit(ex);
  } catch (const CLI::ParseError& ex) {
    app.exit(ex);
    return 2;
  }
  return cli.code;
}
