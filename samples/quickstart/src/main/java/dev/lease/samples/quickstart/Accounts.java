package dev.lease.samples.quickstart;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.fence.JdbcFence;

/** The smallest fenced write: one writer per account at a time, and a holder that lost its lease cannot write late. */
@Service
public class Accounts {

    private final JdbcTemplate jdbc;
    private final JdbcFence fence;

    public Accounts(JdbcTemplate jdbc, JdbcFence fence) {
        this.jdbc = jdbc;
        this.fence = fence;
    }

    @Leased(name = "account-#{#id}", kind = LeaseKind.CORRECTNESS, waitFor = "10s", fence = "account-#{#id}")
    @Transactional
    public void deposit(long id, long cents) {
        // Refused with StaleTokenException if a later holder of this lease has written already.
        fence.advance("account-" + id, LeaseContext.token());
        long balance = jdbc.queryForObject("SELECT balance FROM account WHERE id = ?", Long.class, id);
        jdbc.update("UPDATE account SET balance = ? WHERE id = ?", balance + cents, id);
    }

    public long balance(long id) {
        return jdbc.queryForObject("SELECT balance FROM account WHERE id = ?", Long.class, id);
    }
}
