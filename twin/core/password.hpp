#pragma once
// Password hashes for a lab's SSH login (topology `mgmt.password`), through the machine's
// libcrypt (libxcrypt, crypt(5)): twin stores and writes only hashes, never the clear text.
#include <string>

#include "twin/core/error.hpp"

namespace twin {

// yescrypt ("$y$", crypt(5)'s default on Debian 12) of `clear` with a fresh random salt, so two
// calls give two hashes that both verify. Errors: libcrypt could not make a salt or a hash.
Result<std::string> hash_password(const std::string& clear);

// Whether `hash` is a crypt(5) hash with a method this libcrypt accepts for new hashes
// (crypt_checksalt says OK): yescrypt, gost-yescrypt, scrypt, bcrypt, SHA-512/256-crypt; not
// MD5 or DES.
bool crypt_hash_ok(const std::string& hash);

// Whether `clear` hashes to `hash` (what sshd's password check does); false for a malformed hash.
bool password_matches(const std::string& clear, const std::string& hash);

}  // namespace twin
