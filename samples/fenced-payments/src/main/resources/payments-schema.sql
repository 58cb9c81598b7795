CREATE TABLE IF NOT EXISTS payment (
    id       IDENTITY PRIMARY KEY,
    invoice  BIGINT       NOT NULL,
    amount   BIGINT       NOT NULL,
    paid_for VARCHAR(40)  NOT NULL
);
