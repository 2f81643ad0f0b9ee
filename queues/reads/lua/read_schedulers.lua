--[[
  A queue's job schedulers with the state of each one's next job and the last jobs it made, in
  one call: the schedulers page reads every queue that has any with one call each.
  KEYS[1]  the queue's repeat sorted set (member: scheduler id, score: its next run in ms)
  KEYS[2]  delayed   KEYS[3] prioritized   KEYS[4] completed   KEYS[5] failed   KEYS[6] active
  ARGV[1]  the queue's key prefix, "<prefix>:<queue>:" (job hashes and scheduler hashes)
  ARGV[2]  how many schedulers to read, the next to run first
  ARGV[3]  how many of the newest completed, failed and active jobs to look through for the
           jobs the schedulers made (a bound on the cost)
  ARGV[4]  how many of those to keep per scheduler, the newest first
  Returns one row per scheduler: {id, next run, its hash as field/value pairs, the state of
  its next job, {job id, state, finishedOn, ...} of the last jobs it made}. BullMQ names a
  scheduler's job "repeat:<scheduler id>:<run in ms>"; the state of one that is gone is
  "missing". Every key is the queue's own (one hash tag on a Redis Cluster).
]]
local prefix = ARGV[1]
local window = tonumber(ARGV[3])
local keep = tonumber(ARGV[4])

local function state_of(job_id)
  if redis.call("EXISTS", prefix .. job_id) == 0 then return "missing" end
  if redis.call("ZSCORE", KEYS[2], job_id) then return "delayed" end
  if redis.call("ZSCORE", KEYS[3], job_id) then return "prioritized" end
  if redis.call("ZSCORE", KEYS[4], job_id) then return "completed" end
  if redis.call("ZSCORE", KEYS[5], job_id) then return "failed" end
  if redis.call("HEXISTS", prefix .. job_id, "processedOn") == 1 then return "active" end
  return "waiting"
end

local entries = redis.call("ZRANGE", KEYS[1], 0, tonumber(ARGV[2]) - 1, "WITHSCORES")
if #entries == 0 then return {} end
local wanted = {}
for i = 1, #entries, 2 do wanted[entries[i]] = {} end

-- The jobs the schedulers made, found by their ids among the newest finished and active jobs.
local function collect(ids, state)
  for _, job_id in ipairs(ids) do
    local scheduler, millis = string.match(job_id, "^repeat:(.*):(%d+)$")
    if scheduler and wanted[scheduler] then
      table.insert(wanted[scheduler], {tonumber(millis), job_id, state})
    end
  end
end
collect(redis.call("ZREVRANGE", KEYS[4], 0, window - 1), "completed")
collect(redis.call("ZREVRANGE", KEYS[5], 0, window - 1), "failed")
collect(redis.call("LRANGE", KEYS[6], 0, window - 1), "active")

local rows = {}
for i = 1, #entries, 2 do
  local id, score = entries[i], entries[i + 1]
  local made = wanted[id]
  table.sort(made, function(a, b) return a[1] > b[1] end)
  local last = {}
  for j = 1, math.min(keep, #made) do
    local finished = redis.call("HGET", prefix .. made[j][2], "finishedOn") or ""
    table.insert(last, made[j][2])
    table.insert(last, made[j][3])
    table.insert(last, finished)
  end
  local fields = redis.call("HGETALL", KEYS[1] .. ":" .. id)
  local next_state = ""
  if #fields > 0 then
    next_state = state_of("repeat:" .. id .. ":" .. score)
  end
  table.insert(rows, {id, score, fields, next_state, last})
end
return rows
