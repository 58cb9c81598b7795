-- The invoices this service bills, and the fence table R2dbcFence keeps (R2dbcFence.createSchema() creates it too).
CREATE TABLE IF NOT EXISTS invoice (id BIGINT PRIMARY KEY, state VARCHAR(20) NOT NULL, billed_token BIGINT);
CREATE TABLE IF NOT EXISTS lease_fence (resource VARCHAR(255) NOT NULL PRIMARY KEY, fence BIGINT NOT NULL);
