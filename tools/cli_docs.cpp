// Writes docs/cli.md, the page of every command and option, from the command table
// (twin/options/table.hpp) to standard output:
//   cmake --build build --target twin_cli_docs && build/twin_cli_docs > docs/cli.md
// tests/unit/cli_docs_test.cpp fails while the checked-in page differs from it.
#include <iostream>

#include "twin/options/table.hpp"

int main() {
  std::cout << twin::options::markdown();
  return 0;
}
