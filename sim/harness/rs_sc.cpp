// rs_sc.cpp — sc_main, forwarding to the body rs::sc_enter was given (see rs_sc.hpp).
#include "rs_sc.hpp"

#include <cstdio>
#include <cstdlib>
#include <new>

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
    // A body that does not return (an exception SystemC would only print as E549) is a failure,
    // never the 0 of a run that went well.
    int status = 3; // RS_EXIT_ENGINE
    std::function<int()> wrapped = [&] {
        try {
            return status = body();
        } catch (const std::bad_alloc &) {
            std::fprintf(stderr, "ringsim: out of memory while simulating: the model needs more than this process "
                                 "may use (fewer ranks, smaller sizes, or payload: none)\n");
        } catch (const std::exception &e) {
            std::fprintf(stderr, "ringsim: internal error while simulating: %s\n", e.what());
        }
        return status = 3;
    };
    g_body = &wrapped;
    sc_core::sc_elab_and_sim(0, nullptr);
    g_body = nullptr;
    return status;
}

} // namespace rs
