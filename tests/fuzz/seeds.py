#!/usr/bin/env python3
"""Seed inputs for the fuzz targets (tests/fuzz/fuzz_<name>.c).

  seeds.py hand OUT          small hand-made seeds, written by code: OUT/<target>/<name>
                             (committed as tests/fuzz/seeds/; tests/fuzz/mkseeds.sh adds the
                             seeds that the real profgate writes)
  seeds.py corpus OUT DIR... seeds cut from real profiles under each DIR (the shared corpus,
                             tests/data): Chrome JSON cut to a few hundred events of every kind
                             (at most MAX_JSON bytes, still valid JSON), XPlane with a few events
                             per line and the metadata they use (at most MAX_XPLANE bytes)

Only the standard library; deterministic output.
"""
import gzip
import hashlib
import json
import os
import struct
import sys
import zlib

MAX_JSON = 48 * 1024
MAX_XPLANE = 96 * 1024
PREFIX_BYTES = 8 << 20  # larger JSON files: events of their first 8 MiB


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# ---- protobuf wire format (XPlane) ----

def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wt):
    return varint((field << 3) | wt)


def f_int(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def f_double(field, v):
    return key(field, 1) + struct.pack("<d", v)


def read_varint(b, i):
    n = shift = 0
    while True:
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return n, i


def fields(b):
    """(field, wire type, value, raw bytes of the whole field) of one message."""
    i = 0
    while i < len(b):
        start = i
        k, i = read_varint(b, i)
        fn, wt = k >> 3, k & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield fn, wt, v, b[start:i]


# ---- XPlane builders ----

# XStat's value fields by kind: (field number, encoder) as in docs/formats.md section 1.
STAT_FIELDS = {
    "d": (2, f_double),  # double_value
    "u": (3, f_int),     # uint64_value
    "i": (4, f_int),     # int64_value
    "s": (5, f_bytes),   # str_value
    "b": (6, f_bytes),   # bytes_value
    "r": (7, f_int),     # ref_value
    "z": (8, lambda field, v: f_bytes(field, zlib.compress(v.encode()))),  # compressed
}


def stat(mid, kind, v):
    field, enc = STAT_FIELDS[kind]
    return f_int(1, mid) + enc(field, v)


def event(mid, off_ps, dur_ps, stats=(), occurrences=None):
    body = f_int(1, mid)
    body += f_int(5, occurrences) if occurrences is not None else f_int(2, off_ps)
    body += f_int(3, dur_ps)
    for s in stats:
        body += f_bytes(4, stat(*s))
    return body


def line(lid, name, ts_ns, events, display=None):
    body = f_int(1, lid) + f_bytes(2, name) + f_int(3, ts_ns)
    for e in events:
        body += f_bytes(4, e)
    if display:
        body += f_bytes(11, display)
    return body


def plane(pid, name, lines, evmeta, statmeta, stats=()):
    body = f_int(1, pid) + f_bytes(2, name)
    for ln in lines:  # lines before metadata, as serializers write them
        body += f_bytes(3, ln)
    for mid, (nm, disp, mstats) in evmeta.items():
        m = f_int(1, mid) + f_bytes(2, nm)
        if disp:
            m += f_bytes(4, disp)
        for s in mstats:
            m += f_bytes(5, stat(*s))
        body += f_bytes(4, f_int(1, mid) + f_bytes(2, m))
    for mid, nm in statmeta.items():
        body += f_bytes(5, f_int(1, mid) + f_bytes(2, f_int(1, mid) + f_bytes(2, nm)))
    for s in stats:
        body += f_bytes(6, stat(*s))
    return body


def space(planes, hostnames=(), errors=(), warnings=()):
    body = b""
    for p in planes:
        body += f_bytes(1, p)
    for e in errors:
        body += f_bytes(2, e)
    for w in warnings:
        body += f_bytes(3, w)
    for h in hostnames:
        body += f_bytes(4, h)
    return body


STATS = {1: "correlation_id", 2: "hlo_op", 3: "hlo_category", 4: "group_id",
         5: "device_offset_ps", 6: "device_duration_ps", 7: "step_num", 8: "flops",
         9: "long_name", 10: "gpu_device_name", 11: "profile_start_time",
         12: "profile_stop_time", 13: "core_count", 14: "device_vendor", 15: "tf_op",
         16: "bytes_accessed", 17: "replica_groups", 18: "kernel_details"}


def xplane_gpu():
    evm = {1: ("fusion.12", "fusion", [(3, "s", "loop fusion")]),
           2: ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "", []),
           3: ("custom-call.3", "", [(2, "s", "custom-call.3"), (16, "u", 4096)]),
           4: ("1", "", []), 5: ("jit_train_step", "", [])}
    stream = line(1, "Stream #1(Compute)", 1000,
                  [event(1 + k % 3, 10000 + k * 900000, 600000,
                         [(1, "u", 100 + k), (8, "u", 123456789)]) for k in range(9)],
                  display="Stream #1")
    ops = line(2, "XLA Ops", 1000,
               [event(1 + k % 3, 10000 + k * 900000, 600000, [(9, "r", 2)]) for k in range(9)])
    gpu = plane(1, "/device:GPU:0", [stream, ops], evm, STATS,
                [(10, "s", "NVIDIA H100 80GB HBM3"), (13, "i", 132)])
    steps = line(1, "Steps", 1000,
                 [event(4, k * 3000000, 2900000, [(4, "i", k)]) for k in range(3)])
    modules = line(2, "XLA Modules", 1000,
                   [event(5, k * 3000000, 2800000, [(4, "i", k)]) for k in range(3)])
    tf = line(3, "TensorFlow Name Scope", 1000, [event(5, 0, 100, [(15, "s", "a/b/c")])])
    host = plane(2, "/host:CPU", [steps, modules, tf], {4: ("1", "", []), 5: ("jit_step", "", [])},
                 STATS)
    task = plane(3, "Task Environment", [], {}, STATS,
                 [(11, "u", 1700000000000000000), (12, "u", 1700000001000000000)])
    meta = plane(4, "/host:metadata", [line(1, "m", 0, [event(1, 0, 0)])], {1: ("x", "", [])}, STATS)
    return space([gpu, host, task, meta], hostnames=["gpu-host-0"])


def xplane_tpu():
    evm = {1: ("fusion.7", "", [(3, "s", "convolution")]), 2: ("all-reduce.1", "", []),
           3: ("copy-start", "", []), 4: ("2", "", [])}
    ops = line(1, "XLA Ops", 5, [event(1 + k % 3, 0, 0, [(5, "i", k * 1000000), (6, "i", 700000),
                                                          (17, "s", "{{0,1,2,3}}")])
                                 for k in range(8)])
    async_ops = line(2, "Async XLA Ops", 5, [event(3, 100, 2000)])
    steps = line(3, "Steps", 5, [event(4, k * 4000000, 3900000, [(7, "i", k)]) for k in range(2)])
    tpu = plane(7, "/device:TPU:0", [ops, async_ops, steps], evm, STATS,
                [(14, "s", "Google"), (13, "i", 2)])
    return space([tpu], hostnames=["t1v-n-0"], warnings=["a profiler warning"])


def xplane_odd():
    """Every stat value type, num_occurrences, a line id twice, unknown fields."""
    evm = {1: ("op", "op display", [(2, "z", "compressed hlo"), (16, "d", 1.5)]),
           2: ("agg", "", []), 9: ("ünïcode \u202e name", "", [])}
    ev = [event(1, 0, 5000, [(1, "u", 7), (18, "b", b"\x00\x01\xff"), (8, "d", 2.0e12),
                             (2, "r", 9), (99, "i", -5)]),
          event(2, 0, 0, occurrences=12),
          event(9, 6000, 10**12)]
    l1 = line(5, "Stream #3(Memcpy)", 10, ev)
    l2 = line(5, "Stream #3(Memcpy)", 20, [event(1, 100, 100)])
    unknown = key(15, 0) + varint(1) + key(16, 2) + varint(2) + b"zz"
    gpu = plane(1, "/device:GPU:3", [l1, l2], evm, STATS) + unknown
    return space([gpu], errors=["an error recorded by the profiler"])


# ---- Chrome JSON builders ----

def kineto_trace():
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python3"}},
          {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "GPU 0"}},
          {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1, "args": {"name": "main"}},
          {"ph": "M", "name": "process_sort_index", "pid": 1, "args": {"sort_index": 5}}]
    ts, corr = 1000, 1
    for step in range(1, 5):
        start = ts
        for name, cat, dur in (("aten::mm", "cpu_op", 30), ("volta_sgemm_128x64_nn", "kernel", 600),
                               ("ncclDevKernel_AllReduce_Sum_f32", "kernel", 250),
                               ("Memcpy DtoH (Device -> Pinned)", "gpu_memcpy", 40),
                               ("Memset (Device)", "gpu_memset", 3)):
            if cat == "cpu_op":
                ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 1, "ts": ts,
                           "dur": dur, "args": {"External id": corr, "Input Dims": [[8, 8]]}})
                continue
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 0,
                       "tid": 1, "ts": ts + 1, "dur": 5, "args": {"correlation": corr}})
            ev.append({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 0, "tid": 1,
                       "ts": ts + 1})
            args = {"device": 0, "stream": 7, "correlation": corr}
            if "nccl" in name:
                args.update({"Collective name": "allreduce", "In msg nelems": 1048576,
                             "Out msg nelems": 1048576, "Group size": 8, "dtype": "Float",
                             "Process Group Name": "0"})
            ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 7, "ts": ts + 10,
                       "dur": dur, "args": args})
            ev.append({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": corr, "pid": 1, "tid": 7,
                       "ts": ts + 10, "bp": "e"})
            ts += dur + 20
            corr += 1
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                   "pid": 0, "tid": 1, "ts": start, "dur": ts - start})
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": "forward", "pid": 1, "tid": 7,
                   "ts": start + 10, "dur": ts - start - 20})
        ts += 30
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85e9,
                                  "computeMajor": 9, "numSms": 132}],
            "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
            "baseTimeNanoseconds": 1700000000000000000, "displayTimeUnit": "ms",
            "traceEvents": ev, "traceName": "x.pt.trace.json"}


def jax_export():
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
          {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "Stream #1(Compute)"}},
          {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
          {"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "Steps"}},
          {"ph": "M", "pid": 701, "name": "process_name", "args": {"name": "/host:CPU"}},
          {"ph": "M", "pid": 701, "tid": 9, "name": "thread_name", "args": {"name": "python3"}}]
    for k in range(6):
        ts = 1000.5 + k * 900
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": ts, "dur": 600.25, "name": "fusion.%d" % k,
                   "args": {"hlo_op": "fusion.%d" % k, "hlo_module": "jit_step",
                            "hlo_category": "convolution fusion", "long_name": "fusion = f32[8]"}})
        ev.append({"ph": "X", "pid": 1, "tid": 2, "ts": ts, "dur": 600.25, "name": "fusion.%d" % k})
    for k in range(3):
        ev.append({"ph": "X", "pid": 1, "tid": 3, "ts": 1000 + k * 1800, "dur": 1790,
                   "name": str(k), "args": {"group_id": str(k), "step_num": str(k)}})
    ev.append({})
    return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "traceEvents": ev}


def phases_array():
    return [{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 0},
            {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 5},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 9},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
            {"ph": "E", "pid": 1, "tid": 2, "ts": 21},
            {"ph": "B", "name": "never closed", "pid": 1, "tid": 3, "ts": 22},
            {"ph": "b", "cat": "async", "name": "req", "id": "0x1f", "pid": 1, "tid": 1, "ts": 1},
            {"ph": "e", "cat": "async", "name": "req", "id": "0x1f", "pid": 1, "tid": 1, "ts": 30},
            {"ph": "i", "name": "mark", "pid": 1, "tid": 1, "ts": 3, "s": "g"},
            {"ph": "I", "name": "mark2", "pid": 1, "tid": 1, "ts": 4},
            {"ph": "n", "cat": "async", "name": "note", "id": 7, "pid": 1, "ts": 4},
            {"ph": "C", "name": "mem", "pid": 1, "ts": 5, "args": {"bytes": 10}},
            {"ph": "s", "name": "flow", "id": 3, "pid": 1, "tid": 1, "ts": 6, "cat": "fwdbwd"},
            {"ph": "t", "name": "flow", "id": 3, "pid": 1, "tid": 2, "ts": 7, "cat": "fwdbwd"},
            {"ph": "f", "name": "flow", "id": 3, "pid": 1, "tid": 3, "ts": 8, "cat": "fwdbwd",
             "bp": "e"},
            {"ph": "X", "name": "strs", "pid": "p", "tid": "t", "ts": 10, "dur": 5},
            {"ph": "P", "name": "sample", "pid": 1, "tid": 1, "ts": 11},
            {"ph": "X", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 25}]


def chrome_hand(out):
    t = "chrome_json"
    write(out, t, "kineto.json", json.dumps(kineto_trace(), indent=1))
    write(out, t, "jax_export.json", dumps(jax_export()))
    write(out, t, "phases_array.json", json.dumps(phases_array()))
    write(out, t, "empty_object.json", "{}")
    write(out, t, "empty_events.json", '{"traceEvents": []}')
    write(out, t, "bom.json", b"\xef\xbb\xbf \n" + dumps({"traceEvents": phases_array()[:4]}).encode())
    # escapes, surrogates, odd numbers, times as strings, deep args
    write(out, t, "negative_dur.json", '[{"ph":"X","name":"neg","pid":1,"tid":1,"ts":1,"dur":-5}]')
    write(out, t, "lone_surrogate.json", '[{"ph":"X","name":"\\ud800x","pid":1,"tid":1,"ts":1}]')
    write(out, t, "strings_numbers.json",
          '{"traceEvents":[{"ph":"X","name":"a\\u0000b\\ud83d\\ude00\\u00e9\\/\\"\\\\\\t\\u202e",'
          '"cat":"kernel","pid":-1,"tid":1e3,"ts":"12.345","dur":1.5E+2,"id":123456789012345678901,'
          '"args":{"correlation":18446744073709551615,"x":[[[{"y":null}]]],"hlo_op":true,'
          '"flops":-0,"step_num":"7"}},'
          '{"ph":"X","name":"n","pid":1,"tid":1,"ts":0.0000001,"dur":9223372036854.775807},'
          '{"ph":"X","name":"n","pid":1,"tid":1,"ts":-1e-7,"dur":0e0}]}')
    write(out, t, "header_types.json",
          '{"deviceProperties":{"id":0},"distributedInfo":[1],"schemaVersion":"x",'
          '"baseTimeNanoseconds":-1,"displayTimeUnit":5,"traceEvents":[]}')
    write(out, t, "trailing.json", '{"traceEvents":[{"ph":"X","ts":1,"dur":1}]} x')
    write(out, t, "truncated.json", '{"traceEvents":[{"ph":"X","name":"cut')


def xplane_hand(out):
    t = "xplane"
    write(out, t, "gpu.xplane.pb", xplane_gpu())
    write(out, t, "tpu.xplane.pb", xplane_tpu())
    write(out, t, "odd.xplane.pb", xplane_odd())
    write(out, t, "no_planes.xplane.pb", f_bytes(4, "host-only"))


def thresholds_hand(out, root):
    t = "thresholds"
    for name in sorted(os.listdir(os.path.join(root, "thresholds"))):
        if name.endswith(".json"):
            with open(os.path.join(root, "thresholds", name), "rb") as f:
                write(out, t, name, f.read())
    write(out, t, "globs.json", json.dumps({
        "schema": "profgate.thresholds/1", "name": "globs", "significance": 1e-9,
        "min_samples": 2, "min_workload_overlap": 0.25, "identity": ["device_kind", "labels.model"],
        "quality": {"event-cap": "inconclusive", "*": "warn", "ends-early": "ignore"},
        "rules": [{"metric": "*", "direction": "info"},
                  {"metric": "op.*gemm*.us_per_step", "direction": "lower",
                   "warn": {"relative": 0.01}, "fail": {"relative": 0.02, "absolute": 1},
                   "floor_share": 0.5, "test": False, "min_samples": 3},
                  {"metric": "step.?edian_us", "direction": "lower", "fail": {"absolute": 0},
                   "test": True, "significance": 0.5},
                  {"metric": "throughput.*", "direction": "higher",
                   "warn": {"relative": 0.02}, "comment": "x"}]}, indent=2))
    write(out, t, "bad_key.json", '{"schema":"profgate.thresholds/1","rules":[{"metric":"a",'
          '"direction":"lower","warn":{"relativ":1}}]}')


def marin_hand(out):
    m = {"schema_version": "profile_summary.v1", "source_path": "gs://b/run/trace.json.gz",
         "source_format": "jax_perfetto",
         "trace_provenance": {"trace_sha256": "ab" * 32},
         "run_metadata": {"hardware_type": "TPU v5e", "num_devices": 8, "num_hosts": 2,
                          "run_path": "marin/run", "run_id": "r1", "git_sha": "deadbeef",
                          "config_hash": "c0ffee"},
         "trace_overview": {"num_events_total": 123456, "quality_warnings": ["few steps", 3],
                            "suspected_truncation": True},
         "step_time": {"warmup_steps_ignored": 2,
                       "steady_state_steps": {"count": 5, "mean": 1000.5, "median": 990,
                                              "p90": 1100, "min": 900, "max": 1200}},
         "time_breakdown": {"duration_basis": "device", "total_duration": 5000,
                            "compute": {"share_of_total": 0.7},
                            "communication": {"share_of_total": 0.2},
                            "stall": {"share_of_total": 0.1}},
         "hot_ops": [{"name": "fusion.1", "canonical_name": "fusion", "category": "compute",
                      "count": 10, "exclusive_duration": 2000, "total_duration": 2100},
                     {"name": "all-reduce.3", "category": "communication", "count": 5,
                      "exclusive_duration": 800, "total_duration": 800}],
         "semantic_families": [{"family": "dense_mlp", "count": 3, "exclusive_duration": 1000,
                                "share_of_total": 0.2},
                               {"family": "attention", "count": 1, "exclusive_duration": 10,
                                "share_of_total": 0.01}],
         "communication_ops": [{"collective": "all-reduce", "count": 5, "total_duration": 800},
                               {"count": 1}],
         "gap_before_ops": [{"payload_op": "fusion.1", "marker_op": "copy-start", "count": 2,
                             "total_gap_duration": 30, "max_gap_duration": 20}, {"name": "x"}],
         "hierarchical_regions": [{"path": "train=>forward=>mlp", "depth": 3, "count": 5,
                                   "inclusive_duration": 900, "exclusive_duration": 100}]}
    write(out, "marin", "full.json", json.dumps(m, indent=2))
    write(out, "marin", "minimal.json",
          dumps({"schema_version": "profile_summary.v1", "step_time": {}, "time_breakdown": {}}))
    m2 = json.loads(json.dumps(m))
    m2["step_time"]["steady_state_steps"]["count"] = 1e300
    m2["run_metadata"]["num_devices"] = -3
    write(out, "marin", "huge_numbers.json", dumps(m2))


def history_hand(out):
    rec = {"schema": "profgate.history/1", "record_id": "0123456789abcdef0123456789abcdef",
           "time": "2024-05-01T12:00:00Z", "series": "bench-1a2b3c4d", "label": "bench",
           "kind": "pr", "verdict": "fail", "exit_code": 1, "repo": "o/r", "sha": "a" * 40,
           "ref": "refs/pull/7/merge", "pr": 7, "run_id": "99", "run_attempt": 1,
           "identity": {"device_kind": "NVIDIA H100", "device_count": 8, "world_size": None,
                        "labels": {"model": "llama"}},
           "metrics": {"step.median_us": 1234.5, "op.a|b.us_per_step": 1e-9},
           "baseline": {"kind": "file", "path": "b.json", "sha256": "b" * 64,
                        "summary_sha256": "c" * 64},
           "summary_sha256": "d" * 64, "thresholds": "default", "profgate_version": "0.1.0"}
    lines = [dumps(rec), "", "not json", "{\"schema\":\"profgate.history/2\"}",
             dumps(dict(rec, record_id="x" * 129)), dumps(dict(rec, series="../etc")),
             dumps(dict(rec, record_id="fedcba9876543210fedcba9876543210", kind="nightly"))]
    write(out, "history", "mixed.jsonl", "\n".join(lines[:4] + lines[5:]) + "\n")
    write(out, "history", "one.jsonl", dumps(rec) + "\n")
    write(out, "history", "crlf.jsonl", dumps(rec) + "\r\n" + lines[6] + "\r\n")
    write(out, "history", "pretty_record.json", json.dumps(rec, indent=2))
    write(out, "history", "future.jsonl", lines[3] + "\n")


# ---- remote answers: raw HTTP responses for fuzz_github and fuzz_wandb ----

SEP = "\n=====\n"  # FUZZ_HTTP_SEP
API = "@API@"      # FUZZ_HTTP_API: the loopback server's base URL


def http(status, body=b"", headers=(), reason=None):
    if not isinstance(body, (bytes, bytearray)):
        body = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    reasons = {200: "OK", 201: "Created", 401: "Unauthorized", 403: "Forbidden",
               404: "Not Found", 422: "Unprocessable Entity", 429: "Too Many Requests",
               500: "Internal Server Error", 502: "Bad Gateway"}
    head = ["HTTP/1.1 %d %s" % (status, reason or reasons.get(status, "Status"))]
    hs = list(headers)
    if not any(k.lower() == "content-type" for k, _ in hs):
        hs.append(("Content-Type", "application/json; charset=utf-8"))
    if not any(k.lower() == "content-length" for k, _ in hs):
        hs.append(("Content-Length", str(len(body))))
    head += ["%s: %s" % kv for kv in hs]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def script(sel, *responses):
    return (bytes([sel]) if sel is not None else b"") + SEP.encode().join(responses)


MARKER = "<!-- profgate:v1 series=fuzz-0123abcd verdict=%s -->"


def github_hand(out):
    me = http(200, {"login": "octocat", "id": 1})
    other = {"id": 5, "user": {"login": "someone"}, "body": "LGTM",
             "html_url": "https://github.com/octo/repo/pull/7#issuecomment-5"}
    mine = {"id": 9, "user": {"login": "octocat"}, "body": "old report\n" + MARKER % "fail",
            "html_url": "https://github.com/octo/repo/pull/7#issuecomment-9"}
    page2 = API + "/repos/octo/repo/issues/7/comments?per_page=100&page=2"
    link = ('<%s>; rel="next", <%s>; rel="last"' % (page2, page2))
    created = http(201, {"id": 11, "html_url": "https://github.com/octo/repo/pull/7#issuecomment-11"})
    updated = http(200, {"id": 9, "html_url": mine["html_url"]})
    pull = http(200, {"number": 7, "head": {"sha": "a" * 40, "ref": "feature"}})
    check = http(201, {"id": 3, "html_url": "https://github.com/octo/repo/runs/3"})
    write(out, "github", "create_two_pages.http",
          script(0, me, http(200, [other], [("Link", link)]), http(200, []), created, pull, check))
    write(out, "github", "update_in_place.http",
          script(0, me, http(200, [other, mine]), updated, pull, check))
    write(out, "github", "all_clear_on_alert.http",
          script(3, me, http(200, [mine]), updated, pull, check))
    write(out, "github", "actions_token.http",
          script(0, http(403, {"message": "Resource not accessible by integration"}),
                 http(200, [dict(mine, user={"login": "github-actions[bot]"})]), updated))
    write(out, "github", "too_long_then_ok.http",
          script(0, me, http(200, []),
                 http(422, {"message": "Validation Failed",
                            "errors": [{"code": "custom", "message": "Body is too long"}]}),
                 created))
    write(out, "github", "rate_limited.http",
          script(0, http(429, {"message": "API rate limit exceeded"},
                         [("Retry-After", "1"), ("x-ratelimit-remaining", "0"),
                          ("x-ratelimit-reset", "1700000000")])))
    write(out, "github", "secondary_limit.http",
          script(0, http(403, {"message": "You have exceeded a secondary rate limit"},
                         [("Retry-After", "30")])))
    write(out, "github", "bad_token.http",
          script(0, http(401, {"message": "Bad credentials",
                               "documentation_url": "https://docs.github.com/rest"})))
    write(out, "github", "proxy_html.http",
          script(0, http(200, b"<html><body>proxy login</body></html>",
                         [("Content-Type", "text/html")])))
    write(out, "github", "truncated.http",
          script(0, me, http(200, b'[{"id": 9, "user": {"login": "octocat"}, "bo',
                             [("Content-Length", "400")])))
    write(out, "github", "chunked.http",
          script(0, me, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                 b"Content-Type: application/json\r\n\r\n2\r\n[]\r\n0\r\n\r\n", created))
    write(out, "github", "server_errors.http",
          script(0, http(502, b"<html>Bad Gateway</html>", [("Content-Type", "text/html")]),
                 http(500, {"message": "Server Error"})))
    write(out, "github", "pull_sha_odd.http",
          script(0, me, http(200, []), created, http(200, {"head": {"sha": "../../x"}}), check))


def wandb_hand(out):
    files = {"plugins/profile/2024_05_01_12_00_00/host0.trace.json.gz":
             gzip.compress(b'{"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":2}]}',
                           mtime=0)}
    def b64md5(b):
        import base64
        return base64.b64encode(hashlib.md5(b).digest()).decode()
    manifest = {"version": 1, "storagePolicy": "wandb-storage-policy-v1",
                "storagePolicyConfig": {"storageLayout": "V2"},
                "contents": {p: {"digest": b64md5(b), "size": len(b), "birthArtifactID": "QXJ0OjE="}
                             for p, b in files.items()}}
    mbytes = json.dumps(manifest, sort_keys=True).encode()
    run = http(200, {"data": {"project": {"run": {
        "id": "UnVuOjE=", "name": "run1", "displayName": "bright-sun-1", "state": "finished",
        "config": json.dumps({"trainer": {"desc": None, "value": {"log_dir": "/nonexistent"}},
                              "git_commit": {"desc": None, "value": "b" * 40}}),
        "summaryMetrics": json.dumps({"throughput/device_kind": "TPU v5e"}),
        "createdAt": "2025-03-16T07:20:11", "commit": "c" * 40}}}})
    node = {"id": "QXJ0OjE=", "versionIndex": 3, "state": "COMMITTED", "digest": "d" * 32,
            "fileCount": 1, "size": 0, "createdAt": "2025-03-16T07:30:00",
            "updatedAt": "2025-03-16T07:30:00", "artifactType": {"name": "jax_profile"},
            "artifactSequence": {"name": "run1-profile",
                                 "project": {"name": "proj", "entityName": "ent"}},
            "aliases": [{"alias": "latest"}, {"alias": "v3"}]}
    arts = http(200, {"data": {"project": {"run": {"outputArtifacts": {
        "totalCount": 1, "pageInfo": {"hasNextPage": False, "endCursor": None},
        "edges": [{"node": node}]}}}}})
    mani_q = http(200, {"data": {"artifact": {"currentManifest": {"file": {
        "directUrl": "/storage/manifest/1?X-Goog-Signature=abc"}}}}})
    mani = http(200, mbytes)
    urls = http(200, {"data": {"artifact": {"files": {
        "pageInfo": {"hasNextPage": False, "endCursor": None},
        "edges": [{"node": {"name": p, "directUrl": "/storage/file/1/%d" % i}}
                  for i, p in enumerate(sorted(files))]}}}})
    blobs = [http(200, files[p], [("Content-Type", "application/octet-stream")])
             for p in sorted(files)]
    write(out, "wandb", "run_fetch.http", script(None, run, arts, mani_q, mani, urls, *blobs))
    write(out, "wandb", "manifest.json", mbytes)
    write(out, "wandb", "run_missing.http",
          script(None, http(200, {"data": {"project": {"run": None}}})))
    write(out, "wandb", "bad_key.http",
          script(None, http(401, {"errors": [{"message": "user is not logged in"}]})))
    write(out, "wandb", "graphql_errors.http",
          script(None, http(200, {"errors": [{"message": "permission denied",
                                              "path": ["project"]}], "data": None})))
    write(out, "wandb", "no_profile.http",
          script(None, run, http(200, {"data": {"project": {"run": {"outputArtifacts": {
              "totalCount": 0, "pageInfo": {"hasNextPage": False, "endCursor": None},
              "edges": []}}}}})))
    evil = dict(manifest, contents={"plugins/../../escape.pt.trace.json":
                                    {"digest": b64md5(b"x"), "size": 1}})
    write(out, "wandb", "hostile_path.http",
          script(None, run, arts, mani_q, http(200, json.dumps(evil).encode())))
    write(out, "wandb", "wrong_digest.http",
          script(None, run, arts, mani_q, mani, urls,
                 http(200, b"x" * len(files[sorted(files)[0]]),
                      [("Content-Type", "application/octet-stream")])))
    write(out, "wandb", "cut_download.http",
          script(None, run, arts, mani_q, mani, urls,
                 http(200, files[sorted(files)[0]][:10],
                      [("Content-Length", str(len(files[sorted(files)[0]])))])))
    write(out, "wandb", "rate_limited.http",
          script(None, http(429, {"errors": [{"message": "rate limited"}]},
                            [("Retry-After", "2")])))


def event_hand(out):
    repo = {"full_name": "octo/repo", "fork": False}
    fork = {"full_name": "someone/repo", "fork": True}
    pr = {"number": 7, "head": {"sha": "a" * 40, "ref": "f", "repo": repo},
          "base": {"sha": "b" * 40, "ref": "main", "repo": repo}}
    write(out, "event", "pull_request.json", dumps({"action": "synchronize", "number": 7,
                                                    "pull_request": pr, "repository": repo}))
    write(out, "event", "fork.json", dumps({"number": 8, "pull_request": dict(
        pr, number=8, head={"sha": "c" * 40, "repo": fork})}))
    write(out, "event", "fork_deleted.json", dumps({"number": 9, "pull_request": dict(
        pr, number=9, head={"sha": "c" * 40, "repo": None})}))
    write(out, "event", "workflow_run.json", dumps({"workflow_run": {
        "head_sha": "d" * 40, "head_repository": fork, "repository": repo,
        "pull_requests": [{"number": 12}]}}))
    write(out, "event", "issue_comment.json", dumps({"issue": {"number": 4}, "comment": {}}))
    write(out, "event", "schedule.json", dumps({"schedule": "0 3 * * *"}))
    verdict = {"schema": "profgate.verdict/1", "verdict": "fail",
               "metrics": [{"name": "step.median_us", "verdict": "fail", "baseline": 1000.0,
                            "candidate": 1200.0, "delta": 0.2,
                            "limit": {"warn": {"relative": 0.02}, "fail": {"relative": 0.05}}},
                           {"name": "family.attention%0A::error::x.us_per_step",
                            "verdict": "warn", "baseline": 10, "candidate": 12,
                            "limit": {"fail": {"absolute": 5}}},
                           {"name": "breakdown.idle_share", "verdict": "warn",
                            "baseline": 0.1, "candidate": 0.13}] +
               [{"name": "op.k%d.us_per_step" % i, "verdict": "fail", "baseline": 1,
                 "candidate": 2} for i in range(5)]}
    write(out, "event", "verdict_annotations.json", dumps(verdict))
    write(out, "event", "multiline_value.txt", "line one\nvalue<<ghadelimiter\nline three\r\n")


# ---- gzip files (fuzz_gzip: a file starting with the magic is read as it is; any other input
# is a recipe byte, four bytes of places and a payload) ----
def gz_member(data, level=6, name=None, extra=None, comment=None, hcrc=False):
    """One gzip member written field by field (RFC 1952), so that headers gzip.compress never
    writes (extra fields, comments, a header CRC) are seeds too."""
    flg = (2 if hcrc else 0) | (4 if extra is not None else 0) | \
        (8 if name is not None else 0) | (16 if comment is not None else 0)
    head = b"\x1f\x8b\x08" + bytes([flg]) + b"\0\0\0\0" + b"\0\xff"
    if extra is not None:
        head += struct.pack("<H", len(extra)) + extra
    if name is not None:
        head += name + b"\0"
    if comment is not None:
        head += comment + b"\0"
    if hcrc:
        head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return head + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def gzip_hand(out):
    t = "gzip"
    text = json.dumps(kineto_trace(), indent=1).encode()
    one = gz_member(text)
    write(out, t, "one.gz", one)
    write(out, t, "members_padding.gz", gz_member(text[:500], 1) + b"\0\0\0" +
          gz_member(text[500:], 9) + b"\0")
    write(out, t, "stored.gz", gz_member(text[:2000], 0))
    write(out, t, "headers.gz", gz_member(text[:800], 6, name=b"trace.json", extra=b"AB\x02\0hi",
                                        comment=b"made by seeds.py", hcrc=True))
    write(out, t, "empty_first.gz", gz_member(b"") + gz_member(b"{}"))
    # headers zlib refuses: a reserved flag (ISA-L ignores it), a header CRC that does not match
    reserved = bytearray(gz_member(text[:400]))
    reserved[3] |= 0x40
    write(out, t, "reserved_flag.gz", bytes(reserved))
    hcrc = bytearray(gz_member(text[:400], name=b"n", hcrc=True))
    hcrc[12] ^= 1
    write(out, t, "header_crc_bad.gz", bytes(hcrc))
    write(out, t, "cut.gz", one[:len(one) // 2])
    write(out, t, "cut_trailer.gz", one[:-3])
    bad = bytearray(one)
    bad[-6] ^= 1
    write(out, t, "bad_crc.gz", bytes(bad))
    bad = bytearray(one)
    bad[-2] ^= 1
    write(out, t, "bad_isize.gz", bytes(bad))
    write(out, t, "garbage_after.gz", one + b"garbage!")
    write(out, t, "zlib_after.gz", gz_member(text[:300]) + zlib.compress(b"abc"))
    write(out, t, "lone_magic.gz", gz_member(text[:300]) + b"\x1f\x8b")
    # recipes: the first byte's bits (fuzz_gzip.c), four bytes of places, the payload
    write(out, t, "recipe_two_padded.bin", bytes([0x03 | 0x40, 90, 1, 0, 7]) + text[:3000])
    write(out, t, "recipe_flipped.bin", bytes([0x20 | 0x80, 0, 5, 1, 200]) + text[:3000])
    write(out, t, "recipe_cut_zlib.bin", bytes([0x18 | 0xC0, 17, 0, 0, 0]) + text[:3000])
    write(out, t, "recipe_garbage.bin", bytes([0x04 | 0x40, 0, 0, 0, 0]) + text[:200])


def hand(out, root):
    github_hand(out)
    wandb_hand(out)
    event_hand(out)
    chrome_hand(out)
    xplane_hand(out)
    thresholds_hand(out, root)
    marin_hand(out)
    history_hand(out)
    gzip_hand(out)


# ---- seeds cut from real profiles ----

def read_profile(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read(PREFIX_BYTES)


def top_level(text):
    """The top-level members of a JSON object (or a bare array) as far as the text goes:
    (header dict, events list). A cut-off text yields what was complete."""
    dec = json.JSONDecoder()
    ws = " \t\r\n"
    i = 0
    if text.startswith("\ufeff"):
        i = 1
    while i < len(text) and text[i] in ws:
        i += 1
    header, events = {}, []

    def read_array(i):
        i += 1
        while True:
            while i < len(text) and text[i] in ws + ",":
                i += 1
            if i >= len(text) or text[i] == "]":
                return i + 1
            try:
                v, i = dec.raw_decode(text, i)
            except ValueError:
                return len(text)
            events.append(v)

    if i < len(text) and text[i] == "[":
        read_array(i)
        return None, events
    if i >= len(text) or text[i] != "{":
        return None, None
    i += 1
    while i < len(text):
        while i < len(text) and text[i] in ws + ",":
            i += 1
        if i >= len(text) or text[i] == "}":
            break
        try:
            k, i = dec.raw_decode(text, i)
            while text[i] in ws + ":":
                i += 1
            if k == "traceEvents" and text[i] == "[":
                i = read_array(i)
                continue
            v, i = dec.raw_decode(text, i)
        except (ValueError, IndexError):
            break
        header[k] = v
    return header, events


def pick_events(events, per_group):
    keep = set()
    meta = [i for i, e in enumerate(events) if isinstance(e, dict) and e.get("ph") == "M"]
    keep.update(meta[:40])
    steps = [i for i, e in enumerate(events)
             if isinstance(e, dict) and "Step" in str(e.get("name", ""))]
    keep.update(steps[:6])
    groups = {}
    for i, e in enumerate(events):
        if isinstance(e, dict) and e.get("ph") != "M":
            groups.setdefault((str(e.get("ph")), str(e.get("cat"))), []).append(i)
    for _, idx in sorted(groups.items()):
        step = max(1, len(idx) // per_group)
        keep.update(idx[::step][:per_group])
    return [events[i] for i in sorted(keep)]


def cut_chrome(data):
    text = data.decode("utf-8", errors="replace")
    header, events = top_level(text)
    if events is None:
        return None
    for per_group in (24, 12, 6, 3, 1):
        chosen = pick_events(events, per_group)
        if header is None:
            doc = chosen
        else:
            doc = {}
            for k, v in header.items():
                if isinstance(v, list):
                    v = v[:4]
                doc[k] = v
            doc["traceEvents"] = chosen
        out = dumps(doc).encode()
        if len(out) <= MAX_JSON:
            return out
    return out[:MAX_JSON]


def stat_ids(msg, stats_field):
    """metadata ids of the XStats in field stats_field of msg."""
    ids = set()
    for fn, wt, v, _ in fields(msg):
        if fn == stats_field and wt == 2:
            for sfn, swt, sv, _ in fields(v):
                if sfn == 1 and swt == 0:
                    ids.add(sv)
    return ids


def map_key(entry):
    for fn, wt, v, _ in fields(entry):
        if fn == 1 and wt == 0:
            return v
    return None


def cut_xplane(data, per_line, max_lines=24):
    """Keep per_line events of at most max_lines lines per plane, and only the event and stat
    metadata they use; every other field as it is."""
    planes, rest = [], b""
    for fn, wt, v, raw in fields(data):
        if fn == 1 and wt == 2:
            planes.append(v)
        else:
            rest += raw
    out = b""
    for p in planes:
        head, lines, evmeta, statmeta, pstats = b"", [], {}, {}, b""
        used_ev, used_stat = set(), set()
        for fn, wt, v, raw in fields(p):
            if fn == 3 and wt == 2:
                if len(lines) >= max_lines:
                    continue
                body, n = b"", 0
                for lfn, lwt, lv, lraw in fields(v):
                    if lfn == 4 and lwt == 2:
                        if n >= per_line:
                            continue
                        n += 1
                        used_ev.add(map_key(lv))
                        used_stat |= stat_ids(lv, 4)
                    body += lraw
                lines.append(f_bytes(3, body))
            elif fn == 4 and wt == 2:
                evmeta[map_key(v)] = raw
            elif fn == 5 and wt == 2:
                statmeta[map_key(v)] = raw
            elif fn == 6 and wt == 2:
                pstats += raw
                used_stat |= stat_ids(f_bytes(6, v), 6)
            else:
                head += raw
        kept_ev = []
        for mid in sorted(k for k in evmeta if k in used_ev):
            raw = evmeta[mid]
            for efn, ewt, ev, _ in fields(raw):
                if efn == 2 and ewt == 2:
                    used_stat |= stat_ids(ev, 5)
            kept_ev.append(raw)
        kept_stat = [statmeta[k] for k in sorted(k for k in statmeta if k in used_stat)]
        body = head + b"".join(kept_stat) + pstats + b"".join(lines) + b"".join(kept_ev)
        out += f_bytes(1, body)
    return out + rest


def corpus(out, dirs):
    n = 0
    for top in dirs:
        if not os.path.isdir(top):
            print("seeds: %s: absent, skipped" % top, file=sys.stderr)
            continue
        for d, _, files in sorted(os.walk(top)):
            for name in sorted(files):
                path = os.path.join(d, name)
                tag = hashlib.sha256(path.encode()).hexdigest()[:8] + "-" + name[:60]
                try:
                    if name.endswith(".xplane.pb"):
                        with open(path, "rb") as f:
                            data = f.read()
                        try:
                            seed = None
                            for per_line, lines in ((16, 24), (4, 12), (1, 6), (0, 2)):
                                seed = cut_xplane(data, per_line, lines)
                                if len(seed) <= MAX_XPLANE:
                                    break
                        except (ValueError, IndexError):
                            seed = data[:MAX_XPLANE]  # not wire format: its first bytes
                        write(out, "xplane", tag, seed[:MAX_XPLANE])
                        n += 1
                    elif (name.endswith(".json") or name.endswith(".json.gz")) and \
                            name != "manifest.json":
                        seed = cut_chrome(read_profile(path))
                        if seed:
                            write(out, "chrome_json", tag, seed)
                            n += 1
                except (OSError, EOFError, zlib.error) as e:
                    print("seeds: %s: %s, skipped" % (path, e), file=sys.stderr)
    print("seeds: %d seeds from %s" % (n, " ".join(dirs)), file=sys.stderr)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "hand":
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        hand(sys.argv[2], root)
    elif len(sys.argv) >= 4 and sys.argv[1] == "corpus":
        corpus(sys.argv[2], sys.argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
