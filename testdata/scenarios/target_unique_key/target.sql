-- The target has a unique key the source lacks.
ALTER TABLE tu.t ADD UNIQUE KEY (v);
