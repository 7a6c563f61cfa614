-- corobench result store, schema 5.
-- What the kernel counted per trial (system calls, context switches, minor
-- page faults) for the server's process tree and the generator's threads,
-- and the counters it refused with the reason: `trials.counters_json`.
-- NULL in trials stored before schema 5, in program trials and in trials
-- measured on another host.
ALTER TABLE trials ADD COLUMN counters_json TEXT;
