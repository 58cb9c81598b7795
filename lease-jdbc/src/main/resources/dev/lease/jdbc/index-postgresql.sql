-- Created with the table when lease.jdbc.delete-idle-after is set (create it yourself when you manage the schema):
-- the deletion of idle rows finds them by expires_at instead of scanning, and locking, the whole table. Without
-- deletion it is left out, since every renewal changes expires_at and would have to update it too.
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires_at);
