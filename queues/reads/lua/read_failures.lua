--[[
  Read what names a failed job's group: its failed reason, and pieces of its last attempt's
  stack trace, however long the trace is, at a bounded cost per job.
  KEYS[i]   job hash keys
  ARGV[1]   longest failed reason returned whole, in bytes
  ARGV[2]   longest piece of stack trace returned, in bytes
  ARGV[3]   how far back from the end of the stack trace the last attempt is looked for

  BullMQ keeps one stack trace per attempt in a JSON array ("stacktrace"), the newest last.
  Python puts a traceback's innermost frame last, Node puts it first, so three pieces of the
  last attempt's text are returned, still JSON-escaped:
    head    its beginning (a Node stack's innermost frames, or a trace with no frames at all)
    node    from its first Node frame ("\n    at "), when the message before it is long
    python  the end of its frames: a piece ending a little after its last Python frame
  Returns, per key: { reason or false, head, node, python } (false for a missing piece), or
  false for a key that is gone or not a hash.
]]
local reason_cap = tonumber(ARGV[1])
local piece = tonumber(ARGV[2])
local reach = tonumber(ARGV[3])

local function escaped(text, at)
  -- Whether the quote at ``at`` is escaped: an odd run of backslashes before it.
  local count = 0
  local i = at - 1
  while i >= 1 and string.byte(text, i) == 92 do
    count = count + 1
    i = i - 1
  end
  return count % 2 == 1
end

local function last_attempt(trace)
  -- First and last byte of the last array element's text (between its quotes).
  local stop = #trace
  while stop >= 1 do
    local byte = string.byte(trace, stop)
    if byte == 93 or byte == 32 or byte == 10 or byte == 13 or byte == 9 then
      stop = stop - 1  -- "]" and white space after the last element
    else
      break
    end
  end
  if stop < 1 or string.byte(trace, stop) ~= 34 then
    return 1, #trace  -- not an array of strings: read it as plain text
  end
  stop = stop - 1
  local from = math.max(1, stop - reach)
  local start = nil
  local at = from
  while true do
    local first, last = string.find(trace, '"%s*,%s*"', at)
    if not first or first > stop then
      break
    end
    if not escaped(trace, first) then
      start = last + 1
    end
    at = first + 1
  end
  if not start then
    if from == 1 then
      start = (string.find(trace, '"', 1, true) or 0) + 1  -- the only element
    else
      start = from  -- longer than the reach: its last part only
    end
  end
  return start, stop
end

local function pieces(trace)
  local start, stop = last_attempt(trace)
  local head = string.sub(trace, start, math.min(stop, start + piece - 1))
  local node = false
  local near = string.sub(trace, start, math.min(stop, start + reach - 1))
  local frame = string.find(near, "\\n    at ", 1, true)
  if frame and frame > math.floor(piece / 2) then
    node = string.sub(trace, start + frame - 1, math.min(stop, start + frame - 2 + piece))
  end
  local python = false
  local at = math.max(start, stop - reach)
  local last_file = nil
  while true do
    local found = string.find(trace, 'File \\"', at, true)
    if not found or found > stop then
      break
    end
    last_file = found
    at = found + 1
  end
  if last_file then
    local finish = math.min(stop, last_file + math.floor(piece / 4))
    python = string.sub(trace, math.max(start, finish - piece + 1), finish)
  end
  return head, node, python
end

local out = {}
for i, key in ipairs(KEYS) do
  local values = redis.pcall("HMGET", key, "failedReason", "stacktrace")
  if values.err or (not values[1] and not values[2]) then
    out[i] = false
  else
    local reason = values[1]
    if reason and #reason > reason_cap then
      reason = string.sub(reason, 1, reason_cap)
    end
    local head, node, python = false, false, false
    if values[2] then
      head, node, python = pieces(values[2])
    end
    out[i] = { reason or false, head, node, python }
  end
end
return out
