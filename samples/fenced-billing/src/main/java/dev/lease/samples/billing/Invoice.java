package dev.lease.samples.billing;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;

import dev.lease.fence.jpa.FenceColumn;

/**
 * An invoice, a JPA entity of the {@code invoice} table. Its {@link FenceColumn} makes every write of it through JPA
 * carry the token of the lease the writing thread holds, and refuses it when a later holder already wrote the row.
 */
@Entity
public class Invoice {

    @Id
    private long id;

    private String customer;

    @Column(name = "amount_cents")
    private long amountCents;

    private String status;

    @Column(name = "billed_by")
    private String billedBy;

    /** The highest fencing token that wrote this row; null before its first fenced write. */
    @FenceColumn
    private Long fence;

    protected Invoice() {
    }

    public long id() {
        return id;
    }

    public String customer() {
        return customer;
    }

    public long amountCents() {
        return amountCents;
    }

    public String status() {
        return status;
    }

    public String billedBy() {
        return billedBy;
    }

    public Long fence() {
        return fence;
    }

    /** Whether the invoice was billed already. */
    public boolean isBilled() {
        return "BILLED".equals(status);
    }

    /** Marks the invoice billed by {@code instance}; the write happens when the transaction flushes. */
    void bill(String instance) {
        this.status = "BILLED";
        this.billedBy = instance;
    }
}
