package dev.lease.samples.billing;

import java.sql.PreparedStatement;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.GeneratedKeyHolder;
import org.springframework.jdbc.support.KeyHolder;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.annotation.Transactional;

import dev.lease.FencingToken;
import dev.lease.fence.FencedTable;
import dev.lease.fence.JdbcFence;

/**
 * The {@code invoice} table, whose {@code fence} column holds the highest token that wrote each row, and the
 * {@code charge} table, one row per charge sent to the customer.
 */
@Repository
public class Invoices {

    private final JdbcTemplate jdbc;
    private final FencedTable invoiceRows;

    Invoices(JdbcTemplate jdbc, JdbcFence fence) {
        this.jdbc = jdbc;
        this.invoiceRows = fence.table("invoice", "id");
    }

    /**
     * Records the billing of an invoice in one transaction, which fails as a whole with
     * {@link dev.lease.fence.StaleTokenException} when a later holder of the invoice's lease already wrote it.
     */
    @Transactional
    public void recordBilling(long invoiceId, long amountCents, FencingToken token, String instance) {
        // First statement of the transaction: refused (StaleTokenException) if a later holder already wrote this row.
        invoiceRows.update(invoiceId, token, Map.of("status", "BILLED", "billed_by", instance));
        jdbc.update("INSERT INTO charge (invoice_id, amount_cents, instance, token) VALUES (?, ?, ?, ?)",
                invoiceId, amountCents, instance, token.value());
    }

    /** Opens a new invoice and returns its id. */
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

    /** The invoice with this id. */
    public Invoice find(long invoiceId) {
        return jdbc.queryForObject("SELECT id, customer, amount_cents, status, billed_by, fence FROM invoice WHERE id = ?",
                (rs, i) -> new Invoice(rs.getLong("id"), rs.getString("customer"), rs.getLong("amount_cents"),
                        rs.getString("status"), rs.getString("billed_by"), (Long) rs.getObject("fence", Long.class)),
                invoiceId);
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
