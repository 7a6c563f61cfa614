-- corobench result store, schema 4.
-- The req/s precision a run aimed for (`until_ci`, a `budget`, or their
-- flags), recorded as the run started, so a report does not have to read it
-- back out of the spec text. NULL in runs stored before schema 4.
ALTER TABLE runs ADD COLUMN precision_goal_json TEXT;
