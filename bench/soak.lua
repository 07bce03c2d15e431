-- wrk script of bench/soak.sh: a fixed request rate, and every answer
-- classified by status and by its Warning header.
--
--   wrk -tT -cC -dD --timeout 30s -s bench/soak.lua URL -- RATE T
--
-- RATE is requests per second for the whole run, split over wrk's T threads;
-- 0 runs a closed loop (every connection sends again as soon as it is
-- answered), which is how soak.sh measures the peak. done() prints one line
-- "soak: key=value ..." that soak.sh reads.
--
-- Why wrk with this script rather than hey: hey holds a rate (-q per worker)
-- but cannot count Warning headers, and its Go TLS client costs more cpu on
-- this 2-core machine than wrk; wrk has no rate option, but its delay() hook
-- runs before every request, and with a monotonic clock (LuaJIT's ffi) it
-- hands out send times one interval apart, so the rate holds as long as one
-- of the connections is free. Latency is wrk's own: from writing a request to
-- its answer (a request that waited for a free connection is not charged for
-- the wait), which is why soak.sh prints the achieved rate beside it.

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } soak_timespec;
  int clock_gettime(int clock_id, soak_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local ts = ffi.new("soak_timespec")
local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

-- A thread that fell further behind its schedule than this (every
-- connection busy, e.g. a member black-holed until the deadline) drops the
-- missed send times instead of sending them in one burst afterwards: the
-- shortfall shows in the achieved rate, not as a spike after the fault.
local MAX_LAG_MS = 1000

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

-- Per thread (each has its own Lua state).
local interval_ms = 0
local next_due = nil
codes = {}   -- status -> answers
warned = 0   -- 200 answers with a Warning header (a member left out)

function init(args)
  local rate = tonumber(args[1] or "0") or 0
  local nthreads = tonumber(args[2] or "1") or 1
  if rate > 0 then interval_ms = 1000 * nthreads / rate end
end

function delay()
  if interval_ms == 0 then return 0 end
  local now = now_ms()
  if next_due == nil or next_due < now - MAX_LAG_MS then next_due = now end
  local wait = next_due - now
  next_due = next_due + interval_ms
  -- wrk truncates to whole milliseconds: a request goes out at most 1 ms
  -- early, and the send times stay one interval apart on average.
  if wait < 0 then return 0 end
  return wait
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
  if status == 200 and (headers["Warning"] or headers["warning"]) then warned = warned + 1 end
end

function done(summary, latency, requests)
  local all = {}
  local total_warned = 0
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("codes")) do all[status] = (all[status] or 0) + n end
    total_warned = total_warned + t:get("warned")
  end
  local counted, ok, non200, list = 0, 0, 0, {}
  for status, n in pairs(all) do
    counted = counted + n
    if status == 200 then ok = ok + n else non200 = non200 + n end
    table.insert(list, status .. ":" .. n)
  end
  table.sort(list)
  local e = summary.errors
  io.write(string.format(
    "soak: duration_us=%d requests=%d answers=%d ok=%d warned=%d non200=%d connect=%d read=%d write=%d timeout=%d " ..
    "p50_us=%d p99_us=%d max_us=%d codes=%s\n",
    summary.duration, summary.requests, counted, ok, total_warned, non200, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max, table.concat(list, ",")))
end
