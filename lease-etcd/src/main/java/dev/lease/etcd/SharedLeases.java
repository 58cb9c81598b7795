package dev.lease.etcd;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;

/**
 * The etcd leases of one backend: one per ttl (in etcd's whole seconds), shared by every grant of that ttl, so that
 * keeping ten thousand grants alive costs one keep-alive per ttl, not ten thousand short streams (jetcd opens one per
 * {@code keepAliveOnce}), and a grant costs no {@code LeaseGrant} and a release no {@code LeaseRevoke} while other
 * grants of its ttl are held.
 *
 * <p>A lease counts its users: the grants held on it and the grant requests in flight with it. The last user to leave
 * revokes it, which deletes every key still bound to it; none of them belongs to a grant anyone holds. A lease that
 * cannot be trusted to live (a grant request abandoned with it, a keep-alive answered "not found", or no keep-alive
 * known to have been answered within its ttl) is retired: it takes no new user, and goes with its last one.
 *
 * <p>A keep-alive is shared too: whoever needs the lease kept alive from a time on gets the keep-alive already on its
 * way if it was sent at or after that time, else a new one. jetcd's own keep-alive loop is not used: it decides when
 * to send on the wall clock, and ends a lease's keep-alives when a wall-clock deadline passes.
 */
final class SharedLeases {

    /** One etcd lease and its users. Mutable fields are guarded by the {@link SharedLeases}' lock. */
    static final class Shared {

        final long id;
        final long ttlSeconds;
        private int users = 1;
        /** When the last answered grant or keep-alive of it was sent (System.nanoTime): it lives a ttl from then. */
        private long aliveFrom;
        private long keepAliveSentAt;
        private CompletableFuture<LeaseKeepAliveResponse> keepAlive;

        private Shared(long id, long ttlSeconds, long aliveFrom) {
            this.id = id;
            this.ttlSeconds = ttlSeconds;
            this.aliveFrom = aliveFrom;
        }

        @Override
        public String toString() {
            return "etcd lease " + Long.toHexString(id) + " (ttl " + ttlSeconds + " s)";
        }
    }

    private final Lease leases;
    private final LongConsumer revoked;
    private final Object lock = new Object();
    /** The lease new grants of each ttl join; none once it is retired. */
    private final Map<Long, Shared> current = new HashMap<>();

    /**
     * @param revoked told the id of every lease revoked because its last user left: the keys bound to it are gone
     */
    SharedLeases(Lease leases, LongConsumer revoked) {
        this.leases = leases;
        this.revoked = revoked;
    }

    /**
     * Joins the current lease of {@code ttlSeconds} as one more user, unless there is none, or it is not known alive
     * at {@code now}.
     *
     * @return the lease joined, or null: the caller grants a lease and {@link #adopt}s it
     */
    Shared join(long ttlSeconds, long now) {
        synchronized (lock) {
            Shared lease = current.get(ttlSeconds);
            if (lease == null) {
                return null;
            }
            if (now - lease.aliveFrom - TimeUnit.SECONDS.toNanos(ttlSeconds) >= 0) {
                // Nothing proves it alive now (its keep-alives failed or nobody renewed): a grant on it could fail.
                retireLocked(lease);
                return null;
            }
            lease.users++;
            return lease;
        }
    }

    /**
     * Takes a lease the caller was just granted, with the caller as its one user; it becomes the current lease of its
     * ttl unless another request made one meanwhile.
     *
     * @param sentAt when its {@code LeaseGrant} was sent (System.nanoTime)
     */
    Shared adopt(long leaseId, long ttlSeconds, long sentAt) {
        Shared lease = new Shared(leaseId, ttlSeconds, sentAt);
        synchronized (lock) {
            // When another request's lease became current meanwhile, this one serves the caller alone.
            current.putIfAbsent(ttlSeconds, lease);
        }
        return lease;
    }

    /** The lease takes no new users; it goes with its last one. */
    void retire(Shared lease) {
        synchronized (lock) {
            retireLocked(lease);
        }
    }

    /** One user fewer; the last one revokes the lease (a failed revoke leaves it to its ttl: nobody keeps it alive). */
    void leave(Shared lease) {
        synchronized (lock) {
            if (--lease.users > 0) {
                return;
            }
            retireLocked(lease);
        }
        revoked.accept(lease.id);
        leases.revoke(lease.id);
    }

    /**
     * A keep-alive of the lease sent no earlier than {@code since} (System.nanoTime): the one on its way if it was, else
     * a new one. The caller gets a copy, which it may cancel without cancelling it for the others.
     */
    CompletableFuture<LeaseKeepAliveResponse> keepAlive(Shared lease, long since) {
        CompletableFuture<LeaseKeepAliveResponse> sent;
        long sentAt;
        synchronized (lease) {
            sent = lease.keepAlive;
            if (sent != null && lease.keepAliveSentAt - since >= 0 && !sent.isCompletedExceptionally()) {
                return sent.copy();
            }
            sentAt = System.nanoTime();
            sent = leases.keepAliveOnce(lease.id);
            lease.keepAlive = sent;
            lease.keepAliveSentAt = sentAt;
        }
        sent.thenAccept(answer -> {
            synchronized (lock) {
                if (sentAt - lease.aliveFrom > 0) {
                    lease.aliveFrom = sentAt;
                }
            }
        });
        return sent.copy();
    }

    /** The number of leases that take new grants now; for tests. */
    int currentCount() {
        synchronized (lock) {
            return current.size();
        }
    }

    private void retireLocked(Shared lease) {
        current.remove(lease.ttlSeconds, lease);
    }
}
