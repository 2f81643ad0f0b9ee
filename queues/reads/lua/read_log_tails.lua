--[[
  The newest log lines of each job, each line cut to a size: what a search's logs: term reads.
  A job's log may hold lines of any size; only their first part leaves Redis.
  KEYS     each job's log list (<prefix>:<queue>:<id>:logs)
  ARGV[1]  how many of the newest lines to read of each
  ARGV[2]  the most bytes of a line sent back
  Returns one list of lines per key, in the order of KEYS (empty for a job without a log).
]]
local count = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local rows = {}
for i, key in ipairs(KEYS) do
  local lines = {}
  if redis.call("TYPE", key)["ok"] == "list" then
    lines = redis.call("LRANGE", key, -count, -1)
    for j, line in ipairs(lines) do
      if #line > cap then
        lines[j] = string.sub(line, 1, cap)
      end
    end
  end
  rows[i] = lines
end
return rows
