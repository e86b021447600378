// rs_halfwd.hpp — the ops table of a HAL wrapper (trace, sim world): W's op wherever the wrapped
// device has one; a missing op stays missing, which the engine reads as "not supported".
#pragma once

#include <ncl/ncl_hal.h>

template <class W> ncl_hal_ops rs_forward_ops(const ncl_hal_ops &d)
{
    ncl_hal_ops o{};
    o.caps = d.caps ? W::caps : nullptr;
    o.begin = d.begin ? W::begin : nullptr;
    o.end = d.end ? W::end : nullptr;
    o.dma_submit = d.dma_submit ? W::dma_submit : nullptr;
    o.dma_poll = d.dma_poll ? W::dma_poll : nullptr;
    o.notify_record = d.notify_record ? W::notify_record : nullptr;
    o.notify_try_wait = d.notify_try_wait ? W::notify_try_wait : nullptr;
    o.wait_event = d.wait_event ? W::wait_event : nullptr;
    o.now_ns = d.now_ns ? W::now_ns : nullptr;
    o.log = d.log ? W::log : nullptr;
    o.notify_peek = d.notify_peek ? W::notify_peek : nullptr;
    o.split = d.split ? W::split : nullptr;
    o.release = d.release ? W::release : nullptr;
    return o;
}
