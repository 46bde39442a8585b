-- Like post.lua, but every request carries a different X-Forwarded-For address (10.x.y.z, from
-- BENCH_ADDRESS_OFFSET on; each thread takes its own block of 2^20), so a server that trusts the
-- loopback proxy sees each request come from a new client. Response statuses are counted.
local body = os.getenv("BENCH_BODY")
local offset = tonumber(os.getenv("BENCH_ADDRESS_OFFSET") or "0")
local headers = {
  ["Content-Type"] = "application/json",
  ["Authorization"] = os.getenv("BENCH_AUTHORIZATION"),
}
local next_index = 0
local thread_count = 0
bench_statuses = {}

function setup(thread)
  thread:set("bench_thread_index", thread_count)
  thread_count = thread_count + 1
end

function init(args)
  next_index = offset + (bench_thread_index or 0) * 1048576
end

function request()
  local i = next_index
  next_index = next_index + 1
  headers["X-Forwarded-For"] = string.format("10.%d.%d.%d",
    math.floor(i / 65536) % 256, math.floor(i / 256) % 256, i % 256)
  return wrk.format("POST", nil, headers, body)
end

function response(status, response_headers, response_body)
  bench_statuses[status] = (bench_statuses[status] or 0) + 1
end
