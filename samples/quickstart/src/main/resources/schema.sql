CREATE TABLE account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL);
INSERT INTO account (id, balance) VALUES (1, 0);
