--[[
  Count a queue's stuck jobs: in the active list with no lock. A worker holds a lock on every
  job it runs and renews it; a job whose worker died keeps its place in the active list until a
  stalled check (run by a live worker) moves it, and until then nobody will finish it.
  KEYS[1]  the queue's active list
  ARGV[1]  the queue's key prefix, "<prefix>:<queue>:" (a job's lock is <prefix>:<queue>:<id>:lock)
  ARGV[2]  how many of the active jobs to look at, from the oldest (a bound on the cost)
  Returns the number of those without a lock. The lock keys share the queue's keys' hash tag
  (BullMQ asks for one on a Redis Cluster), so they live where the list does.
]]
local ids = redis.call("LRANGE", KEYS[1], -tonumber(ARGV[2]), -1)
local stuck = 0
for _, id in ipairs(ids) do
  if redis.call("EXISTS", ARGV[1] .. id .. ":lock") == 0 then
    stuck = stuck + 1
  end
end
return stuck
