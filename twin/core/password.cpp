#include "twin/core/password.hpp"

#include <crypt.h>

#include <cstring>
#include <memory>

namespace twin {

namespace {
std::string crypt_of(const std::string& clear, const char* setting) {
  auto data = std::make_unique<crypt_data>();  // 32 KiB: not on the stack
  std::memset(data.get(), 0, sizeof(crypt_data));
  const char* h = crypt_r(clear.c_str(), setting, data.get());
  // libxcrypt returns a string starting with '*' on failure (never a valid hash).
  if (!h || *h == '*') return "";
  return h;
}
}  // namespace

Result<std::string> hash_password(const std::string& clear) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$y$", 0, nullptr, 0, salt, sizeof salt))
    return env_error(std::string("libcrypt could not make a yescrypt salt: ") +
                     std::strerror(errno));
  std::string h = crypt_of(clear, salt);
  if (h.empty()) return env_error("libcrypt could not hash the password (yescrypt)");
  return h;
}

bool crypt_hash_ok(const std::string& hash) {
  if (hash.empty() || hash[0] != '$') return false;  // DES and friends: refused
  // legacy methods (MD5, DES) are refused
  if (crypt_checksalt(hash.c_str()) != CRYPT_SALT_OK) return false;
  // crypt_checksalt reads the method only: a hash that is cut short or malformed ("$6$abc$def")
  // passes it, yet no password could ever match. Hashing anything with it as the setting must
  // give a hash of the same shape: the same setting, a digest of the same length.
  const std::string h = crypt_of("", hash.c_str());
  const auto cut = hash.rfind('$');
  return !h.empty() && h.size() == hash.size() && h.compare(0, cut, hash, 0, cut) == 0;
}

bool password_matches(const std::string& clear, const std::string& hash) {
  if (!crypt_hash_ok(hash)) return false;
  const std::string h = crypt_of(clear, hash.c_str());
  return !h.empty() && h == hash;
}

}  // namespace twin
