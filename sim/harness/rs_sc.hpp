// rs_sc.hpp — the program's one way into SystemC: run a function as the body of sc_main. One
// simulation per process, and every model::Network must exist before its first sc_start.
#pragma once

#include <functional>

namespace rs {

/** Elaborates and simulates with `body` as sc_main's body; returns what body returned. */
int sc_enter(const std::function<int()> &body);

} // namespace rs
