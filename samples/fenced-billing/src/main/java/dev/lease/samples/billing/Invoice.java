package dev.lease.samples.billing;

/**
 * A row of the {@code invoice} table.
 *
 * @param fence the highest fencing token that wrote this row, or {@code null} before its first fenced write
 */
public record Invoice(long id, String customer, long amountCents, String status, String billedBy, Long fence) {

    /** Whether the invoice was billed already. */
    public boolean isBilled() {
        return "BILLED".equals(status);
    }
}
