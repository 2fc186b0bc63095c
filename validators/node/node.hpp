#pragma once
// node validator family: what twin itself runs for the lab is running. Checked before any other
// family (first in the registry), because every other test reads the network through these
// processes: a node whose zebra died still answers from the kernel, one whose bgpd died answers
// nothing, and neither is the network's fault. Tests:
//   0 daemons  every daemon a node must run (its image's, plus what its configuration needs:
//              plan::Node::daemons), and every VM, is running; otherwise how it ended where this
//              machine still knows (its exit status, or its last words in its FRR log). A
//              failure is unhealthy (TestResult::unhealthy): the lab is broken, not its
//              network; `twin restart NODE` brings the node back from its startup config.
// Source: LabProbe::processes (the lab's state file: every process twin started, by PID and
// start time; a VM's domain state from libvirt).
#include <map>

#include "twin/validate/validator.hpp"

namespace twin::validators {

class NodeValidator final : public validate::Validator {
 public:
  std::string name() const override { return "node"; }
  std::vector<validate::TestResult> run(validate::Context& ctx) override;
  // Everything else reads the lab through these processes.
  bool control_plane() const override { return true; }
};

// Pure evaluation of what LabProbe::processes answered for `plan` (an error result, lab-wide,
// when it could not answer; a skip when the probe cannot see processes at all).
std::vector<validate::TestResult> evaluate_node(
    const plan::Plan& plan,
    const Result<std::map<std::string, std::vector<validate::ProcessHealth>>>& processes);

}  // namespace twin::validators
