package dev.lease.benchmarks;

import java.util.concurrent.atomic.AtomicLong;

import dev.lease.LeaseKind;
import dev.lease.Leased;

/** The beans whose {@code @Leased} methods the harness calls, one per lease kind, plus a plain twin. */
final class LeasedService {

    private LeasedService() {
    }

    /** What every method does: nearly nothing, so that the call's cost is the lease's. */
    static final AtomicLong WORK = new AtomicLong();

    /** For fenced backends (ZooKeeper, JDBC, in-memory). */
    static class Fenced {
        @Leased(name = "#{#key}", kind = LeaseKind.CORRECTNESS, ttl = "10s", waitFor = "30s")
        public long work(String key) {
            return WORK.incrementAndGet();
        }
    }

    /** For Redis, which may only serve EFFICIENCY leases. */
    static class Efficiency {
        @Leased(name = "#{#key}", kind = LeaseKind.EFFICIENCY, ttl = "10s", waitFor = "30s")
        public long work(String key) {
            return WORK.incrementAndGet();
        }
    }

    /** The same work without a lease, for the interceptor's overhead. */
    static class Plain {
        public long work(String key) {
            return WORK.incrementAndGet();
        }
    }
}
