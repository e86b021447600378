#!/usr/bin/python3
"""make_traces.py — writes the point-to-point and process-group traces of traces/ (README there).

Chakra's own schema, compiled by Debian's protoc (protobuf-compiler) for Debian's python3-protobuf,
and Chakra's framing (each record prefixed by its length as a varint, as its encodeMessage does):

    protoc --python_out=DIR et_def.proto     # schema/protobuf/et_def.proto of mlcommons/chakra
    PYTHONPATH=DIR /usr/bin/python3 tests/sim/chakra/make_traces.py tests/sim/chakra/traces
"""
import json
import sys

from et_def_pb2 import (ALL_REDUCE, COMM_COLL_NODE, COMM_RECV_NODE, COMM_SEND_NODE, COMP_NODE, METADATA_NODE,
                        AttributeProto as Attr, GlobalMetadata, Node)

NPUS = 8
MIB = 1 << 20


def frame(out, msg):
    data = msg.SerializeToString()
    n = len(data)
    while True:
        b = n & 0x7F
        n >>= 7
        out.write(bytes([b | (0x80 if n else 0)]))
        if not n:
            break
    out.write(data)


class Graph:
    def __init__(self):
        self.nodes = []

    def add(self, name, kind, deps=(), **attrs):
        nd = Node(id=len(self.nodes) + 1, name=name, type=kind)
        nd.data_deps.extend(deps)
        for key, val in attrs.items():
            if key == "duration_micros":
                nd.duration_micros = val
            elif isinstance(val, str):
                nd.attr.append(Attr(name=key, string_val=val))
            elif key == "is_cpu_op":
                nd.attr.append(Attr(name=key, bool_val=bool(val)))
            else:
                nd.attr.append(Attr(name=key, int64_val=val) if key in ("comm_type", "comm_size")
                               else Attr(name=key, int32_val=val))
        self.nodes.append(nd)
        return nd.id

    def write(self, path):
        with open(path, "wb") as f:
            frame(f, GlobalMetadata(version="0.0.4"))
            for nd in self.nodes:
                frame(f, nd)


def pipeline(d):
    """Eight stages: each computes 5 us on what it received and sends 1 MiB on (rank r to r + 1)."""
    for r in range(NPUS):
        g = Graph()
        dep = ()
        if r > 0:
            dep = (g.add("recv_act", COMM_RECV_NODE, comm_src=r - 1, comm_dst=r, comm_size=MIB, comm_tag=7),)
        c = g.add("stage", COMP_NODE, dep, duration_micros=5)
        if r < NPUS - 1:
            g.add("send_act", COMM_SEND_NODE, (c,), comm_src=r, comm_dst=r + 1, comm_size=MIB, comm_tag=7)
        g.write(f"{d}/pipeline.{r}.et")


def groups(d):
    """Groups "1" (ranks 0-3) and "2" (4-7) allreduce 1 MiB at once after 5 us of compute, then
    the world allreduces 1 MiB."""
    for r in range(NPUS):
        g = Graph()
        c = g.add("fwd", COMP_NODE, duration_micros=5)
        a = g.add("ar_group", COMM_COLL_NODE, (c,), comm_type=ALL_REDUCE, comm_size=MIB, pg_name="1" if r < 4 else "2")
        g.add("ar_world", COMM_COLL_NODE, (a,), comm_type=ALL_REDUCE, comm_size=MIB, pg_name="0")
        g.write(f"{d}/groups.{r}.et")


def groups_declared(d):
    """groups, with the groups declared in the trace as PyTorch's converter does: a METADATA_NODE
    named process_group:init whose inputs.values is str() of a list holding the JSON."""
    pgs = [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": NPUS, "ranks": []},
           {"pg_name": "1", "pg_desc": "tp", "backend_config": "cuda:nccl", "pg_size": 4, "ranks": [0, 1, 2, 3]},
           {"pg_name": "2", "pg_desc": "tp", "backend_config": "cuda:nccl", "pg_size": 4, "ranks": [4, 5, 6, 7]}]
    for r in range(NPUS):
        g = Graph()
        m = g.add("## process_group:init ##", METADATA_NODE)
        g.nodes[-1].inputs.values = str([json.dumps(pgs)])
        c = g.add("fwd", COMP_NODE, (m,), duration_micros=5)
        a = g.add("ar_group", COMM_COLL_NODE, (c,), comm_type=ALL_REDUCE, comm_size=MIB, pg_name="1" if r < 4 else "2")
        g.add("ar_world", COMM_COLL_NODE, (a,), comm_type=ALL_REDUCE, comm_size=MIB, pg_name="0")
        g.write(f"{d}/groups_declared.{r}.et")


def group_alone(d):
    """Only group "1" (ranks 0-3) allreduces 1 MiB; ranks 4-7 compute 5 us: what a native
    4-rank allreduce on the same NPUs takes."""
    for r in range(NPUS):
        g = Graph()
        if r < 4:
            g.add("ar_group", COMM_COLL_NODE, comm_type=ALL_REDUCE, comm_size=MIB, pg_name="1")
        else:
            g.add("idle", COMP_NODE, duration_micros=5)
        g.write(f"{d}/group_alone.{r}.et")


def lanes(d):
    """Host and NPU compute side by side: each rank runs a 20 us host op (is_cpu_op) beside a 5 us
    NPU op, and even ranks then send 1 MiB to the odd rank after them."""
    for r in range(NPUS):
        g = Graph()
        g.add("host_op", COMP_NODE, duration_micros=20, is_cpu_op=1)
        c = g.add("kernel", COMP_NODE, duration_micros=5)
        if r % 2 == 0:
            g.add("send", COMM_SEND_NODE, (c,), comm_src=r, comm_dst=r + 1, comm_size=MIB)
        else:
            g.add("recv", COMM_RECV_NODE, (c,), comm_src=r - 1, comm_dst=r, comm_size=MIB)
        g.write(f"{d}/lanes.{r}.et")


def unmatched(d):
    """Rank 0 sends to rank 1, which never receives: refused before anything runs."""
    for r in range(NPUS):
        g = Graph()
        if r == 0:
            g.add("send", COMM_SEND_NODE, comm_src=0, comm_dst=1, comm_size=MIB)
        else:
            g.add("idle", COMP_NODE, duration_micros=1)
        g.write(f"{d}/unmatched.{r}.et")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    pipeline(out)
    groups(out)
    groups_declared(out)
    group_alone(out)
    lanes(out)
    unmatched(out)
