-- corobench result store, schema 8.
-- The target's database pool as its /stats told it before the trial's load
-- and after (`trials.pool_json`): {"before": {...}, "after": {...}}, each
-- with the pool's size and counters (acquires, new_connections,
-- empty_acquires, acquire_wait_us, ...), null where the pool cannot say.
-- NULL for targets that report no pool, and in trials stored before schema 8.
ALTER TABLE trials ADD COLUMN pool_json TEXT;
