package dev.lease.fence.jpa.app;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Version;

import dev.lease.fence.jpa.FenceColumn;

/** A fenced entity that also has optimistic locking: both checks must hold. */
@Entity
public class VersionedInvoice {

    @Id
    private Long id;

    private String state;

    @Version
    private long version;

    @FenceColumn
    private Long fence;

    protected VersionedInvoice() {
    }

    public VersionedInvoice(long id, String state) {
        this.id = id;
        this.state = state;
    }

    public void setState(String state) {
        this.state = state;
    }

    public String getState() {
        return state;
    }

    public long getVersion() {
        return version;
    }

    public Long getFence() {
        return fence;
    }
}
