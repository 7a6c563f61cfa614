-- corobench result store, schema 7.
-- The machine-speed probe run before each trial (a fixed SHA-256 job on the
-- server's CPUs and on the generator's), as JSON: {"server_mb_per_s",
-- "generator_mb_per_s"}. NULL when the run turned the probe off, for trials
-- on other hosts, and in trials stored before schema 5.
ALTER TABLE trials ADD COLUMN probe_json TEXT;
