-- The effect of PeriodCloseJob; no unique key on purpose: a second close of a period would show as a second row.
CREATE TABLE IF NOT EXISTS period_close (
    id        BIGINT AUTO_INCREMENT PRIMARY KEY,
    closed_by VARCHAR(64)              NOT NULL,
    closed_at TIMESTAMP WITH TIME ZONE NOT NULL
);
