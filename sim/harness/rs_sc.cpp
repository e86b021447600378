// rs_sc.cpp — sc_main, forwarding to the body rs::sc_enter was given (see rs_sc.hpp).
#include "rs_sc.hpp"

#include <cstdlib>

#include <systemc>

namespace {
const std::function<int()> *g_body; // set only for the duration of sc_enter
} // namespace

int sc_main(int, char **)
{
    return (*g_body)();
}

namespace rs {

int sc_enter(const std::function<int()> &body)
{
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    int status = 0;
    std::function<int()> wrapped = [&] { return status = body(); };
    g_body = &wrapped;
    sc_core::sc_elab_and_sim(0, nullptr);
    g_body = nullptr;
    return status;
}

} // namespace rs
