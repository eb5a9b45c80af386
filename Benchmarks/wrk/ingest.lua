-- wrk script: POST distinct bodies (notifications; realtime requests with POST_PATH), one per request, from BODIES_FILE (one JSON
-- body per line, made by `entitle-bench sign-notifications --out FILE`). Each wrk thread takes
-- every n-th line so no body is sent twice while the file lasts. Several wrk sharing one file
-- (one per instance) take disjoint parts: BODIES_PART=k/n gives this wrk every n-th body from
-- the k-th on, so no notification goes to two instances.
local bodies = {}
local next_index = 1
local stride = 1
local first = 1

function setup(thread)
  thread:set("thread_id", #threads_list + 1)
  table.insert(threads_list, thread)
end
threads_list = {}

function init(args)
  for line in io.lines(os.getenv("BODIES_FILE")) do bodies[#bodies + 1] = line end
  local part, parts = (os.getenv("BODIES_PART") or "1/1"):match("(%d+)/(%d+)")
  local threads = tonumber(os.getenv("WRK_THREADS") or "2")
  stride = threads * tonumber(parts)
  first = (tonumber(part) - 1) * threads + tonumber(thread_id or 1)
  next_index = first
end

function request()
  local body = bodies[next_index]
  if body == nil then
    next_index = first
    body = bodies[next_index]
  end
  next_index = next_index + stride
  return wrk.format("POST", os.getenv("POST_PATH") or "/v1/notifications/apple", {["Content-Type"] = "application/json"}, body)
end
