-- A CHECK constraint the target has and the source does not.
ALTER TABLE tc.t ADD CONSTRAINT v_small CHECK (v < 100);
