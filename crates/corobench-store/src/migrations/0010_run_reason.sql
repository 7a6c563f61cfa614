-- corobench result store, schema 10.
-- Why a run ended before its plan did (`interrupted` or `failed`), in the
-- words of the error that ended it: a trial the store could not keep (a
-- database locked by another process), say. NULL for runs that ended as
-- planned, are still running, or were stored before schema 10.
ALTER TABLE runs ADD COLUMN status_reason TEXT;
