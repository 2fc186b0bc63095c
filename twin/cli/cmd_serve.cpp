// twin serve: the REST API, the event stream and the web page (twin/serve/).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "twin/cli/commands.hpp"
#include "twin/core/util.hpp"
#include "twin/serve/backend.hpp"
#include "twin/serve/server.hpp"

namespace twin::cli {

namespace {
constexpr const char* kTokenDir = "/run/twin-serve";  // root-only (0700), beside the jobs
}  // namespace

int run_serve(const ServeOptions& o) {
  serve::ServerOptions so;
  std::string listen = o.listen;
  auto colon = listen.rfind(':');
  if (colon == std::string::npos)
    return fail("--listen '" + listen + "': expected ADDRESS:PORT, e.g. 127.0.0.1:8080", 2);
  so.address = listen.substr(0, colon);
  if (so.address.size() > 2 && so.address.front() == '[' && so.address.back() == ']')
    so.address = so.address.substr(1, so.address.size() - 2);
  try {
    size_t used = 0;
    so.port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1 || so.port < 0 || so.port > 65535) throw 0;
  } catch (...) {
    return fail("--listen '" + listen + "': the port is not a number from 0 to 65535", 2);
  }
  std::string token;
  // Without a token, any local user could drive the lab, whose terminals are root shells: by
  // default the server makes one (as Jupyter does), prints the page's address with it and keeps
  // it in a root-only file for curl; --no-token is the explicit choice of a single-user machine.
  bool made_token = false;
  if (o.token_file.empty() && !o.no_token) {
    std::ifstream random("/dev/urandom", std::ios::binary);
    unsigned char bytes[20];
    if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes))
      return fail("cannot read /dev/urandom for a token; give --token-file", 3);
    static const char* hex = "0123456789abcdef";
    for (unsigned char b : bytes) token += {hex[b >> 4], hex[b & 15]};
    made_token = true;
  }
  if (!o.token_file.empty()) {
    struct stat sb {};
    if (::stat(o.token_file.c_str(), &sb) != 0 || !S_ISREG(sb.st_mode))
      return fail("--token-file " + o.token_file + ": not a file", 2);
    if (sb.st_mode & 077)
      std::cerr << "twin: warning: --token-file " << o.token_file
                << " is readable by other users of this machine (chmod 600 " << o.token_file << ")\n";
    auto t = read_file(o.token_file);
    if (!t) return fail("--token-file: " + t.error().message, 2);
    token = trim(*t);
    if (token.size() < 16)
      return fail("--token-file " + o.token_file +
                      ": the token is shorter than 16 characters (e.g. `openssl rand -hex 32 > " +
                      o.token_file + "`)",
                  2);
  }
  // Jobs and terminals run this very program, through /proc/self/exe: the file at its path
  // may be rebuilt or replaced while the server runs (a job would then run another twin, or
  // fail while the file is being written).
  const std::string self = "/proc/self/exe";
  if (::access(self.c_str(), X_OK) != 0) return fail("cannot run this program again (/proc/self/exe)", 3);
  so.twin_program = self;
  // The jobs this server starts record themselves in the labs' journals as the API's.
  ::setenv("TWIN_EVENT_SOURCE", "api", 1);
  // Root-only: job folders hold what requests sent; token files the token. Per server (pid), so
  // two servers' job ids never share a folder.
  std::error_code dir_ec;
  std::filesystem::create_directories(kTokenDir, dir_ec);
  std::filesystem::permissions(kTokenDir, std::filesystem::perms::owner_all, dir_ec);
  serve::SystemBackend backend(self, std::string(kTokenDir) + "/jobs-" + std::to_string(::getpid()));
  serve::ApiOptions ao;
  ao.token = token;
  ao.loopback = serve::is_loopback(so.address);
  ao.bundle_dir = TWIN_WEB_BUILD_DIR;
  ao.web_dir = o.web_dir.empty() ? std::string(TWIN_DATA_DIR) + "/web" : o.web_dir;
  if (!std::filesystem::exists(ao.web_dir + "/index.html"))
    std::cerr << "twin: warning: no web page in " << ao.web_dir << " (--web-dir); the API works\n";
  serve::Api api(ao, backend);
  std::string made_file;
  // Beyond loopback only with a token the operator manages (--token-file), never a made one.
  auto r = serve::serve(so, api, !o.token_file.empty(), [&](const std::string& where) {
    if (made_token) {
      // Named by port, so two servers on one machine keep their own; removed when it stops.
      std::string port = where.substr(where.rfind(':') + 1);
      made_file = std::string(kTokenDir) + "/token-" + port;
      int fd = ::open(made_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      std::string line = token + "\n";
      if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        std::cerr << "twin: warning: cannot write " << made_file << "\n";
      if (fd >= 0) ::close(fd);
      std::cerr << "twin: serving http://" << where << "/?token=" << token << "\n"
                << "  API: http://" << where << "/api/openapi.json; requests that change a lab "
                << "and terminals need the token (also in " << made_file << ")\n"
                << "  Ctrl-C stops\n";
      return;
    }
    if (where.starts_with("0.0.0.0:") || where.starts_with("[::]:"))
      std::cerr << "twin: listening on every address of this machine; browse to one of them, "
                   "e.g. http://<this host's address>:"
                << where.substr(where.rfind(':') + 1) << "/\n";
    std::cerr << "twin: serving http://" << where << "/ (API: http://" << where
              << "/api/openapi.json)"
              << (token.empty() ? "; no token: any local user can change labs"
                                : "; requests that change a lab and terminals need the token")
              << "; Ctrl-C stops\n";
  });
  if (!made_file.empty()) ::unlink(made_file.c_str());
  if (!r) return fail(r.error().message, exit_code(r.error()));
  return 0;
}

}  // namespace twin::cli
