package dev.lease.fence.jpa.app;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;

import dev.lease.fence.jpa.FenceColumn;

/** A fenced entity with an assigned id, so that a new entity can collide with a row a newer token wrote. */
@Entity
public class Invoice {

    @Id
    private Long id;

    private String state;

    private long amount;

    @FenceColumn
    private long fence;

    protected Invoice() {
    }

    public Invoice(long id, String state, long amount) {
        this.id = id;
        this.state = state;
        this.amount = amount;
    }

    public Long getId() {
        return id;
    }

    public String getState() {
        return state;
    }

    public void setState(String state) {
        this.state = state;
    }

    public long getAmount() {
        return amount;
    }

    public void setAmount(long amount) {
        this.amount = amount;
    }

    public long getFence() {
        return fence;
    }
}
