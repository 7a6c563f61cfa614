-- corobench result store, schema 3.
-- A run may search capacity (`[capacity]` in its spec): `runs.capacity_json`
-- holds the objectives and search settings it ran with. Its scenarios are
-- open loops, one per rate tried; the runner adds them as the search goes,
-- so a run's scenarios may grow while it is measured.
ALTER TABLE runs ADD COLUMN capacity_json TEXT;
