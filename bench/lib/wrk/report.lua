-- Appended to every load script by bench/lib/wrk.ts: after the run, one line
-- "BENCH_RESULT {json}" with the totals, the latency distribution (microseconds) and, when the
-- script counts them in bench_statuses, the response statuses.
local bench_threads = {}
local bench_script_setup = setup

function setup(thread)
  table.insert(bench_threads, thread)
  if bench_script_setup then bench_script_setup(thread) end
end

function done(summary, latency, requests)
  local statuses = {}
  for _, thread in ipairs(bench_threads) do
    local counted = thread:get("bench_statuses")
    if type(counted) == "table" then
      for status, n in pairs(counted) do statuses[status] = (statuses[status] or 0) + n end
    end
  end
  local status_parts = {}
  for status, n in pairs(statuses) do
    table.insert(status_parts, string.format('"%d":%d', status, n))
  end
  local percentile_parts = {}
  for _, p in ipairs({ 50, 75, 90, 99, 99.9 }) do
    table.insert(percentile_parts, string.format('"%g":%.0f', p, latency:percentile(p)))
  end
  local e = summary.errors
  io.write(string.format(
    '\nBENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%.0f,"max":%.0f,"mean":%.1f,"stdev":%.1f,"percentiles":{%s}},"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.max, latency.mean, latency.stdev,
    table.concat(percentile_parts, ","), table.concat(status_parts, ",")))
end
