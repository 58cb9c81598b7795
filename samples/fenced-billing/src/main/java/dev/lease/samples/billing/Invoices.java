package dev.lease.samples.billing;

import java.sql.PreparedStatement;
import java.util.List;
import java.util.Objects;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;

/**
 * The invoices, JPA entities ({@link Invoice}) whose {@code fence} column holds the highest token that wrote each
 * row, and the {@code charge} table, one row per charge sent to the customer.
 */
@Repository
public class Invoices {

    private final JdbcTemplate jdbc;

    @PersistenceContext
    private EntityManager entityManager;

    Invoices(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Records the billing of an invoice in one transaction of the leased section the caller is in, which fails as a
     * whole with {@link dev.lease.fence.StaleTokenException} when a later holder of the invoice's lease already wrote
     * it: the invoice is changed by dirty checking, and its {@code @FenceColumn} checks and carries the token when
     * the transaction flushes.
     */
    @Transactional
    public void recordBilling(long invoiceId, long amountCents, String instance) {
        FencingToken token = LeaseContext.token();
        entityManager.find(Invoice.class, invoiceId).bill(instance);
        jdbc.update("INSERT INTO charge (invoice_id, amount_cents, instance, token) VALUES (?, ?, ?, ?)",
                invoiceId, amountCents, instance, token.value());
    }

    /**
     * Opens a new invoice and returns its id. Not leased work: a plain insert, with no fence yet (NULL counts as 0),
     * like any writer of the table that JPA does not see.
     */
    public long open(String customer, long amountCents) {
        KeyHolder key = new GeneratedKeyHolder();
        jdbc.update(c -> {
            PreparedStatement insert = c.prepareStatement(
                    "INSERT INTO invoice (customer, amount_cents, status) VALUES (?, ?, 'OPEN')", new String[] {"id"});
            insert.setString(1, customer);
            insert.setLong(2, amountCents);
            return insert;
        }, key);
        return Objects.requireNonNull(key.getKey(), "generated invoice id").longValue();
    }

    /** The invoice with this id, as the database has it now (detached). */
    @Transactional(readOnly = true)
    public Invoice find(long invoiceId) {
        return entityManager.find(Invoice.class, invoiceId);
    }

    /** The charges sent for an invoice: more than one means it was billed twice. */
    public List<Charge> charges(long invoiceId) {
        return jdbc.query("SELECT invoice_id, amount_cents, instance, token FROM charge WHERE invoice_id = ? ORDER BY id",
                (rs, i) -> new Charge(rs.getLong("invoice_id"), rs.getLong("amount_cents"), rs.getString("instance"),
                        rs.getLong("token")), invoiceId);
    }

    /** Ids of invoices with more than one charge; empty unless something billed twice. */
    public List<Long> billedTwice() {
        return jdbc.queryForList("SELECT invoice_id FROM charge GROUP BY invoice_id HAVING COUNT(*) > 1", Long.class);
    }

    /**
     * A row of the {@code charge} table.
     *
     * @param token the fencing token the charge was written with
     */
    public record Charge(long invoiceId, long amountCents, String instance, long token) {
    }
}
